// What an error says about a retry is the library's classification, read as it is: a
// refused connect ran nothing and is transient; a call whose every attempt timed out says
// `timedOut`; every error carries all four facts, whatever its class.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ra, rejection } from './fixture.mjs'
import { Server, freePort } from './server.mjs'

function facts(e) {
  return { code: e.code, nothingRan: e.nothingRan, transient: e.transient, timedOut: e.timedOut, retrySafe: e.retrySafe }
}

test('a refused connect: ConnectionError, nothing ran, transient (a resend may find the server up)', async () => {
  const port = await freePort()
  const e = await rejection(ra.Client.connect(`redis://127.0.0.1:${port}`, { timeoutMs: 2000 }))
  assert.ok(e instanceof ra.ConnectionError, `${e?.name}: ${e?.message}`)
  assert.deepEqual(facts(e), { code: 'connection', nothingRan: true, transient: true, timedOut: false, retrySafe: true })
})

test('every attempt timed out: timedOut, whatever the last attempt\'s class (2 attempts, a stopped server)', async () => {
  const server = await Server.start()
  try {
    const retry = { maxAttempts: 2, deadlineMs: 10_000, baseBackoffMs: 1, maxBackoffMs: 5 }
    const client = await ra.Client.connect(server.url, { timeoutMs: 300, retry, poolSize: 1 })
    const limits = [{ algorithm: 'fixed-window', limit: 10, periodMs: 60_000 }]
    const rl = new ra.RateLimiter(client, { namespace: 'facts', limits })
    assert.equal((await rl.consume('u')).allowed, true)
    server.pause()
    let e
    try {
      // A request id makes the consume retry-safe: the client resends it once.
      e = await rejection(rl.consume('u', { requestId: 'r-1' }))
    } finally {
      server.resume()
    }
    assert.ok(e instanceof ra.RedisAtomicError, `${e?.name}: ${e?.message}`)
    assert.equal(e.timedOut, true, `${e.name} (${e.code}): ${e.message}`)
    assert.equal(e.retrySafe, true, 'a request id makes the resend safe')
    if (e instanceof ra.OutcomeUnknownError) assert.equal(e.attempts, 2)
  } finally {
    server.stop()
  }
})
