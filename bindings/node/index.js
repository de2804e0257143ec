'use strict'
// The package entry: the native addon (built from bindings/node by build.mjs into
// redis-atomic.node) plus the error classes, joined once per JavaScript thread.
const native = require('./redis-atomic.node')
const errors = require('./errors.js')

// Watches a signal for one call: `onAbort` runs when it fires. One listener per signal fans out
// to every call in flight on it (a shutdown signal shared by thousands of concurrent calls adds
// one listener, not thousands), and is removed when the last of them settles. The returned
// function, called when the call settles, unregisters it and gives the signal's reason.
const watched = new WeakMap() // signal -> { calls: Set<onAbort>, listener }
function watchSignal(signal, onAbort) {
  if (!signal.aborted) {
    let entry = watched.get(signal)
    if (!entry) {
      const calls = new Set()
      const listener = () => {
        watched.delete(signal)
        for (const f of calls) f()
      }
      entry = { calls, listener }
      watched.set(signal, entry)
      signal.addEventListener('abort', listener, { once: true })
    }
    entry.calls.add(onAbort)
  }
  return () => {
    const entry = watched.get(signal)
    if (entry?.calls.delete(onAbort) && entry.calls.size === 0) {
      watched.delete(signal)
      signal.removeEventListener('abort', entry.listener)
    }
    return signal.reason
  }
}

// The promise bridge (src/bridge.rs): `defer(id)` makes a call's promise, `settle(id, failed,
// value)` ends it; `schedule()` asks for the current batch of calls to be flushed. While any
// promise is pending a referenced timer keeps the event loop alive (the addon's completion
// queue does not), as Node's own pending I/O would.
const pending = new Map() // id -> [resolve, reject]
const keepAlive = setInterval(() => {}, 2 ** 31 - 1)
keepAlive.unref()
function defer(id) {
  if (pending.size === 0) keepAlive.ref()
  return new Promise((resolve, reject) => pending.set(id, [resolve, reject]))
}
function settle(id, failed, value) {
  const p = pending.get(id)
  pending.delete(id)
  if (pending.size === 0) keepAlive.unref()
  if (p) p[failed ? 1 : 0](value)
}

// Calls made during one turn of the event loop go to the runtime together, after it.
const flush = () => native.__flush()
const schedule = () => setImmediate(flush)

native.__init({ createError: errors.createError, watchSignal, defer, settle, schedule, noop() {} })

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
