// A connection that drops after the server ran a call and before its reply arrived: the call is
// sent once. ioredis on its own resends what was written but unanswered when a connection
// dropped (`autoResendUnfulfilledCommands`, `maxRetriesPerRequest`); a rate-limit decision
// without a request id is not retry-safe, so a resend would charge it twice. Counted on the
// server (the limit's remaining units), through a TCP proxy that swallows one reply and cuts
// the connection. The control (a plain ioredis client through the same proxy) shows the
// counting sees a resend. The same proxy, handing on a reply of the wrong shape, shows a bad
// reply reaches the caller as the package's own error class.
import assert from 'node:assert/strict'
import { createServer, connect } from 'node:net'
import { createRequire } from 'node:module'
import { test } from 'node:test'
import { after, before } from 'node:test'
import { rejection } from './fixture.mjs'
import { Server } from './server.mjs'

// The TypeScript implementation (the addon does not run on ioredis), and its script table.
const require = createRequire(import.meta.url)
const ra = require('../dist/index.js')
const scripts = require('../dist/scripts.js')
const { Redis } = require('ioredis')
const s = {}
before(async () => {
  s.server = await Server.start()
  s.client = await ra.Client.connect(s.server.url)
})
after(async () => {
  await s.client?.close()
  s.server?.stop()
})
const limits = [{ algorithm: 'anchored-window', limit: 100, periodMs: 600_000 }]

/** A proxy to `port`; `arm()` makes it swallow the next reply and cut that connection (and with
 * `refuse`, stop listening: every reconnect is refused, as while a server restarts);
 * `replace(bytes)` makes it hand on `bytes` instead of the next reply (one read: a short reply
 * arrives whole on loopback). */
