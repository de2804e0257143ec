// Every URL form the library accepts, through Client.connect: a Unix socket, a Redis Cluster
// (one node owning every slot: seed URL arrays and `cluster: true`), and Sentinel.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ra, rejection } from './fixture.mjs'
import { Server } from './server.mjs'

const limits = [{ algorithm: 'gcra', limit: 3, periodMs: 60_000 }]

/** Exactly the limit admitted through `client`: the primitives work over it. */
async function admitsExactly(client, namespace) {
  const rl = new ra.RateLimiter(client, { namespace, limits })
  const results = await Promise.all(Array.from({ length: 10 }, () => rl.consume('u')))
  assert.equal(results.filter((r) => r.allowed).length, 3)
}

test('redis+unix:// connects over a Unix socket', async (t) => {
  const server = await Server.start({ unixSocket: true })
  t.after(() => server.stop())
  assert.match(server.url, /^redis\+unix:\/\//)
  const client = await ra.Client.connect(server.url)
  assert.equal(client.isCluster, false)
  await admitsExactly(client, 'unix')
})

test('a Redis Cluster: an array of seed URLs, or one URL with cluster: true', async (t) => {
  const server = await Server.start({ cluster: true })
  t.after(() => server.stop())
  for (const client of [
    await ra.Client.connect([server.url]),
    await ra.Client.connect(server.url, { cluster: true }),
  ]) {
    assert.equal(client.isCluster, true)
    await admitsExactly(client, `cluster-${Math.random().toString(36).slice(2)}`)
  }
  const none = await rejection(ra.Client.connect([]))
  assert.ok(none instanceof ra.BadArgumentError)
})

test('redis+sentinel:// connects to the primary the Sentinel names', async (t) => {
  const primary = await Server.start()
  t.after(() => primary.stop())
  const sentinel = await Server.start({ sentinel: { service: 'svc', primaryPort: primary.port } })
  t.after(() => sentinel.stop())
  const client = await ra.Client.connect(`redis+sentinel://127.0.0.1:${sentinel.port}/svc`, { timeoutMs: 2000 })
  await admitsExactly(client, 'sentinel')
  // The decisions landed on the primary.
  const rl = new ra.RateLimiter(client, { namespace: 'sentinel', limits })
  const direct = await ra.Client.connect(primary.url)
  const same = new ra.RateLimiter(direct, { namespace: 'sentinel', limits })
  assert.deepEqual(rl.keys('u'), same.keys('u'))
  assert.equal((await same.consume('u')).allowed, false)
  const unknown = await rejection(ra.Client.connect(`redis+sentinel://127.0.0.1:${sentinel.port}/nope`, { timeoutMs: 500 }))
  assert.ok(unknown instanceof ra.RedisAtomicError, `${unknown.name}: ${unknown.message}`)
})
