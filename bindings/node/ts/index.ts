// The package: TypeScript on ioredis, no native code (the API the earlier napi addon had, its
// names corrected by the vocabulary table). Each primitive runs the library's scripts (the generated layer in
// scripts.ts) with the library's key layout and retry rules.
export { Client } from './client.js'
export type { BatchStats, BatchingOptions, ClientOptions, ReplicaOptions, RetryOptions } from './client.js'
export type { TlsConfig } from './connection.js'
export {
  AbortedError, BadArgumentError, BadReplyError, ClientError, ConnectionError, CostExceedsBurstError, CrossSlotError,
  HandleEndedError, LeaseLostError, NotReplicatedError, NotSentError, OutcomeUnknownError, RedisAtomicError, RejectedError,
  ServerError, TlsError, WrongTypeError,
} from './errors.js'
export { algorithms, RateLimiter } from './ratelimit.js'
export type { Algorithm, Allowed, ConsumeOptions, Limited, LimitSpec, LimitStatus, RateLimiterOptions, RateLimitKeys } from './ratelimit.js'
export { LockGuard, LockGuard as Lock, Locks } from './locks.js'
export type { AcquireOptions, Extended, Free, Held, Locked, LockKeys, LocksOptions, Lost, Released, WatchOptions } from './locks.js'
/** @deprecated `inspect()` answers `Locked | Free`. */
export type LockInfo = import('./locks.js').Locked | import('./locks.js').Free
export { Quotas } from './quotas.js'
export type { AddOptions, Applied, Kept, QuotaKeys, QuotasOptions, Raised, Refused, ScoredMember } from './quotas.js'
export { Dedup } from './dedup.js'
export type { DedupKeys, DedupOptions, SightingOptions } from './dedup.js'
export { Permit, Semaphore } from './semaphore.js'
export type { Full, PermitOptions, SemaphoreKeys, SemaphoreOptions, SemaphoreState } from './semaphore.js'
/** @deprecated `inspect()` answers `SemaphoreState`. */
export type SemaphoreInfo = import('./semaphore.js').SemaphoreState
export { Claim, Claim as IdempotencyClaim, Idempotency } from './idempotency.js'
export type {
  BeginOptions, Header, HeaderInit, IdempotencyKeys, IdempotencyOptions, InProgress, Mismatch, Replay, ResponseInit, Stored,
  StoredResponse,
} from './idempotency.js'
/** @deprecated A claim's end answers `Stored | Lost`. */
export type StoreResult = import('./idempotency.js').Stored | import('./locks.js').Lost
export { Job, Queue } from './queue.js'
export type {
  Acked, ClaimOptions, Claimed, Dead, DeadLetter, DeadLetterPage, DeadLetters, Empty, Enqueued, EnqueueOptions, Exists, Idle,
  JobAcked, JobDead, JobQueued, JobRunning, JobUnknown, NotDead, Purged, PurgeOptions, QueueKeys, QueueOptions, QueueStats,
  Reaped, Requeued, Retrying,
} from './queue.js'
export { FencedWrites } from './fenced.js'
export type { FencedKeys, FencedWrite, FencedWritesOptions, Stale, Written } from './fenced.js'
/** @deprecated `write()` answers `Written | Stale`. */
export type FencedResult = import('./fenced.js').Written | import('./fenced.js').Stale
export { ScriptSet } from './script-set.js'
export type { LibraryInfo, ScriptCallOptions, ScriptModule, ScriptReply } from './script-set.js'
