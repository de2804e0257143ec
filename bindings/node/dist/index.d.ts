export { Client } from './client.js';
export type { BatchStats, BatchingOptions, ClientOptions, ReplicaOptions, RetryOptions } from './client.js';
export type { TlsConfig } from './connection.js';
export { AbortedError, BadArgumentError, BadReplyError, ClientError, ConnectionError, CostExceedsBurstError, CrossSlotError, HandleEndedError, LeaseLostError, NotReplicatedError, NotSentError, OutcomeUnknownError, RedisAtomicError, RejectedError, ServerError, TlsError, WrongTypeError, } from './errors.js';
export { algorithms, RateLimiter } from './ratelimit.js';
export type { Algorithm, Allowed, ConsumeOptions, Limited, LimitSpec, LimitStatus, RateLimiterOptions, RateLimitKeys } from './ratelimit.js';
export { LockGuard, LockGuard as Lock, Locks } from './locks.js';
export type { AcquireOptions, Extended, Free, Held, Locked, LockKeys, LocksOptions, Lost, Released, WatchOptions } from './locks.js';
/** @deprecated `inspect()` answers `Locked | Free`. */
export type LockInfo = import('./locks.js').Locked | import('./locks.js').Free;
export { Quotas } from './quotas.js';
export type { AddOptions, Applied, Kept, QuotaKeys, QuotasOptions, Raised, Refused, ScoredMember } from './quotas.js';
export { Dedup } from './dedup.js';
export type { DedupKeys, DedupOptions, SightingOptions } from './dedup.js';
