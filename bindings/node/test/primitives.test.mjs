// Quotas, dedup and fenced writes through the Node package: invariants counted under concurrency.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { concurrently, ra, rejection, useServer } from './fixture.mjs'
import { command } from './server.mjs'

const s = useServer()

test('a bounded counter never leaves its bounds: exactly `max` of 200 concurrent adds apply', async () => {
  const q = new ra.Quotas(s.client, { namespace: 'q1' })
  const results = await concurrently(200, () => q.add('credits', 1, { max: 50 }))
  assert.equal(results.filter((r) => r.applied).length, 50)
  for (const r of results) assert.ok(r.value >= 0 && r.value <= 50)
  assert.equal(await q.get('credits'), 50)
  // A refund below the minimum is refused; clamped, it stops at the minimum.
  assert.deepEqual(await q.add('credits', -60, { max: 50 }), { applied: false, value: 50 })
  assert.deepEqual(await q.add('credits', -60, { max: 50, clamp: true }), { applied: true, value: 0 })
})

test('an add with a request id applies once; every repeat returns the first answer', async () => {
  const q = new ra.Quotas(s.client, { namespace: 'q2' })
  const sends = await concurrently(40, () => q.add('n', 7, { max: 100, requestId: 'req-1' }))
  for (const r of sends) assert.deepEqual(r, { applied: true, value: 7 })
  assert.equal(await q.get('n'), 7)
  // A refused answer is recorded too.
  assert.deepEqual(await q.add('n', 500, { max: 100, requestId: 'req-2' }), { applied: false, value: 7 })
  await q.add('n', 1, { max: 100 })
  assert.deepEqual(await q.add('n', 500, { max: 100, requestId: 'req-2' }), { applied: false, value: 7 })
  assert.match(q.keys('n', 'req-1').request, /^q2:quota:v1:\{n\}:req:[0-9a-f]+$/)
})

test('TTLs: set once, extended only forward; raise never lowers; ZADD GT never lowers', async () => {
  const q = new ra.Quotas(s.client, { namespace: 'q3' })
  await q.add('t', 1, { max: 10, ttlMs: 60_000 })
  assert.equal(await q.expireOnce('t', 1_000), false, 'a TTL is set already')
  assert.equal(await q.extendTtl('t', 1_000), false, 'never shortened')
  assert.equal(await q.extendTtl('t', 120_000), true)
  const ttl = Number((await command(s.server.port, 'PTTL', q.keys('t').value)).slice(1))
  assert.ok(ttl > 60_000 && ttl <= 120_000, `${ttl}`)
  const raises = await concurrently(50, (i) => q.raise('max', i))
  // Each answer is at least its candidate: a raise never reports a value below what it asked.
  for (const [i, r] of raises.entries()) assert.ok(r.value >= i)
  assert.deepEqual(await q.raise('max', 10), { raised: false, value: 49 })
  assert.equal(await q.addUnlessSmaller('scores', [{ score: 5, member: 'a' }, { score: 3, member: Buffer.from('b') }]), 2)
  assert.equal(await q.addUnlessSmaller('scores', [{ score: 1, member: 'a' }, { score: 4, member: 'b' }]), 1)
})

test('dedup: exactly one of 100 concurrent sightings is first; a resend with the same token agrees', async () => {
  const d = new ra.Dedup(s.client, { namespace: 'd1' })
  const seen = await concurrently(100, () => d.firstSeen('evt-1', 60_000))
  assert.equal(seen.filter(Boolean).length, 1)
  assert.equal(await d.firstSeen('evt-2', 60_000, { token: 'worker-7' }), true)
  assert.equal(await d.firstSeen('evt-2', 60_000, { token: 'worker-7' }), true, 'the same claim, resent')
  assert.equal(await d.firstSeen('evt-2', 60_000, { token: 'worker-8' }), false)
  assert.deepEqual(await d.firstSeenMany(['a', 'b', 'a', 'evt-1'], 60_000), [true, true, false, false])
  assert.equal(d.keys('a').seen, 'd1:dedup:v1:{a}')
})

test('fenced writes: a stale fence applies nothing; the newest fence wins', async () => {
  const f = new ra.FencedWrites(s.client, { namespace: 'f1' })
  const state = f.key('order-1', 'state')
  const items = f.key('order-1', 'items')
  const newer = await f.write('order-1', 5, [
    { op: 'set', key: state, value: 'paid', ttlMs: 60_000 },
    { op: 'hset', key: items, fields: { sku: 'A-1', qty: Buffer.from('2') } },
    { op: 'sadd', key: f.key('order-1', 'tags'), members: ['x', 'y'] },
  ])
  assert.deepEqual(newer, { applied: true, fence: 5, writes: 3 })
  const zombie = await f.write('order-1', 3, [{ op: 'set', key: state, value: 'cancelled' }])
  assert.deepEqual(zombie, { applied: false, fence: 5, writes: 0 })
  assert.equal(await command(s.server.port, 'GET', state), '$4')
  assert.equal(await f.highest('order-1'), 5)
  assert.equal(await f.highest('order-2'), 0)
  // Concurrent holders: whatever the order, the record ends at the largest fence.
  await concurrently(20, (i) => f.write('order-3', i + 1, [{ op: 'del', key: f.key('order-3', 'x') }]))
  assert.equal(await f.highest('order-3'), 20)
  assert.equal(f.keys('order-1').fence, 'f1:fenced:v1:{order-1}:fence')
  const e = await rejection(f.write('order-1', 6, [{ op: 'hdel', key: items }]))
  assert.ok(e instanceof ra.BadArgumentError)
})
