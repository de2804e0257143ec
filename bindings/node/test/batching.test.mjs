// Natural batching: decisions waiting for the same entry point leave together as one call of the
// batch entry point, and each still gets its own reply: exactly `limit` admitted under
// concurrency, and one bad decision in a batch fails alone.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { concurrently, ra, rejection, useServer } from './fixture.mjs'
import { command } from './server.mjs'

const s = useServer()
// One call in flight, two waiting make a batch: every decision after the first waits.
const BATCHED = { batching: { inFlight: 1, minBatch: 2 } }

for (const algorithm of ra.algorithms()) {
  test(`${algorithm}: exactly limit admitted with batching on`, async () => {
    const client = await ra.Client.connect(s.server.url, BATCHED)
    try {
      const limit = 25
      const rl = new ra.RateLimiter(client, { namespace: `b-${algorithm}`, limits: [{ algorithm, limit, periodMs: 60_000 }] })
      const results = await concurrently(300, () => rl.consume('one'))
      assert.equal(results.filter((r) => r.allowed).length, limit)
      const stats = client.batchStats()
      assert.equal(stats.decisions, 300)
      assert.equal(stats.alone + stats.batched + stats.separate, 300, JSON.stringify(stats))
      assert.ok(stats.batches >= 1 && stats.batched >= 2, JSON.stringify(stats))
    } finally {
      await client.close()
    }
  })
}

test('a bad decision in a batch fails alone; the others get their own replies', async () => {
  const client = await ra.Client.connect(s.server.url, BATCHED)
  try {
    const rl = new ra.RateLimiter(client, { namespace: 'bad', limits: [{ algorithm: 'fixed-window', limit: 5, periodMs: 60_000 }] })
    const quotas = new ra.Quotas(client, { namespace: 'bad' })
    const wrong = rl.keys('wrong').limits[0]
    assert.equal(await command(s.server.port, 'LPUSH', wrong, 'x'), ':1')
    // The first call goes alone (its turn ends before the others are made); the other 19, made in
    // one turn, wait for it and leave as one batch, with the bad decision in the middle and a
    // quota decision (another script, the same entry point).
    const first = rl.consume('u0')
    await null
    const calls = [first, ...Array.from({ length: 19 }, (_, j) => j + 1).map((i) =>
      i === 7 ? rl.consume('wrong') : i === 12 ? quotas.add('q', 3, { max: 10 }) : rl.consume(`u${i}`))]
    const settled = await Promise.allSettled(calls)
    const bad = settled[7]
    assert.equal(bad.status, 'rejected')
    assert.ok(bad.reason instanceof ra.WrongTypeError, `${bad.reason?.name}: ${bad.reason?.message}`)
    assert.deepEqual(settled[12], { status: 'fulfilled', value: { applied: true, value: 3 } })
    for (const [i, r] of settled.entries()) {
      if (i === 7 || i === 12) continue
      assert.equal(r.status, 'fulfilled', `decision ${i}: ${r.reason}`)
      assert.equal(r.value.allowed, true)
      assert.equal(r.value.remaining, 4)
    }
    // Its key untouched, and the batch carried it with the others.
    assert.equal(await command(s.server.port, 'LLEN', wrong), ':1')
    const stats = client.batchStats()
    assert.equal(stats.alone, 1, JSON.stringify(stats))
    assert.equal(stats.batches, 1, JSON.stringify(stats))
    assert.equal(stats.batched, 19, JSON.stringify(stats))
  } finally {
    await client.close()
  }
})
