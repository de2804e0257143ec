// Locks through the Node package, against a real server: holders counted inside the lock, fences
// ordered, the handle used up by its end verb, the watchdog, and aborted acquires.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { concurrently, ra, rejection, useServer } from './fixture.mjs'
import { Server, command } from './server.mjs'

const s = useServer()

/** Enters `resource` with `locks`, waiting for it; runs `body(lock)` and releases. */
async function withLock(locks, resource, body) {
  const lock = await locks.acquire(resource, 10_000, { waitMs: 30_000 })
  assert.equal(lock.acquired, true, 'waited for the lock')
  try {
    return await body(lock)
  } finally {
    const released = await lock.release()
    assert.equal(released.released, true)
    assert.equal(released.fence, lock.fence)
  }
}

test('locks never overlap: 16 holders over two clients, counted inside; fences strictly increase', async () => {
  const second = await ra.Client.connect(s.server.url)
  const clients = [s.client, second]
  const quotas = new ra.Quotas(s.client, { namespace: 'lk-work' })
  let inside = 0
  let most = 0
  const fences = []
  const rounds = 12
  await concurrently(16, async (i) => {
    const locks = new ra.Locks(clients[i % 2], { namespace: 'lk1' })
    for (let r = 0; r < rounds; r++) {
      await withLock(locks, 'invoice-42', async (lock) => {
        inside++
        most = Math.max(most, inside)
        fences.push(lock.fence)
        // Real work inside the lock: a round trip, so the other holders' attempts interleave.
        await quotas.add('work', 1, { max: 1e9 })
        inside--
      })
    }
  })
  assert.equal(most, 1, 'never two holders inside the lock')
  assert.equal(fences.length, 16 * rounds)
  for (let i = 1; i < fences.length; i++) {
    assert.ok(fences[i] > fences[i - 1], `fence ${i}: ${fences[i]} after ${fences[i - 1]}`)
  }
  assert.equal(await quotas.get('work'), 16 * rounds)
})

test('a refusal is a value; the token re-acquires its own lease; by-parts calls; inspect and keys', async () => {
  const locks = new ra.Locks(s.client, { namespace: 'lk2' })
  const lock = await locks.acquire('r', 5_000, { token: 'worker-7' })
  assert.ok(lock instanceof ra.LockGuard && lock instanceof ra.Lock, 'LockGuard, and its deprecated name Lock')
  assert.deepEqual([lock.acquired, lock.resource, lock.token, lock.ttlMs], [true, 'r', 'worker-7', 5_000])
  assert.ok(lock.expiresInMs > 0 && lock.expiresInMs <= 5_000)
  const held = await locks.acquire('r', 5_000)
  assert.equal(held.acquired, false)
  assert.ok(held.retryAfterMs > 0 && held.retryAfterMs <= 5_000, `${held.retryAfterMs}`)
  // Acquiring again with the same token (a resend after an unknown outcome) is the same lease.
  const again = await locks.acquire('r', 5_000, { token: 'worker-7' })
  assert.equal(again.fence, lock.fence)
  const info = await locks.inspect('r')
  assert.deepEqual([info.held, info.fence], [true, lock.fence])
  assert.deepEqual(await lock.extend(8_000), { extended: true, fence: lock.fence, ttlMs: 8_000 })
  assert.equal(lock.ttlMs, 8_000)
  // By parts: a wrong fence changes nothing; the right one releases.
  assert.deepEqual(await locks.extend('r', 'worker-7', lock.fence - 1, 1_000), { lost: true, extended: false })
  assert.deepEqual(await locks.release('r', 'worker-8', lock.fence), { lost: true, released: false })
  assert.deepEqual(await locks.release('r', 'worker-7', lock.fence), { released: true, fence: lock.fence })
  // The handle learns its lease is gone as a value.
  assert.deepEqual(await lock.extend(1_000), { lost: true, extended: false })
  assert.deepEqual(await lock.release(), { lost: true, released: false })
  const free = await locks.inspect('r')
  assert.deepEqual([free.held, free.fence, free.ttlMs], [false, lock.fence, 0])
  assert.deepEqual(locks.keys('r'), { lock: 'lk2:lock:v1:{r}', fence: 'lk2:lock:v1:{r}:fence' })
})

test('an end verb uses the handle up: a second release is HandleEndedError and sends nothing', async () => {
  const locks = new ra.Locks(s.client, { namespace: 'lk3' })
  const lock = await locks.acquire('r', 5_000)
  // Both calls made before either settles: the second is refused all the same.
  const [first, second] = await Promise.allSettled([lock.release(), lock.release()])
  assert.deepEqual(first.value, { released: true, fence: lock.fence })
  const e = second.reason
  assert.ok(e instanceof ra.HandleEndedError && e instanceof ra.ClientError, `${e}`)
  assert.deepEqual([e.code, e.nothingRan], ['handle_ended', true])
  assert.equal(lock.ended, true)
  for (const call of [() => lock.extend(1_000), () => lock.release(), () => lock.unwatch()]) {
    assert.ok((await rejection(call())) instanceof ra.HandleEndedError)
  }
  assert.throws(() => lock.watch(), ra.HandleEndedError)
  // The next holder is unaffected: the refused calls sent nothing.
  const next = await locks.acquire('r', 5_000)
  assert.equal(next.acquired, true)
  assert.ok(next.fence > lock.fence)
  await next.release()
})

