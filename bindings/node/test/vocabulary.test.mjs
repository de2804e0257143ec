// The vocabulary's words as this package spells them (docs/vocabulary.md): inspect()
// answers Locked | Free, one Lost answers every lease verb, nack's arguments are optional, and
// every documented spelling of an input is accepted (algorithms in both cases, delivery
// 'evalsha'), parsed by the library.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ra, useServer } from './fixture.mjs'

const s = useServer()

test('inspect answers Locked while held and Free after', async () => {
  const locks = new ra.Locks(s.client, { namespace: 'vo1' })
  const lock = await locks.acquire('r', 60_000)
  const locked = await locks.inspect('r')
  assert.equal(locked.held, true)
  assert.equal(locked.fence, lock.fence)
  assert.ok(locked.ttlMs > 0 && locked.ttlMs <= 60_000, `${locked.ttlMs}`)
  await lock.release()
  assert.deepEqual(await locks.inspect('r'), { held: false, fence: lock.fence, ttlMs: 0 })
})

test('one Lost for ack, nack, release and extend; nack without arguments retries at once', async () => {
  const queue = new ra.Queue(s.client, { namespace: 'vo2', name: 'q', maxDeliveries: 5 })
  await queue.enqueue('j', 'x')
  const first = (await queue.claim('w', 60_000)).jobs[0]
  assert.deepEqual(await first.nack(), { status: 'retrying', retryAfterMs: 0 })
  const second = (await queue.claim('w', 60_000)).jobs[0]
  assert.equal(second.deliveries, 2)
  // The first lease is gone: by parts, every verb of it answers the one Lost.
  assert.deepEqual(await queue.ack('j', 'w', first.fence), { lost: true, acked: false })
  assert.deepEqual(await queue.nack('j', 'w', first.fence), { lost: true, status: 'lost' })
  assert.deepEqual(await queue.extend('j', 'w', first.fence, 1_000), { lost: true, extended: false })
  assert.deepEqual(await second.ack(), { acked: true })
  const sem = new ra.Semaphore(s.client, { namespace: 'vo2', name: 's', capacity: 1 })
  const permit = await sem.acquire(60_000)
  assert.deepEqual(await sem.release(permit.token, permit.fence + 1), { lost: true, released: false })
  assert.deepEqual(await permit.release(), { released: true, fence: permit.fence })
})

test('algorithm names in both spellings, the same limit', async () => {
  const names = ra.algorithms()
  assert.equal(names.length, 6)
  for (const kebab of names) {
    const snake = kebab.replaceAll('-', '_')
    const burst = kebab === 'gcra' || kebab === 'token-bucket' ? { burst: 2 } : {}
    const rl = new ra.RateLimiter(s.client, {
      namespace: 'vo3',
      limits: [{ algorithm: snake, limit: 2, periodMs: 60_000, ...burst }],
    })
    assert.equal(rl.limits[0].algorithm, kebab, `${snake} is ${kebab}`)
    const decisions = await Promise.all([1, 2, 3].map(() => rl.consume(`id-${kebab}`)))
    assert.equal(decisions.filter((d) => d.allowed).length, 2, snake)
  }
})

test("delivery 'evalsha' is 'eval'; an unknown one is a BadArgumentError", async () => {
  const client = await ra.Client.connect(s.server.url, { delivery: 'evalsha' })
  const q = new ra.Quotas(client, { namespace: 'vo4' })
  assert.equal((await q.add('n', 1, { max: 1 })).applied, true)
  const e = await ra.Client.connect(s.server.url, { delivery: 'lua' }).catch((e) => e)
  assert.ok(e instanceof ra.BadArgumentError, `${e?.name}: ${e?.message}`)
  assert.equal(e.code, 'bad_argument')
})
