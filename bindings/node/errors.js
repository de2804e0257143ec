'use strict'
// The package's error classes: one per library error, each with a stable `code`, under
// RedisAtomicError. The native addon builds them through `createError` (installed by index.js),
// so a rejected call's error is an instance of these very classes. Their declarations are
// errors.d.ts, which the build puts at the top of the generated index.d.ts.

class RedisAtomicError extends Error {
  constructor(message, props) {
    super(message, props && 'cause' in props ? { cause: props.cause } : undefined)
    this.name = new.target.errorName ?? new.target.name
    this.code = new.target.code
    // What a retry would do: nothing ran (safe to resend) / a prompt resend may succeed.
    this.nothingRan = false
    this.transient = false
    if (props) {
      for (const [k, v] of Object.entries(props)) if (k !== 'cause') this[k] = v
    }
  }
}
RedisAtomicError.code = 'RedisAtomicError'

const classes = { RedisAtomicError }

function define(name, code, base = RedisAtomicError) {
  const cls = { [name]: class extends base {} }[name]
  cls.code = code
  classes[name] = cls
  return cls
}

define('NotSentError', 'NotSent')
define('RejectedError', 'Rejected')
const OutcomeUnknownError = define('OutcomeUnknownError', 'OutcomeUnknown')
define('WrongTypeError', 'WrongType')
define('BadArgumentError', 'BadArgument')
define('CostExceedsBurstError', 'CostExceedsBurst')
define('BadReplyError', 'BadReply')
define('CrossSlotError', 'CrossSlot')
define('ServerError', 'ServerError')
define('ConnectionError', 'ConnectionError')
define('TlsError', 'TlsError')
define('NotReplicatedError', 'NotReplicated')
define('ClientError', 'ClientError')
// A lease handle whose end verb (release, complete, fail, ack, nack) was already called: the
// handle is used up; nothing was sent. A bad argument of a kind, with its own code.
define('HandleEndedError', 'HandleEnded', classes.BadArgumentError)
// The reason a watched lease's `lost` AbortSignal fires with (`reason`: notHeld | unconfirmed).
define('LeaseLostError', 'LeaseLost')
// An aborted call may still have run: it is an unknown outcome, named like DOM aborts.
const AbortedError = define('AbortedError', 'Aborted', OutcomeUnknownError)
AbortedError.errorName = 'AbortError'

const byCode = new Map(Object.values(classes).map((c) => [c.code, c]))

/** The instance for `code` (the native addon's factory). */
function createError(code, message, props) {
  const cls = byCode.get(code) ?? RedisAtomicError
  return new cls(message, props)
}

module.exports = { ...classes, createError }