test('waitMs waits for the holder; AbortSignal abandons the wait and the lock stays free', async () => {
  const locks = new ra.Locks(s.client, { namespace: 'lk4' })
  const holder = await locks.acquire('r', 60_000)
  const waiting = locks.acquire('r', 5_000, { waitMs: 30_000 })
  // A waiter gets the lock once the holder lets go.
  await holder.release()
  const got = await waiting
  assert.equal(got.acquired, true)
  assert.ok(got.fence > holder.fence)
  // Abandoned while the lock is held: AbortedError, and the abandoned wait takes nothing later.
  const ac = new AbortController()
  const abandoned = locks.acquire('r', 5_000, { waitMs: 30_000, signal: ac.signal })
  ac.abort(new Error('client went away'))
  const e = await rejection(abandoned)
  assert.ok(e instanceof ra.AbortedError && e instanceof ra.OutcomeUnknownError)
  assert.equal(e.retrySafe, false, 'a waiting acquire has a random token: not retry-safe')
  await got.release()
  const after = await locks.acquire('r', 5_000)
  assert.equal(after.acquired, true, 'the abandoned waiter did not take the lock')
  await after.release()
  // Already aborted: nothing is sent, the fence counter does not move.
  const before = (await locks.inspect('r')).fence
  const pre = await rejection(locks.acquire('r', 5_000, { signal: AbortSignal.abort() }))
  assert.deepEqual([pre instanceof ra.AbortedError, pre.nothingRan], [true, true])
  assert.equal((await locks.inspect('r')).fence, before)
  // A token and a wait together are refused (the wait uses a token of its own).
  const both = await rejection(locks.acquire('r', 5_000, { token: 't', waitMs: 10 }))
  assert.ok(both instanceof ra.BadArgumentError)
})

test('an acquire aborted on a stalled server may have run: the same token finds out', async () => {
  const server = await Server.start()
  try {
    const client = await ra.Client.connect(server.url, { timeoutMs: 60_000 })
    const locks = new ra.Locks(client, { namespace: 'lk5' })
    server.pause()
    const ac = new AbortController()
    const pending = locks.acquire('r', 30_000, { token: 'mine', signal: ac.signal })
    // Whether or not the request reached the paused server, abort the wait.
    setImmediate(() => ac.abort())
    const e = await rejection(pending)
    server.resume()
    assert.ok(e instanceof ra.AbortedError)
    assert.equal(e.retrySafe, true, 'a token makes the acquire retry-safe')
    // The rule: it may have run. Acquiring again with the token yields the lease either way.
    const lock = await locks.acquire('r', 30_000, { token: 'mine' })
    assert.equal(lock.acquired, true)
    assert.deepEqual(await lock.release(), { released: true, fence: lock.fence })
  } finally {
    server.stop()
  }
})

test('the watchdog keeps a lock held past its ttl; unwatch hands it back', async () => {
  const locks = new ra.Locks(s.client, { namespace: 'lk6' })
  // A 2 s lease, renewed every ~0.67 s: a process descheduled for over a second on a loaded
  // machine still renews in time (the test proves it renews, not how fast).
  const lock = await locks.acquire('r', 2_000)
  const lost = lock.watch()
  assert.ok(lost instanceof AbortSignal)
  assert.equal(lost.aborted, false)
  // 1.3 lease lengths later the lock is still this lease's.
  await new Promise((r) => setTimeout(r, 2_600))
  const info = await locks.inspect('r')
  assert.deepEqual([info.held, info.fence, lost.aborted], [true, lock.fence, false])
  const e = await rejection(lock.extend(1_000))
  assert.ok(e instanceof ra.BadArgumentError, 'a watched lease is extended by its watchdog')
  assert.throws(() => lock.watch(), ra.BadArgumentError)
  await lock.unwatch()
  assert.equal((await lock.extend(5_000)).extended, true, 'held again after unwatch')
  assert.deepEqual(await lock.release(), { released: true, fence: lock.fence })
  assert.equal(lost.aborted, false, 'an unwatch is not a loss')
})

test('the watchdog reports a lock taken away as lost (not_held), with a LeaseLostError', async () => {
  const locks = new ra.Locks(s.client, { namespace: 'lk7' })
  const lock = await locks.acquire('r', 600)
  const lost = lock.watch({ renewFraction: 0.25, marginFraction: 0.05 })
  const fired = new Promise((resolve) => lost.addEventListener('abort', resolve, { once: true }))
  // Someone deletes the lock behind its back: the next renewal finds it gone.
  assert.equal(await command(s.server.port, 'DEL', locks.keys('r').lock), ':1')
  await fired
  const reason = lost.reason
  assert.ok(reason instanceof ra.LeaseLostError && reason instanceof ra.RedisAtomicError)
  assert.deepEqual([reason.code, reason.reason, reason.fence], ['lease_lost', 'not_held', lock.fence])
  assert.deepEqual(await lock.release(), { lost: true, released: false })
})

test('the watchdog declares a lease lost (unconfirmed) when the server stops answering', async () => {
  const server = await Server.start()
  try {
    const client = await ra.Client.connect(server.url, { timeoutMs: 100 })
    const locks = new ra.Locks(client, { namespace: 'lk8' })
    const lock = await locks.acquire('r', 500)
    const lost = lock.watch()
    const fired = new Promise((resolve) => lost.addEventListener('abort', resolve, { once: true }))
    server.pause()
    await fired
    server.resume()
    assert.ok(lost.reason instanceof ra.LeaseLostError)
    assert.deepEqual([lost.reason.reason, lost.reason.fence], ['unconfirmed', lock.fence])
    // Ending the handle after a loss is still a value, never a crash.
    assert.equal(typeof (await lock.release()).released, 'boolean')
  } finally {
    server.stop()
  }
})
