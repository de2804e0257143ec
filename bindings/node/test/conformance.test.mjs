// The conformance vectors (conformance/vectors.json, see its README) that apply to the Node
// package, run through its public API: key derivation by each primitive's `keys()`, the
// algorithm and delivery spellings, and the classification of failures — every server error
// reply of the file, a refused connect and timeouts after sending, staged on a real server.
//
// The file is the contract every face runs: each case is a subtest named by its id, and a
// disagreement prints what the file expects and what the package answered.
// `REDIS_ATOMIC_VECTORS` points at another copy (to see a deliberate change fail).

import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { ra, rejection, useServer } from './fixture.mjs'
import { bulk, command, freePort } from './server.mjs'

const VECTORS =
  process.env.REDIS_ATOMIC_VECTORS ?? fileURLToPath(new URL('../../../conformance/vectors.json', import.meta.url))
const vectors = JSON.parse(readFileSync(VECTORS, 'utf8'))
// The package's own classification of a server's error reply (dist/classify.js: the library's
// `Error::from_server_error`, carried over).
const classifyServerError = createRequire(import.meta.url)('../dist/classify.js').serverError

// What this face does not run, and why (listed, never skipped silently; a test below checks
// every entry still names something in the file).
const SECTIONS_ELSEWHERE = {
  arguments:
    'not run by this face yet: run by the Rust library (crates/redis-atomic/tests/it/conformance/); ' +
    'this package builds its script calls from the layer generated from the same headers (ts/scripts.ts)',
  replies: 'not run by this face yet: its decoders (ts/scripts.ts) are generated from the same headers as the Rust library’s, which runs them',
}
const CALLS_NOT_BOUND = {
  slot: 'the package exposes no slot function: these cases check the runner’s own CRC16 instead',
  'keyspace.key': 'the package exposes no raw key builder (its key rules are checked by every keys() case)',
  'entries.keys': 'the package binds no entry limiter (the library’s Entries)',
}
const SECTIONS_RUN = ['keys', 'spellings', 'errors']
const FACTS = { nothingRan: 'nothing_ran', transient: 'transient', retrySafe: 'retry_safe', timedOut: 'timed_out' }

const ctx = useServer()

/** A vector's byte string: a JSON string as is, `{"hex": ...}` as a Buffer. */
function bytes(v) {
  return typeof v === 'object' && v !== null ? Buffer.from(v.hex, 'hex') : v
}

/** CRC16/XMODEM of the key's hash tag, mod 16384 (the cluster's slot). */
function slot(key) {
  let data = Buffer.from(key)
  const start = data.indexOf('{')
  if (start >= 0) {
    const end = data.indexOf('}', start + 1)
    if (end > start + 1) data = data.subarray(start + 1, end)
  }
  let crc = 0
  for (const byte of data) {
    crc ^= byte << 8
    for (let i = 0; i < 8; i++) crc = (crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1) & 0xffff
  }
  return crc % 16384
}

/** A vector's limit as the package's `LimitSpec`. */
function limit(spec) {
  return { algorithm: spec.algorithm, limit: spec.limit, periodMs: spec.period_ms, burst: spec.burst, name: spec.name }
}

/** The keys the package derives for one case, by the primitive's own `keys()`. */
function derive(client, call, i) {
  const namespace = i.namespace
  switch (call) {
    case 'lock.keys': {
      const { lock, fence } = new ra.Locks(client, { namespace }).keys(i.resource)
      return { lock, fence }
    }
    case 'semaphore.keys': {
      const { permits, holders, fence } = new ra.Semaphore(client, { namespace, name: i.name, capacity: 1 }).keys
      return { permits, holders, fence }
    }
    case 'idempotency.keys':
      return { record: new ra.Idempotency(client, { namespace }).keys(i.scope, bytes(i.key)).record }
    case 'ratelimit.keys': {
      const limiter = new ra.RateLimiter(client, { namespace, limits: i.limits.map(limit) })
      const k = limiter.keys(i.identity, i.request_id)
      return { limits: k.limits, request: k.request ?? null }
    }
    case 'quota.keys': {
      const k = new ra.Quotas(client, { namespace }).keys(i.name, i.request_id)
      return { value: k.value, request: k.request ?? null }
    }
    case 'queue.keys': {
      const queue = new ra.Queue(client, { namespace, name: i.name })
      const { due, inflight, dead, done, meta, payload, errors, claims } = queue.keys
      return { due, inflight, dead, done, meta, payload, errors, claims, claim: queue.claimKey(i.claim_id) }
    }
    case 'dedup.keys':
      return { seen: new ra.Dedup(client, { namespace }).keys(i.event_id).seen }
    case 'fenced.keys':
      return { fence: new ra.FencedWrites(client, { namespace }).keys(i.resource).fence }
    case 'fenced.key':
      return { key: new ra.FencedWrites(client, { namespace }).key(i.resource, i.part) }
  }
  throw new Error(`a call this runner does not know: ${call}`)
}

