// A value of the wrong JavaScript type is a TypeError, the way Node's own functions report it —
// and a method that answers with a promise rejects with it, never throws (a `.catch()` sees it).
// Every method the package declares (dist/*.d.ts, emitted by tsc) is called with a wrong type in
// its first parameter: the declared return type says which of the two it must do.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { declarations, ra, useServer } from './fixture.mjs'

const s = useServer()

const dts = declarations()

/** `{ Class: [{ name, isStatic, promise, first }] }` for every method with parameters in
 * the declarations (`first`: the declared type of its first parameter), inherited ones included;
 * an abstract class's methods are tried on its subclasses; only the classes the package exports. */
function declaredMethods() {
  const own = {}
  const parents = {}
  const abstract = new Set()
  for (const [, isAbstract, name, parent, body] of dts.matchAll(/^export declare (abstract )?class (\w+)(?: extends (\w+))? \{\n([\s\S]*?)^\}/gm)) {
    const methods = []
    for (const [, isStatic, method, params, ret] of body.matchAll(/^ {4}(static )?(\w+)\((.*)\): (.*);$/gm)) {
      if (params.trim() === '') continue
      const first = params.split(',')[0].replace(/^\w+\??: /, '').replace(/ \| undefined \| null$/, '').replace(/ \| null$/, '').replace(/^\w+\./, '')
      methods.push({ name: method, isStatic: !!isStatic, promise: ret.startsWith('Promise<'), first })
    }
    own[name] = methods
    if (parent) parents[name] = parent
    if (isAbstract) abstract.add(name)
  }
  const classes = {}
  for (const name of Object.keys(own)) {
    if (abstract.has(name) || !(name in ra)) continue
    const methods = []
    for (let c = name; c in own; c = parents[c]) methods.push(...own[c].filter((m) => !methods.some((n) => n.name === m.name)))
    classes[name] = methods
  }
  return classes
}

/** A wrong value for a parameter of `type`: a symbol, or for an options interface that interface
 * with a symbol in its first field of a primitive type (a symbol for one without such a field). */
function wrongValue(type) {
  if (new RegExp(`^export declare (abstract )?class ${type}\\b`, 'm').test(dts)) return Symbol('not a value')
  const body = dts.match(new RegExp(`^export interface ${type}(?: extends \\w+)? \\{\\n([\\s\\S]*?)^\\}`, 'm'))?.[1]
  if (!body) return Symbol('not a value')
  const field = body.match(/^ {4}(\w+)\??: (number|string|boolean)\b/m)
  if (!field) return Symbol('not a value')
  return { [field[1]]: Symbol('not a value') }
}

/** One instance of every class the package exports, made the way users make them. */
async function instances(client) {
  const ns = { namespace: 'types' }
  const locks = new ra.Locks(client, ns)
  const semaphore = new ra.Semaphore(client, { ...ns, name: 's', capacity: 2 })
  const idempotency = new ra.Idempotency(client, ns)
  const queue = new ra.Queue(client, { ...ns, name: 'q' })
  await queue.enqueue('j', 'payload')
  const claimed = await queue.claim('w', 60_000)
  const scripts = ra.ScriptSet.loadDir(new URL('../../../examples/user-scripts', import.meta.url).pathname, 'shop')
  return {
    Client: client,
    Dedup: new ra.Dedup(client, ns),
    FencedWrites: new ra.FencedWrites(client, ns),
    Idempotency: idempotency,
    Claim: await idempotency.begin('scope', 'key', 'request'),
    Job: claimed.jobs[0],
    LockGuard: await locks.acquire('r', 60_000),
    Locks: locks,
    Permit: await semaphore.acquire(60_000),
    Queue: queue,
    Quotas: new ra.Quotas(client, ns),
    RateLimiter: new ra.RateLimiter(client, { ...ns, limits: [{ algorithm: 'gcra', limit: 5, periodMs: 1000 }] }),
    ScriptSet: scripts,
    Semaphore: semaphore,
  }
}

function assertTypeError(e, what) {
  assert.ok(e instanceof TypeError, `${what}: ${e?.name}: ${e?.message}`)
  assert.equal(e.code, 'ERR_INVALID_ARG_TYPE', what)
}

test('a wrong type rejects a promise-returning method and throws from a synchronous one', async () => {
  const made = await instances(s.client)
  const declared = declaredMethods()
  let promised = 0
  let synchronous = 0
  for (const [cls, methods] of Object.entries(declared)) {
    if (cls === 'RedisAtomicError' || cls.endsWith('Error')) continue
    assert.ok(cls in made, `the test makes no ${cls}: add one`)
    for (const m of methods) {
      const what = `${cls}.${m.name}`
      const target = m.isStatic ? ra[cls] : made[cls]
      const wrong = wrongValue(m.first)
      const call = () => target[m.name](wrong)
      if (m.promise) {
        let result
        assert.doesNotThrow(() => { result = call() }, `${what} threw synchronously`)
        assert.ok(result instanceof Promise, `${what} returned no promise`)
        assertTypeError(await result.then(() => undefined, (e) => e), what)
        promised++
      } else {
        assert.throws(call, (e) => (assertTypeError(e, what), true), `${what} did not throw`)
        synchronous++
      }
    }
  }
  // The declarations were read (a parse that found nothing would pass vacuously).
  assert.ok(promised >= 40 && synchronous >= 8, `${promised} promise methods, ${synchronous} synchronous`)
})