async function proxy(port) {
  let armed = false
  let refuse = false
  let replacement = null
  const sockets = new Set()
  const server = createServer((down) => {
    const up = connect(port, '127.0.0.1')
    sockets.add(down).add(up)
    down.on('data', (d) => up.write(d))
    up.on('data', (d) => {
      if (replacement !== null) {
        down.write(replacement)
        replacement = null
      } else if (armed) {
        armed = false
        if (refuse && server.listening) server.close()
        down.destroy()
        up.destroy()
      } else down.write(d)
    })
    for (const sock of [down, up]) sock.on('error', () => {}).on('close', () => { down.destroy(); up.destroy() })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: server.address().port,
    arm: (options) => { armed = true; refuse = options?.refuse === true },
    replace: (bytes) => { replacement = bytes },
    close: () => { for (const x of sockets) x.destroy(); if (server.listening) server.close() },
  }
}

/** Units of `identity` the limit still has (a direct consume, then subtract its own unit). */
async function remaining(namespace, identity) {
  const direct = new ra.RateLimiter(s.client, { namespace, limits })
  const r = await direct.consume(identity)
  return r.remaining + 1
}

test('an unsafe call whose reply is lost ran once and is OutcomeUnknownError, retrySafe false', async (t) => {
  const p = await proxy(s.server.port)
  t.after(() => p.close())
  const client = await ra.Client.connect(`redis://127.0.0.1:${p.port}`, { timeoutMs: 2000 })
  t.after(() => client.close())
  const rl = new ra.RateLimiter(client, { namespace: 'drop', limits })
  await rl.consume('warm-up') // loads the script: the swallowed reply is the decision's own
  p.arm()
  const e = await rejection(rl.consume('victim'))
  assert.ok(e instanceof ra.OutcomeUnknownError, `${e}`)
  assert.deepEqual([e.code, e.retrySafe, e.nothingRan], ['outcome_unknown', false, false])
  assert.equal(await remaining('drop', 'victim'), 99, 'the decision ran exactly once')
})

test('a retry-safe call whose reply is lost and whose resends are refused ran: OutcomeUnknownError, not NotSentError', async (t) => {
  const p = await proxy(s.server.port)
  t.after(() => p.close())
  const client = await ra.Client.connect(`redis://127.0.0.1:${p.port}`, { timeoutMs: 2000, retry: { maxAttempts: 3 } })
  t.after(() => client.close())
  const quotas = new ra.Quotas(client, { namespace: 'drop-refused' })
  await quotas.add('warm-up', 1, { max: 10, requestId: 'w' }) // loads the script
  p.arm({ refuse: true })
  // The add runs, its reply is lost (retry-safe: resent), and every resend finds no server.
  const e = await rejection(quotas.add('victim', 3, { max: 10, requestId: 'r' }))
  assert.ok(e instanceof ra.OutcomeUnknownError, `${e}`)
  assert.deepEqual([e.code, e.retrySafe, e.nothingRan, e.attempts], ['outcome_unknown', true, false, 3])
  assert.equal(await new ra.Quotas(s.client, { namespace: 'drop-refused' }).get('victim'), 3, 'the add ran once')
})

test('a user\'s ioredis instance with its at-least-once defaults still sends the call once', async (t) => {
  const p = await proxy(s.server.port)
  t.after(() => p.close())
  const mine = new Redis({ port: p.port, host: '127.0.0.1' }) // autoResend, 20 retries, offline queue
  t.after(() => mine.disconnect())
  const client = await ra.Client.connect(mine)
  t.after(() => client.close())
  const rl = new ra.RateLimiter(client, { namespace: 'drop-own', limits })
  await rl.consume('warm-up')
  p.arm()
  const e = await rejection(rl.consume('victim'))
  assert.ok(e instanceof ra.OutcomeUnknownError && e.retrySafe === false, `${e}`)
  assert.equal(await remaining('drop-own', 'victim'), 99, 'the decision ran exactly once')
})

test('control: plain ioredis resends the same call after the drop (the count sees it)', async (t) => {
  const p = await proxy(s.server.port)
  t.after(() => p.close())
  const plain = new Redis({ port: p.port, host: '127.0.0.1' })
  t.after(() => plain.disconnect())
  const rl = new ra.RateLimiter(s.client, { namespace: 'drop-plain', limits })
  const [stateKey] = rl.keys('victim').limits
  await rl.consume('warm-up') // loads the script
  await plain.ping()
  p.arm()
  await plain.evalsha(scripts.RL_ANCHORED_WINDOW.sha1, 1, stateKey, '1', '100', '600000')
  assert.equal(await remaining('drop-plain', 'victim'), 98, 'ioredis ran it twice')
})

test('a batch whose reply is lost: unsafe members ran once (unknown outcome), safe ones are resent', async (t) => {
  const p = await proxy(s.server.port)
  t.after(() => p.close())
  const client = await ra.Client.connect(`redis://127.0.0.1:${p.port}`, { batching: { inFlight: 1, minBatch: 2 }, timeoutMs: 2000, retry: { maxAttempts: 8, baseBackoffMs: 50, deadlineMs: 10_000 } })
  t.after(() => client.close())
  const limits = [{ algorithm: 'anchored-window', limit: 100, periodMs: 600_000 }]
  const rl = new ra.RateLimiter(client, { namespace: 'lost', limits })
  // Loads the scripts and the batch entry point: the swallowed reply is the batch's own.
  await Promise.all(Array.from({ length: 10 }, (_, i) => rl.consume(`warm-${i}`, i % 2 ? { requestId: `w${i}` } : {})))
  const before = client.batchStats().batches
  // The first goes alone (its turn ends before the members are made); once its reply is in, the
  // proxy swallows the next one: the batch's.
  const first = rl.consume('first')
  await null
  const batch = Array.from({ length: 8 }, (_, i) =>
    rl.consume(`m${i}`, i % 2 ? { requestId: `r${i}` } : {}).then((value) => ({ value }), (e) => e))
  await first.then(() => p.arm())
  const settled = await Promise.all(batch)
  assert.ok(client.batchStats().batches > before, 'the members left as a batch')
  const direct = new ra.RateLimiter(s.client, { namespace: 'lost', limits })
  for (const [i, r] of settled.entries()) {
    if (i % 2 === 0) {
      assert.ok(r instanceof ra.OutcomeUnknownError, `member ${i}: ${r?.name ?? JSON.stringify(r)}`)
      assert.deepEqual([r.retrySafe, r.nothingRan], [false, false])
    } else {
      assert.equal(r.value?.allowed, true, `member ${i} was resent and answered: ${r?.name ?? ''} ${r?.message ?? ''}`)
    }
    // Every member ran exactly once: one unit gone, whatever its reply.
    assert.equal((await direct.consume(`m${i}`)).remaining, 100 - 2, `member ${i}`)
  }
})

test('a reply of the wrong shape is the package\'s BadReplyError (a RedisAtomicError), for every primitive', async (t) => {
  const p = await proxy(s.server.port)
  t.after(() => p.close())
  const client = await ra.Client.connect(`redis://127.0.0.1:${p.port}`, { timeoutMs: 2000, batching: false })
  t.after(() => client.close())
  const calls = {
    consume: () => new ra.RateLimiter(client, { namespace: 'shape', limits }).consume('a'),
    acquire: () => new ra.Locks(client, { namespace: 'shape' }).acquire('a', 1000),
    add: () => new ra.Quotas(client, { namespace: 'shape' }).add('a', 1, { min: 0, max: 10 }),
  }
  for (const [name, call] of Object.entries(calls)) {
    await call() // loads the script: the replaced reply is the call's own
    p.replace(':7\r\n') // an integer where the script answers an array
    const e = await rejection(call())
    assert.ok(e instanceof ra.BadReplyError && e instanceof ra.RedisAtomicError, `${name}: ${e}`)
    assert.equal(e.code, 'bad_reply', name)
    assert.match(e.message, /bad reply: not an array/, name)
  }
})
