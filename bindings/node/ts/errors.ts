// The package's error classes: one per library error, each with the library's stable snake_case
// `code` (the vocabulary's, `redis_atomic::Error::code()`), under RedisAtomicError. Every fact a
// caller decides a retry by (`nothingRan`, `transient`, `timedOut`, `retrySafe`) is set where the
// error is made (classify.ts for what a server or a connection said), never recomputed later.

/** The facts every error carries, and the fields some classes add. */
export interface ErrorProps {
  cause?: unknown
  nothingRan?: boolean
  transient?: boolean
  timedOut?: boolean
  retrySafe?: boolean
  [field: string]: unknown
}

/** What every error of this package says about a retry: the library error's own facts. */
export class RedisAtomicError extends Error {
  static readonly code: string = 'error'
  /** Stable, snake_case, the same in every face: `not_sent`, `rejected`, `outcome_unknown`, … */
  readonly code: string
  /** Nothing ran on the server: resending cannot repeat an effect. */
  readonly nothingRan: boolean = false
  /** A prompt resend of the same call may succeed (connection refused, BUSY, LOADING, …). */
  readonly transient: boolean = false
  /** The client gave up waiting (the per-request timeout) in some attempt. */
  readonly timedOut: boolean = false
  /** Resending the same call (same request id or token) cannot repeat its effect. */
  readonly retrySafe: boolean = false

  constructor(message?: string, props?: ErrorProps) {
    super(message, props && 'cause' in props ? { cause: props.cause } : undefined)
    const cls = new.target as typeof RedisAtomicError & { errorName?: string }
    this.name = cls.errorName ?? cls.name
    this.code = cls.code
    if (props) {
      for (const [k, v] of Object.entries(props)) {
        if (k !== 'cause') Object.defineProperty(this, k, { value: v, enumerable: true, writable: false })
      }
    }
  }
}

/** The request never reached a server; nothing ran. Safe to retry. */
export class NotSentError extends RedisAtomicError {
  static override readonly code = 'not_sent'
  declare readonly code: 'not_sent'
}
/** A server refused the request before running it (BUSY, READONLY, OOM, …); nothing ran. */
export class RejectedError extends RedisAtomicError {
  static override readonly code = 'rejected'
  declare readonly code: 'rejected'
  /** The server's error code (`BUSY`, `READONLY`, `OOM`, …). */
  declare readonly serverCode: string
}
/** The request may or may not have run (timeout, connection lost after sending). */
export class OutcomeUnknownError extends RedisAtomicError {
  static override readonly code: string = 'outcome_unknown'
  declare readonly code: 'outcome_unknown' | 'aborted'
  /** Attempts made, the last of which had this outcome. */
  declare readonly attempts: number
}
/** The call's AbortSignal fired. Like OutcomeUnknown, the call may still have run
 * (`nothingRan` is true only when the signal had fired before the call). `name` is `AbortError`. */
export class AbortedError extends OutcomeUnknownError {
  static override readonly code = 'aborted'
  static readonly errorName = 'AbortError'
  declare readonly code: 'aborted'
}
/** A key holds a value of another type (or another primitive's data); nothing changed. */
export class WrongTypeError extends RedisAtomicError {
  static override readonly code = 'wrong_type'
  declare readonly code: 'wrong_type'
}
/** An argument was refused, by this package before sending or by the script. */
export class BadArgumentError extends RedisAtomicError {
  static override readonly code = 'bad_argument'
  declare readonly code: 'bad_argument'
}
/** A request costs more than the limits could ever admit at once; nothing was sent. */
export class CostExceedsBurstError extends RedisAtomicError {
  static override readonly code = 'cost_exceeds_burst'
  declare readonly code: 'cost_exceeds_burst'
  declare readonly cost: number
  declare readonly burst: number
}
/** A script replied in a shape its binding does not understand (version skew?). */
export class BadReplyError extends RedisAtomicError {
  static override readonly code = 'bad_reply'
  declare readonly code: 'bad_reply'
  declare readonly script: string
}
/** The keys of one call span hash slots; nothing was sent (or the server refused it). */
export class CrossSlotError extends RedisAtomicError {
  static override readonly code = 'cross_slot'
  declare readonly code: 'cross_slot'
  /** Each key's slot, in order (empty when the server refused the call). */
  declare readonly slots: number[]
}
/** Any other server error (a script's runtime error, ACL NOPERM, …). */
export class ServerError extends RedisAtomicError {
  static override readonly code = 'server_error'
  declare readonly code: 'server_error'
  declare readonly serverCode: string
}
/** Could not connect or configure a connection; nothing ran. */
export class ConnectionError extends RedisAtomicError {
  static override readonly code = 'connection'
  declare readonly code: 'connection'
}
/** TLS could not be set up (unreadable CA or key, failed handshake); a retry cannot help. */
export class TlsError extends RedisAtomicError {
  static override readonly code = 'tls'
  declare readonly code: 'tls'
}
/** The write ran and stands on the primary, but fewer replicas than asked acknowledged it. */
export class NotReplicatedError extends RedisAtomicError {
  static override readonly code = 'not_replicated'
  declare readonly code: 'not_replicated'
  declare readonly acked: number
  declare readonly wanted: number
}
/** The client failed on its own side before sending anything (a closed client, a misused
 * handle). */
export class ClientError extends RedisAtomicError {
  static override readonly code: string = 'client'
  declare readonly code: 'client' | 'handle_ended'
}
/** A lease handle whose end verb (release, complete, fail, ack, nack) was already called: the
 * handle is used up and nothing was sent. Repeat an end by parts (token and fence). */
export class HandleEndedError extends ClientError {
  static override readonly code = 'handle_ended'
  declare readonly code: 'handle_ended'
}
/** The reason a watched lease's `lost` AbortSignal fires with: stop the work the lease protects. */
export class LeaseLostError extends RedisAtomicError {
  static override readonly code = 'lease_lost'
  declare readonly code: 'lease_lost'
  /** `not_held`: the server said this token and fence no longer hold the lease; `unconfirmed`:
   * no renewal was confirmed before the proven lease ended (server unreachable or stalled). */
  declare readonly reason: 'not_held' | 'unconfirmed'
  /** The lost lease's fence. */
  declare readonly fence: number
}

/** A refusal made before anything was sent: nothing ran, a retry cannot help. */
export function badArgument(message: string): BadArgumentError {
  return new BadArgumentError(message, { nothingRan: true, retrySafe: true })
}

/** A wrong JavaScript type, as Node's own functions report it. */
export function typeError(message: string): TypeError {
  return Object.assign(new TypeError(message), { code: 'ERR_INVALID_ARG_TYPE' })
}
