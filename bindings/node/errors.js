'use strict'
// The package's error classes: one per library error, each with the library's stable snake_case
// `code` (`redis_atomic::Error::code()`, the vocabulary's), under RedisAtomicError. The native
// addon builds them through `createError` (installed by index.js), so a rejected call's error is
// an instance of these very classes, carrying the library error's own facts. Their declarations
// are errors.d.ts, which the build puts at the top of the generated index.d.ts.

class RedisAtomicError extends Error {
  constructor(message, props) {
    super(message, props && 'cause' in props ? { cause: props.cause } : undefined)
    this.name = new.target.errorName ?? new.target.name
    this.code = new.target.code
    // What a retry would do: nothing ran (safe to resend) / a prompt resend may succeed / the
    // client gave up waiting / resending the same call cannot repeat its effect.
    this.nothingRan = false
    this.transient = false
    this.timedOut = false
    this.retrySafe = false
    if (props) {
      for (const [k, v] of Object.entries(props)) if (k !== 'cause') this[k] = v
    }
  }
}
RedisAtomicError.code = 'error'

const classes = { RedisAtomicError }

function define(name, code, base = RedisAtomicError) {
  const cls = { [name]: class extends base {} }[name]
  cls.code = code
  classes[name] = cls
  return cls
}

define('NotSentError', 'not_sent')
define('RejectedError', 'rejected')
const OutcomeUnknownError = define('OutcomeUnknownError', 'outcome_unknown')
define('WrongTypeError', 'wrong_type')
define('BadArgumentError', 'bad_argument')
define('CostExceedsBurstError', 'cost_exceeds_burst')
define('BadReplyError', 'bad_reply')
define('CrossSlotError', 'cross_slot')
define('ServerError', 'server_error')
define('ConnectionError', 'connection')
define('TlsError', 'tls')
define('NotReplicatedError', 'not_replicated')
const ClientError = define('ClientError', 'client')
// A lease handle whose end verb (release, complete, fail, ack, nack) was already called: the
// caller misused the handle and the client sent nothing.
define('HandleEndedError', 'handle_ended', ClientError)
// The reason a watched lease's `lost` AbortSignal fires with (`reason`: not_held | unconfirmed).
define('LeaseLostError', 'lease_lost')
// An aborted call may still have run: it is an unknown outcome, named like DOM aborts.
const AbortedError = define('AbortedError', 'aborted', OutcomeUnknownError)
AbortedError.errorName = 'AbortError'

const byCode = new Map(Object.values(classes).map((c) => [c.code, c]))

/** The instance for `code` (the native addon's factory); a code this file does not know (a
 * library newer than it) still makes a RedisAtomicError that carries it. */
function createError(code, message, props) {
  const cls = byCode.get(code)
  return cls ? new cls(message, props) : new RedisAtomicError(message, { ...props, code })
}

module.exports = { ...classes, createError }
