// Rate limits through the Node package, against a real server: the invariants, counted.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { concurrently, declarations, ra, useServer } from './fixture.mjs'

const s = useServer()
const DAY = 86_400_000

test('the declared Algorithm type names exactly the library\'s algorithms', () => {
  const dts = declarations()
  const union = dts.match(/^export type Algorithm = (.*)$/m)
  assert.ok(union, 'dist/ratelimit.d.ts declares the Algorithm union')
  const names = [...union[1].matchAll(/'([a-z-]+)'/g)].map((m) => m[1])
  assert.deepEqual([...names].sort(), [...ra.algorithms()].sort())
  assert.equal(ra.algorithms().length, 6)
})

for (const algorithm of ra.algorithms()) {
  test(`${algorithm}: exactly \`limit\` of 400 concurrent consumes are admitted`, async () => {
    const limit = 25
    const rl = new ra.RateLimiter(s.client, {
      namespace: `conc-${algorithm}`,
      limits: [{ algorithm, limit, periodMs: DAY }],
    })
    const results = await concurrently(400, () => rl.consume('one-identity'))
    assert.equal(results.filter((r) => r.allowed).length, limit)
    for (const r of results) {
      if (r.allowed) assert.ok(r.remaining >= 0 && r.remaining < limit)
      else assert.ok(r.retryAfterMs > 0, 'a refusal says when to come back')
    }
    // Refusals charged nothing: the next identity is untouched, this one stays spent.
    assert.equal((await rl.consume('another-identity')).allowed, true)
    assert.equal((await rl.consume('one-identity')).allowed, false)
  })
}

test('a policy decides all or nothing: a refusal charges no limit', async () => {
  const rl = new ra.RateLimiter(s.client, {
    namespace: 'policy',
    limits: [
      { algorithm: 'gcra', limit: 10, periodMs: DAY, name: 'burst' },
      { algorithm: 'fixed-window', limit: 5, periodMs: DAY, name: 'daily' },
    ],
  })
  const results = await concurrently(60, () => rl.consume('u'))
  assert.equal(results.filter((r) => r.allowed).length, 5)
  const last = await rl.consume('u')
  assert.equal(last.allowed, false)
  assert.deepEqual(last.limits.map((l) => l.name), ['burst', 'daily'])
  // GCRA admitted all 61 checks but was charged only for the 5 the policy admitted.
  assert.equal(last.limits[0].remaining, 5)
  assert.equal(last.limits[1].remaining, 0)
  assert.equal(last.limits[0].retryAfterMs, 0)
  assert.ok(last.limits[1].retryAfterMs > 0)
})

test('a request id is charged once; every replay returns the first answer exactly', async () => {
  const rl = new ra.RateLimiter(s.client, {
    namespace: 'rid',
    limits: [{ algorithm: 'fixed-window', limit: 10, periodMs: DAY }],
  })
  // 50 concurrent sends of one new request: one decides, 49 replay it.
  const sends = await concurrently(50, () => rl.consume('u', { cost: 3, requestId: 'order-1' }))
  assert.equal(sends.filter((r) => !r.replayed).length, 1)
  for (const r of sends) {
    assert.equal(r.allowed, true)
    assert.equal(r.remaining, 7)
  }
  const later = await rl.consume('u', { cost: 3, requestId: 'order-1' })
  assert.deepEqual({ ...later, resetAfterMs: 0, limits: [] }, { ...sends[0], replayed: true, resetAfterMs: 0, limits: [] })
  // Charged once: 10 - 3, then 1 more.
  assert.equal((await rl.consume('u')).remaining, 6)
  assert.notEqual(rl.keys('u', 'order-1').request, undefined)
})

test('costs: a cost above the burst is CostExceedsBurstError, never a wait', async () => {
  const rl = new ra.RateLimiter(s.client, {
    namespace: 'cost',
    limits: [{ algorithm: 'token-bucket', limit: 10, periodMs: 1000, burst: 4 }],
  })
  assert.equal(rl.limits[0].burst, 4)
  assert.equal((await rl.consume('u', { cost: 4 })).remaining, 0)
  const e = await rl.consume('u', { cost: 5 }).catch((e) => e)
  assert.ok(e instanceof ra.CostExceedsBurstError)
  assert.equal(e.code, 'cost_exceeds_burst')
  assert.deepEqual([e.cost, e.burst, e.nothingRan], [5, 4, true])
})

test('limits and keys() show what the library normalised', () => {
  const rl = new ra.RateLimiter(s.client, {
    namespace: 'app',
    limits: [{ algorithm: 'gcra', limit: 3, periodMs: 2500 }],
  })
  assert.deepEqual(rl.limits, [{ algorithm: 'gcra', limit: 3, periodMs: 2500, burst: 3, name: 'gcra' }])
  assert.equal(rl.requestTtlMs, 2500)
  const k = rl.keys('api-key-1')
  assert.match(k.limits[0], /^app:rl:v1:\{[0-9a-f]+\}:gcra:gcra$/)
  assert.equal(k.request, undefined)
  // The request record: the identity's tag, the policy's digest, the id's digest.
  const req = rl.keys('api-key-1', 'req-1').request
  assert.match(req, /^app:rl:v1:\{[0-9a-f]+\}:req:[0-9a-f]+:[0-9a-f]+$/)
  assert.ok(req.startsWith(k.limits[0].split('}')[0] + '}'), 'one slot with the limit')
})
