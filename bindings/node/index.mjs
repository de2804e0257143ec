// The package's ESM entry: the CommonJS build (dist/index.js, emitted by tsc from ts/) with its
// exports named, so `import { Client } from 'redis-atomic'` and `require('redis-atomic')` are
// one module (one set of classes: an error thrown under one is instanceof under the other).
// test/exports.test.mjs proves these names are exactly the CommonJS exports.
import cjs from './dist/index.js'

export const {
  AbortedError,
  BadArgumentError,
  BadReplyError,
  Claim,
  Client,
  ClientError,
  ConnectionError,
  CostExceedsBurstError,
  CrossSlotError,
  Dedup,
  FencedWrites,
  HandleEndedError,
  Idempotency,
  IdempotencyClaim,
  Job,
  LeaseLostError,
  Lock,
  LockGuard,
  Locks,
  NotReplicatedError,
  NotSentError,
  OutcomeUnknownError,
  Permit,
  Queue,
  Quotas,
  RateLimiter,
  RedisAtomicError,
  RejectedError,
  ScriptSet,
  Semaphore,
  ServerError,
  TlsError,
  WrongTypeError,
  algorithms,
} = cjs
export default cjs