/** What the case expects; a case without any expectation is a defect of the file. */
function expected(c, fields) {
  const want = Object.fromEntries(fields.filter((f) => f in c).map((f) => [f, c[f]]))
  assert.ok(Object.keys(want).length > 0, `${c.id}: the case expects nothing`)
  return want
}

const show = (v) => JSON.stringify(v, (_, x) => (x instanceof Error ? `${x.name}(${x.code}): ${x.message}` : x))

/** Runs `answer()` and checks it against `want`: a `bad_argument` refusal or `accept(got)`. */
async function refusedOr(c, want, answer, accept) {
  let got
  try {
    got = await answer()
  } catch (e) {
    assert.ok(e instanceof ra.BadArgumentError, `${c.id}: expected ${show(want)}, got ${show(e)}`)
    assert.equal(want.error, e.code, `${c.id}: expected ${show(want)}, got ${show(e)}`)
    return
  }
  assert.ok(!('error' in want), `${c.id}: expected ${show(want)}, got ${show(got)}`)
  accept(got)
}

test('the file has exactly the sections this runner knows', () => {
  const sections = Object.keys(vectors).filter((k) => Array.isArray(vectors[k]))
  assert.deepEqual(sections.sort(), [...SECTIONS_RUN, ...Object.keys(SECTIONS_ELSEWHERE)].sort())
})

test('what this face does not run', (t) => {
  for (const [section, why] of Object.entries(SECTIONS_ELSEWHERE)) {
    assert.ok(vectors[section].length > 0, `section ${section} is empty`)
    t.diagnostic(`section ${section}, cases: ${vectors[section].length}: ${why}`)
  }
  for (const [call, why] of Object.entries(CALLS_NOT_BOUND)) {
    const n = vectors.keys.filter((c) => c.call === call).length
    assert.ok(n > 0, `keys: no case of ${call} is left: drop it from CALLS_NOT_BOUND`)
    t.diagnostic(`keys ${call}, cases: ${n}: ${why}`)
  }
})

test('slot: the runner’s own CRC16 (the package exposes no slot function)', async (t) => {
  for (const c of vectors.keys.filter((c) => c.call === 'slot')) {
    await t.test(c.id, () => assert.equal(slot(c.input.key), c.slot, `${c.id}: CRC16 of ${c.input.key}`))
  }
})

test('keys: each primitive’s keys(), all in the expected slot', async (t) => {
  for (const c of vectors.keys) {
    if (c.call in CALLS_NOT_BOUND) continue // listed above
    await t.test(c.id, () =>
      refusedOr(c, expected(c, ['key', 'keys', 'slot', 'error']), () => derive(ctx.client, c.call, c.input), (got) => {
        const want = 'key' in c ? { key: c.key } : c.keys
        assert.deepEqual(got, want, `${c.id}: expected ${show(want)}, got ${show(got)}`)
        const every = Object.values(got).flat().filter((k) => k !== null)
        const slots = [...new Set(every.map(slot))]
        assert.deepEqual(slots, [c.slot], `${c.id}: slots ${show(slots)} of ${show(every)}`)
      }),
    )
  }
})

/** The algorithm a limit of `input` gets: its canonical name and its key code. */
function algorithm(input) {
  const limiter = new ra.RateLimiter(ctx.client, { namespace: 'app', limits: [{ algorithm: input, limit: 10, periodMs: 1000 }] })
  return { canonical: limiter.limits[0].algorithm, code: limiter.keys('k').limits[0].split(':').at(-1) }
}

/** The delivery a client connected with `delivery: input` uses, as the server saw it: the
 * commands one lock acquire sent (EVALSHA or FCALL, from `INFO commandstats`). */
