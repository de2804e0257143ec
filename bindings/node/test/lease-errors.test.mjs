// Failures of the lease primitives: a stalled server is an unknown outcome whose `retrySafe`
// follows the token, and bad input is a typed error — thrown or rejected, never a crash.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ra, rejection, thrown } from './fixture.mjs'
import { Server } from './server.mjs'

test('a stalled server: acquires, claims and ends are OutcomeUnknownError within the timeout', async () => {
  const server = await Server.start()
  try {
    const retry = { maxAttempts: 2, deadlineMs: 5_000, baseBackoffMs: 1, maxBackoffMs: 5 }
    const client = await ra.Client.connect(server.url, { timeoutMs: 200, retry })
    const locks = new ra.Locks(client, { namespace: 'st' })
    const sem = new ra.Semaphore(client, { namespace: 'st', name: 's', capacity: 1 })
    const idem = new ra.Idempotency(client, { namespace: 'st' })
    const queue = new ra.Queue(client, { namespace: 'st', name: 'q' })
    const lock = await locks.acquire('held', 30_000)
    server.pause()
    try {
      // All in flight together (each rejection caught as it comes).
      const calls = {
        'acquire, no token': [rejection(locks.acquire('r', 1_000)), false],
        'acquire with a token': [rejection(locks.acquire('r', 1_000, { token: 't' })), true],
        'permit with a token': [rejection(sem.acquire(1_000, { token: 't' })), true],
        'begin, no token': [rejection(idem.begin('s', 'k', 'r')), false],
        'claim': [rejection(queue.claim('w', 1_000)), false],
        'claimWithId': [rejection(queue.claimWithId('w', 1_000, 'c')), true],
        'enqueue': [rejection(queue.enqueue('j', 'x')), true],
        'release': [rejection(lock.release()), true],
      }
      for (const [what, [call, retrySafe]] of Object.entries(calls)) {
        const e = await call
        assert.ok(e instanceof ra.OutcomeUnknownError, `${what}: ${e}`)
        assert.deepEqual([e.nothingRan, e.retrySafe], [false, retrySafe], what)
      }
    } finally {
      server.resume()
    }
    // The release's outcome was unknown: repeat it by parts with the token and fence.
    const byParts = await locks.release('held', lock.token, lock.fence)
    assert.equal(typeof byParts.released, 'boolean')
    assert.equal((await locks.inspect('held')).held, false)
  } finally {
    server.stop()
  }
})

test('bad input to the lease primitives: every case a BadArgumentError, the process intact', async () => {
  const server = await Server.start()
  try {
    const client = await ra.Client.connect(server.url)
    const locks = new ra.Locks(client, { namespace: 'bad' })
    const sem = new ra.Semaphore(client, { namespace: 'bad', name: 's', capacity: 2 })
    const idem = new ra.Idempotency(client, { namespace: 'bad' })
    const queue = new ra.Queue(client, { namespace: 'bad', name: 'q', maxPayloadBytes: 16 })
    const sync = {
      'capacity 0': () => new ra.Semaphore(client, { namespace: 'b', name: 's', capacity: 0 }),
      'capacity fractional': () => new ra.Semaphore(client, { namespace: 'b', name: 's', capacity: 1.5 }),
      'namespace with a brace': () => new ra.Locks(client, { namespace: 'a{b' }),
      'claim ttl over a day': () => new ra.Idempotency(client, { namespace: 'b', ttlMs: 2 * 86_400_000 }),
      'maxDeliveries 0': () => new ra.Queue(client, { namespace: 'b', name: 'q', maxDeliveries: 0 }),
      'claimIdTtlMs under a second': () => new ra.Queue(client, { namespace: 'b', name: 'q', claimIdTtlMs: 10 }),
      'empty resource key': () => locks.keys(''),
      'claim id too long': () => queue.claimKey('x'.repeat(300)),
    }
    for (const [what, f] of Object.entries(sync)) {
      const e = thrown(f)
      assert.ok(e instanceof ra.BadArgumentError, `${what}: ${e?.name}: ${e?.message}`)
    }
    // A value of the wrong JavaScript type is a TypeError (test/types.test.mjs calls every method).
    for (const f of [
      () => new ra.Semaphore(client, { namespace: 'b', name: 's', capacity: '2' }),
      () => new ra.Locks(client),
    ]) {
      assert.ok(thrown(f) instanceof TypeError)
    }
    const rejected = {
      'ttl 0': () => locks.acquire('r', 0),
      'ttl NaN': () => locks.acquire('r', NaN),
      'ttl beyond 7 days': () => locks.acquire('r', 8 * 86_400_000),
      'empty token': () => locks.acquire('r', 1_000, { token: '' }),
      'token with a newline': () => sem.acquire(1_000, { token: 'a\nb' }),
      'fractional fence': () => locks.release('r', 't', 1.5),
      'negative fence': () => sem.extend('t', -1, 1_000),
      'empty scope': () => idem.begin('', 'k', 'r'),
      'status out of range': () => idem.complete('s', 'k', 't', 1, { status: 70_000 }),
      'body and reference': () => idem.complete('s', 'k', 't', 1, { status: 200, body: 'a', reference: 'b' }),
      'payload too large': () => queue.enqueue('j', 'x'.repeat(17)),
      'empty job id': () => queue.enqueue('', 'x'),
      'delay and runAt': () => queue.enqueue('j', 'x', { delayMs: 1, runAt: 1 }),
      'maxJobs 0': () => queue.claim('w', 1_000, { maxJobs: 0 }),
      'maxJobs over 1000': () => queue.claim('w', 1_000, { maxJobs: 1001 }),
      'worker too long': () => queue.claim('w'.repeat(129), 1_000),
      'nack pause over a year': () => queue.nack('j', 'w', 1, 400 * 86_400_000, 'e'),
      'dead letters count 0': () => queue.deadLetters({ count: 0 }),
      'reap limit 0': () => queue.reap(0),
    }
    for (const [what, f] of Object.entries(rejected)) {
      const e = await rejection(f())
      assert.ok(e instanceof ra.BadArgumentError, `${what}: ${e?.name}: ${e?.message}`)
      assert.equal(e.nothingRan, true, what)
    }
    // A watchdog configuration the library refuses: a typed error (the handle is then ended).
    const lock = await locks.acquire('w', 5_000)
    assert.ok(thrown(() => lock.watch({ renewFraction: 2 })) instanceof ra.BadArgumentError)
    assert.deepEqual(await locks.release('w', lock.token, lock.fence), { released: true, fence: lock.fence })
    // Still working after all of that.
    assert.equal((await locks.acquire('r', 1_000)).acquired, true)
  } finally {
    server.stop()
  }
})
