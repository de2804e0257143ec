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

// The promise bridge (src/bridge.rs). Every native method is called through `typed` below:
// before the call `ctl[0]` offers a slot; a method that starts a call takes it (`ctl[1] = 1`)
// and returns nothing, and the wrapper returns a promise filed under that slot. The first call
// of a batch sets `ctl[2]`: the batch is handed to the runtime after this turn of the event
// loop (`setImmediate`). Outcomes come back through `settle(end, values)`: records of numbers in
// `rec` (slot, kind, length, numbers) that `decoders` turn into values, and the values the addon
// built itself in `values`. While any promise is pending a referenced timer keeps the event loop
// alive (the addon's completion queue does not), as Node's own pending I/O would.
const ctl = new Float64Array(3)
const rec = new Float64Array(1 << 14)
const resolvers = []
const rejecters = []
const freeSlots = []
let freshSlot = 0
let inflight = 0
const keepAlive = setInterval(() => {}, 2 ** 31 - 1)
keepAlive.unref()
const flush = () => native.__flush()
let capturedResolve, capturedReject
const capture = (resolve, reject) => {
  capturedResolve = resolve
  capturedReject = reject
}
function offer() {
  ctl[0] = freeSlots.length > 0 ? freeSlots[freeSlots.length - 1] : freshSlot
}
// The promise of the call that just took the offered slot.
function pending() {
  const slot = ctl[0]
  if (freeSlots.length > 0) freeSlots.pop()
  else freshSlot++
  offer()
  const promise = new Promise(capture)
  resolvers[slot] = capturedResolve
  rejecters[slot] = capturedReject
  if (inflight++ === 0) keepAlive.ref()
  if (ctl[2] === 1) {
    ctl[2] = 0
    setImmediate(flush)
  }
  return promise
}
// Limit names of rate-limit policies, numbered once (src/ratelimit.rs).
const policies = new Map()
const policyNames = []
function internNames(names) {
  const key = names.join('\n')
  let id = policies.get(key)
  if (id === undefined) {
    id = policyNames.length
    policyNames.push(names)
    policies.set(key, id)
  }
  return id
}
// One decoder per record kind (src/value.rs `Kind`; rec[v] is the record's first number).
function verdict(v) {
  const names = policyNames[rec[v + 5]]
  const limits = []
  for (let i = 0, j = v + 7, n = rec[v + 6]; i < n; i++, j += 3) {
    limits.push({ name: names[i], remaining: rec[j], resetAfterMs: rec[j + 1], retryAfterMs: rec[j + 2] })
  }
  const replayed = rec[v + 3] !== 0
  return rec[v] === 1
    ? { allowed: true, remaining: rec[v + 1], resetAfterMs: rec[v + 2], replayed, limits }
    : { allowed: false, retryAfterMs: rec[v + 4], resetAfterMs: rec[v + 2], replayed, limits }
}
function decode(kind, v, values) {
  switch (kind) {
    case 0: return values[rec[v]]
    case 2: return undefined
    case 3: return rec[v]
    case 4: return rec[v] !== 0
    case 5: return verdict(v)
    case 6: return { applied: rec[v] !== 0, value: rec[v + 1] }
  }
  throw new Error(`redis-atomic: unknown record kind ${kind}`)
}
function settle(end, values) {
  let count = 0
  for (let at = 0; at < end; count++) {
    const slot = rec[at]
    const kind = rec[at + 1]
    const v = at + 3
    at = v + rec[at + 2]
    const resolve = resolvers[slot]
    const reject = rejecters[slot]
    resolvers[slot] = undefined
    rejecters[slot] = undefined
    freeSlots.push(slot)
    if (kind === 1) reject(values[rec[v]])
    else resolve(decode(kind, v, values))
  }
  offer()
  if ((inflight -= count) === 0) keepAlive.unref()
}

// A watched lease's loss (src/lease.rs): the signal its work gets, and what aborts it.
function lostSignal() {
  const controller = new AbortController()
  return { signal: controller.signal, abort: (reason) => controller.abort(reason) }
}

offer()
native.__init({
  createError: errors.createError, watchSignal, internNames, lostSignal, settle, ctl, rec, noop() {},
})

// A JavaScript value of the wrong type (a string where a number goes, a missing options object)
// is refused by the addon's argument conversion before any library code runs, with napi's
// conversion codes or a TypeError: it becomes a TypeError (`code: 'ERR_INVALID_ARG_TYPE'`, as
// Node's own functions say it; the addon's message and error as `cause`; TypeScript reports it
// at compile time). A method that answers with a promise rejects with it, never throws; the
// methods that answer synchronously are these (test/types.test.mjs checks the list against
// index.d.ts):
const SYNC = new Set(['keys', 'key', 'claimKey', 'watch', 'loadDir', 'batchStats'])
const CONVERSION = /^(InvalidArg|ObjectExpected|StringExpected|NameExpected|FunctionExpected|NumberExpected|BooleanExpected|ArrayExpected|BigintExpected|DateExpected|ArrayBufferExpected)$/
function converted(e) {
  if (e && !(e instanceof errors.RedisAtomicError) && (CONVERSION.test(e.code) || e instanceof TypeError)) {
    const t = new TypeError(e.message, { cause: e })
    t.code = 'ERR_INVALID_ARG_TYPE'
    return t
  }
  return e
}
function typed(fn, sync) {
  return function (...args) {
    ctl[1] = 0
    let result
    try {
      result = fn.apply(this, args)
    } catch (e) {
      if (sync) throw converted(e)
      return Promise.reject(converted(e))
    }
    return ctl[1] === 0 ? result : pending()
  }
}
// Methods (static and instance) are wrapped in place; the constructor through a Proxy, so
// `instanceof` holds for instances the addon makes itself (Client.connect's).
function guard(cls) {
  for (const owner of [cls, cls.prototype]) {
    for (const name of Object.getOwnPropertyNames(owner)) {
      const d = Object.getOwnPropertyDescriptor(owner, name)
      if (typeof d.value === 'function' && name !== 'constructor' && d.writable) {
        Object.defineProperty(owner, name, { ...d, value: typed(d.value, SYNC.has(name)) })
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
  // The addon's private hooks (`__init`, `_classifyServerError`: for the package's own tests),
  // and `Algorithm` (a type only: its values are the strings `algorithms()` lists).
  if (name.startsWith('_') || name === 'Algorithm') continue
  api[name] = typeof value === 'function' && value.prototype ? guard(value) : value
}
// The handle classes' earlier names (deprecated): the same classes.
api.Lock = api.LockGuard
api.IdempotencyClaim = api.Claim
// `await using client = …`: closed at the end of the scope.
api.Client.prototype[Symbol.asyncDispose ?? Symbol.for('nodejs.asyncDispose')] = function () {
  return this.close()
}
const { createError: _factory, ...errorClasses } = errors
Object.assign(module.exports, api, errorClasses)

// The names `import { Client } from 'redis-atomic'` finds: Node reads them from this line
// without running it (test/exports.test.mjs checks that it lists exactly the exports).
0 && (module.exports = {
  Client, RateLimiter, Quotas, Dedup, FencedWrites, ScriptSet, algorithms,
  Locks, LockGuard, Lock, Semaphore, Permit, Idempotency, Claim, IdempotencyClaim, Queue, Job,
  RedisAtomicError, NotSentError, RejectedError, OutcomeUnknownError, AbortedError,
  WrongTypeError, BadArgumentError, CostExceedsBurstError, BadReplyError, CrossSlotError,
  ServerError, ConnectionError, TlsError, NotReplicatedError, ClientError, HandleEndedError,
  LeaseLostError,
})
