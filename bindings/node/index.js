'use strict'
// The package entry: the native addon (built from bindings/node by build.mjs into
// redis-atomic.node) plus the error classes, joined once per JavaScript thread.
const native = require('./redis-atomic.node')
const errors = require('./errors.js')

// Registers an 'abort' listener for one call (none when the signal has already fired). The
// returned function, called when the call settles, removes it and gives the signal's reason.
function watchSignal(signal, onAbort) {
  if (!signal.aborted) signal.addEventListener('abort', onAbort, { once: true })
  return () => {
    signal.removeEventListener('abort', onAbort)
    return signal.reason
  }
}

native.__init({ createError: errors.createError, watchSignal })

// A JavaScript value of the wrong type (a string where a number goes, a missing options object)
// is refused by the addon's argument conversion before any library code runs, with napi's
// conversion codes or a TypeError: it is thrown, synchronously, as BadArgumentError like every
// other bad input (TypeScript reports it at compile time).
const CONVERSION = /^(InvalidArg|ObjectExpected|StringExpected|NameExpected|FunctionExpected|NumberExpected|BooleanExpected|ArrayExpected|BigintExpected|DateExpected|ArrayBufferExpected)$/
function converted(e) {
  if (e && !(e instanceof errors.RedisAtomicError) && (CONVERSION.test(e.code) || e instanceof TypeError)) {
    return new errors.BadArgumentError(e.message, { nothingRan: true, cause: e })
  }
  return e
}
function typed(fn) {
  return function (...args) {
    try {
      return fn.apply(this, args)
    } catch (e) {
      throw converted(e)
    }
  }
}
// Methods (static and instance) are wrapped in place; the constructor through a Proxy, so
// `instanceof` holds for instances the addon makes itself (Client.connect's).
function guard(cls) {
  for (const owner of [cls, cls.prototype]) {
    for (const name of Object.getOwnPropertyNames(owner)) {
      const d = Object.getOwnPropertyDescriptor(owner, name)
      if (typeof d.value === 'function' && name !== 'constructor' && d.writable) {
        Object.defineProperty(owner, name, { ...d, value: typed(d.value) })
      }
    }
  }
  return new Proxy(cls, {
    construct(target, args, newTarget) {
      try {
        return Reflect.construct(target, args, newTarget)
      } catch (e) {
        throw converted(e)
      }
    },
  })
}

const api = {}
for (const [name, value] of Object.entries(native)) {
  // `__init`, and `Algorithm` (a type only: its values are the strings `algorithms()` lists).
  if (name.startsWith('__') || name === 'Algorithm') continue
  api[name] = typeof value === 'function' && value.prototype ? guard(value) : value
}
const { createError: _factory, ...errorClasses } = errors
Object.assign(module.exports, api, errorClasses)

// The names `import { Client } from 'redis-atomic'` finds: Node reads them from this line
// without running it (test/exports.test.mjs checks that it lists exactly the exports).
0 && (module.exports = {
  Client, RateLimiter, Quotas, Dedup, FencedWrites, ScriptSet, algorithms,
  RedisAtomicError, NotSentError, RejectedError, OutcomeUnknownError, AbortedError,
  WrongTypeError, BadArgumentError, CostExceedsBurstError, BadReplyError, CrossSlotError,
  ServerError, ConnectionError, TlsError, NotReplicatedError, ClientError,
})
