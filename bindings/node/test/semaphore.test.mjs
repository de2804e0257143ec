// Semaphores through the Node package: never more than `capacity` holders, counted.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { concurrently, ra, rejection, useServer } from './fixture.mjs'

const s = useServer()

test('a semaphore never admits more than its capacity: 24 holders over 3 permits, counted', async () => {
  const capacity = 3
  const sem = new ra.Semaphore(s.client, { namespace: 'sm1', name: 'exports', capacity })
  const quotas = new ra.Quotas(s.client, { namespace: 'sm1-work' })
  let inside = 0
  let most = 0
  let refused = 0
  const fences = new Set()
  await concurrently(24, async () => {
    for (let done = 0; done < 6; ) {
      const permit = await sem.acquire(10_000)
      if (!permit.acquired) {
        refused++
        assert.ok(permit.retryAfterMs > 0)
        continue // try again at once: the refusal itself is the pacing (a round trip)
      }
      inside++
      most = Math.max(most, inside)
      fences.add(permit.fence)
      await quotas.add('work', 1, { max: 1e9 })
      inside--
      assert.equal((await permit.release()).released, true)
      done++
    }
  })
  assert.ok(most <= capacity, `${most} holders at once`)
  assert.equal(most, capacity, 'the permits were all in use at some point')
  assert.ok(refused > 0, 'some acquires found every permit taken')
  assert.equal(fences.size, 24 * 6, 'every permit its own fence')
  assert.equal((await sem.inspect()).live, 0)
})

test('permits: token re-acquire, by-parts release and extend, inspect, keys, the handle used up', async () => {
  const sem = new ra.Semaphore(s.client, { namespace: 'sm2', name: 'pool', capacity: 2 })
  assert.equal(sem.capacity, 2)
  assert.deepEqual(sem.keys, {
    permits: 'sm2:sem:v1:{pool}',
    holders: 'sm2:sem:v1:{pool}:holders',
    fence: 'sm2:sem:v1:{pool}:fence',
  })
  const a = await sem.acquire(5_000, { token: 'a' })
  const again = await sem.acquire(5_000, { token: 'a' })
  assert.equal(again.fence, a.fence, 'the same token holds the same permit')
  const b = await sem.acquire(5_000)
  assert.ok(b instanceof ra.Permit && b.fence > a.fence)
  const full = await sem.acquire(5_000)
  assert.deepEqual(Object.keys(full).sort(), ['acquired', 'retryAfterMs'])
  assert.equal(full.acquired, false)
  const info = await sem.inspect()
  assert.deepEqual([info.live, info.lastFence], [2, b.fence])
  assert.ok(info.nextExpiryMs > 0 && info.nextExpiryMs <= 5_000)
  assert.deepEqual(await sem.extend('a', a.fence, 9_000), { extended: true, fence: a.fence, ttlMs: 9_000 })
  assert.deepEqual(await sem.release('a', a.fence + 1), { lost: true, released: false }, 'a wrong fence frees nothing')
  assert.deepEqual(await sem.release('a', a.fence), { released: true, fence: a.fence })
  assert.deepEqual(await a.release(), { lost: true, released: false }, 'released by parts already')
  assert.ok((await rejection(a.release())) instanceof ra.HandleEndedError)
  assert.deepEqual(await b.extend(7_000), { extended: true, fence: b.fence, ttlMs: 7_000 })
  assert.deepEqual(await b.release(), { released: true, fence: b.fence })
  assert.equal((await sem.inspect()).live, 0)
})
