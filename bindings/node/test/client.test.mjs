// The client as users expect one: it closes (close(), `await using`), and a closed
// client refuses every later call — through its primitives and their handles too — with a
// ClientError that says so, sending nothing; batching is an option, and its stats are readable.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { concurrently, ra, rejection, thrown, useServer } from './fixture.mjs'
import { command } from './server.mjs'

const s = useServer()

function assertClosed(e, what) {
  assert.ok(e instanceof ra.ClientError, `${what}: ${e?.name}: ${e?.message}`)
  assert.equal(e.code, 'client', what)
  assert.match(e.message, /closed/, what)
  assert.equal(e.nothingRan, true, what)
}

test('close(): every later call through the client, its primitives and handles is a ClientError; nothing is sent', async () => {
  const client = await ra.Client.connect(s.server.url)
  const quotas = new ra.Quotas(client, { namespace: 'cl1' })
  const locks = new ra.Locks(client, { namespace: 'cl1' })
  const lock = await locks.acquire('r', 60_000)
  assert.equal(lock.acquired, true)
  assert.equal((await quotas.add('n', 1, { max: 10 })).applied, true)
  assert.equal(client.closed, false)
  await client.close()
  assert.equal(client.closed, true)
  for (const [what, call] of Object.entries({
    'a primitive': () => quotas.add('n', 1, { max: 10 }),
    'a handle': () => lock.extend(60_000),
    'an end verb': () => lock.release(),
    'a by-parts call': () => locks.release('r', lock.token, lock.fence),
  })) {
    assertClosed(await rejection(call()), what)
  }
  assertClosed(thrown(() => lock.watch()), 'watch()')
  assertClosed(thrown(() => new ra.Locks(client, { namespace: 'cl1' })), 'a new primitive')
  // Refused before sending: the quota did not move, and the handle was not used up.
  assert.equal(await command(s.server.port, 'GET', quotas.keys('n').value), '$1')
  assert.equal(lock.ended, false)
  await client.close() // closing twice is fine
  // The lease is still there: another client releases it by parts.
  const other = new ra.Locks(s.client, { namespace: 'cl1' })
  assert.deepEqual(await other.release('r', lock.token, lock.fence), { released: true, fence: lock.fence })
})

test('Symbol.asyncDispose closes the client (`await using`)', async () => {
  const client = await ra.Client.connect(s.server.url)
  const dedup = new ra.Dedup(client, { namespace: 'cl2' })
  assert.equal(typeof client[Symbol.asyncDispose], 'function')
  await client[Symbol.asyncDispose]()
  assertClosed(await rejection(dedup.firstSeen('e', 1000)), 'after asyncDispose')
})

test('batching is a client option; batchStats() counts batched decisions under concurrency', async () => {
  const limits = [{ algorithm: 'gcra', limit: 1_000_000, periodMs: 1000 }]
  const batched = await ra.Client.connect(s.server.url, { batching: { inFlight: 1, minBatch: 2 } })
  const alone = await ra.Client.connect(s.server.url, { batching: false })
  for (const [client, ns] of [[batched, 'cl3a'], [alone, 'cl3b']]) {
    const rl = new ra.RateLimiter(client, { namespace: ns, limits })
    const results = await concurrently(200, (i) => rl.consume(`u${i % 7}`))
    assert.equal(results.filter((r) => r.allowed).length, 200)
  }
  const on = batched.batchStats()
  assert.equal(on.decisions, 200)
  assert.equal(on.alone + on.batched + on.separate, 200, JSON.stringify(on))
  assert.ok(on.batches >= 1 && on.batched >= 2, `200 concurrent decisions, one call in flight: some batched (${JSON.stringify(on)})`)
  assert.deepEqual(alone.batchStats(), { decisions: 0, alone: 0, batches: 0, batched: 0, separate: 0 })
  const e = await rejection(ra.Client.connect(s.server.url, { batching: { inFlight: -1 } }))
  assert.ok(e instanceof ra.BadArgumentError, `${e?.name}: ${e?.message}`)
})