async function delivery(input) {
  const { server } = ctx
  assert.equal(await command(server.address, 'CONFIG', 'RESETSTAT'), '+OK')
  const client = await ra.Client.connect(server.url, { delivery: input, forceLua: true, batching: false })
  try {
    await new ra.Locks(client, { namespace: 'app' }).acquire('spelling', 1000)
  } finally {
    await client.close()
  }
  const stats = await bulk(server.address, 'INFO', 'commandstats')
  const used = { eval: /^cmdstat_evalsha:/m.test(stats), functions: /^cmdstat_fcall:/m.test(stats) }
  const words = Object.keys(used).filter((w) => used[w])
  return { canonical: words.length === 1 ? words[0] : `both or neither of EVALSHA and FCALL: ${stats}` }
}

test('spellings: algorithm and delivery names accepted or refused', async (t) => {
  for (const c of vectors.spellings) {
    const want = expected(c, ['canonical', 'code', 'error'])
    const answer = { algorithm: () => algorithm(c.input), delivery: () => delivery(c.input) }[c.kind]
    assert.ok(answer, `${c.id}: a kind this runner does not know: ${c.kind}`)
    await t.test(c.id, () =>
      refusedOr(c, want, answer, (got) => {
        const asked = Object.fromEntries(Object.keys(want).map((k) => [k, got[k]]))
        assert.deepEqual(asked, want, `${c.id}: expected ${show(want)}, got ${show(got)}`)
      }),
    )
  }
})

/** The error as the file spells it: its code under `error`, and its facts. */
function facts(e) {
  const out = { error: e.code }
  for (const [js, file] of Object.entries(FACTS)) out[file] = e[js]
  if (e instanceof ra.OutcomeUnknownError) out.attempts = e.attempts
  return out
}

function check(c, e) {
  assert.ok(e instanceof ra.RedisAtomicError, `${c.id}: not a RedisAtomicError: ${show(e)}`)
  assert.equal(e.constructor.code, e.code, `${c.id}: class ${e.constructor.name} for code ${e.code}`)
  const want = expected(c, ['error', ...Object.values(FACTS), 'attempts'])
  const got = Object.fromEntries(Object.keys(want).map((k) => [k, facts(e)[k]]))
  assert.deepEqual(got, want, `${c.id}: expected ${show(want)}, got ${show(facts(e))}`)
}

/** The case's operation through the public API. */
function operation(client, c) {
  const i = c.input
  switch (c.operation) {
    case 'ratelimit.consume': {
      const limiter = new ra.RateLimiter(client, { namespace: i.namespace, limits: i.limits.map(limit) })
      return () => limiter.consume(i.identity, { cost: i.cost })
    }
    case 'lock.acquire':
    case 'lock.acquire_with_token': {
      const locks = new ra.Locks(client, { namespace: i.namespace })
      return () => locks.acquire(i.resource, i.ttl_ms, i.token === undefined ? undefined : { token: i.token })
    }
  }
  throw new Error(`${c.id}: an operation this runner does not know: ${c.operation}`)
}

/** Connects with the case's settings, runs its operation once (connected, scripts loaded), then
 * again on the stopped server; resumed once the call returned. */
async function timeoutAfterSend(c) {
  const { server } = ctx
  await command(server.address, 'FLUSHALL')
  const { timeout_ms: timeoutMs, max_attempts: maxAttempts } = c.client
  const client = await ra.Client.connect(server.url, { timeoutMs, retry: { maxAttempts, deadlineMs: 30_000 } })
  try {
    const run = operation(client, c)
    await run()
    await command(server.address, 'FLUSHALL')
    server.pause()
    try {
      return await rejection(run())
    } finally {
      server.resume()
    }
  } finally {
    await client.close()
  }
}

const EVENTS = {
  /** A connect to a port just found free (nothing listens on it). */
  async connect_refused() {
    const port = await freePort()
    return rejection(ra.Client.connect(`redis://127.0.0.1:${port}`, { timeoutMs: 1000 }))
  },
  timeout_after_send: timeoutAfterSend,
}

test('errors: server error replies, a refused connect, timeouts after sending', async (t) => {
  for (const c of vectors.errors) {
    await t.test(c.id, async () => {
      if ('reply' in c) {
        const [code, ...rest] = c.reply.error.split(' ')
        check(c, classifyServerError(code, rest.join(' ')))
        return
      }
      const stage = EVENTS[c.event]
      assert.ok(stage, `${c.id}: an event this runner does not know: ${c.event}`)
      check(c, await stage(c))
    })
  }
})
