// Failures through the Node package: a stalled server, aborts, refused connections and bad
// input, each a typed error with a stable code — never a crash of the process.
import assert from 'node:assert/strict'
import { getEventListeners } from 'node:events'
import { test } from 'node:test'
import { concurrently, ra, rejection, thrown } from './fixture.mjs'
import { Server, command } from './server.mjs'

const DAY = 86_400_000
const limits = [{ algorithm: 'fixed-window', limit: 1000, periodMs: DAY }]

/** Runs `body(server, client)` against a fresh server it may stall; always resumes and stops it. */
async function withStallable(options, body) {
  const server = await Server.start()
  try {
    const client = await ra.Client.connect(server.url, options)
    await body(server, client)
  } finally {
    server.stop()
  }
}

test('a stalled server gives OutcomeUnknownError within the timeout; retrySafe follows the request id', async () => {
  const timeoutMs = 300
  const retry = { maxAttempts: 2, deadlineMs: 5000, baseBackoffMs: 1, maxBackoffMs: 5 }
  await withStallable({ timeoutMs, retry }, async (server, client) => {
    const rl = new ra.RateLimiter(client, { namespace: 'stall', limits })
    assert.equal((await rl.consume('u')).allowed, true)
    server.pause()
    try {
      let started = performance.now()
      const plain = await rejection(rl.consume('u'))
      const plainMs = performance.now() - started
      started = performance.now()
      const withId = await rejection(rl.consume('u', { requestId: 'r-1' }))
      const withIdMs = performance.now() - started
      for (const e of [plain, withId]) {
        assert.ok(e instanceof ra.OutcomeUnknownError, `${e}`)
        assert.ok(e instanceof ra.RedisAtomicError && e instanceof Error)
        assert.equal(e.code, 'outcome_unknown')
        assert.equal(e.name, 'OutcomeUnknownError')
        assert.equal(e.timedOut, true)
        assert.equal(e.nothingRan, false)
      }
      // Without an id a resend could charge twice: not resent, not retry-safe.
      assert.deepEqual([plain.retrySafe, plain.attempts], [false, 1])
      // With one, the client resent it once (its policy), and so may the caller.
      assert.deepEqual([withId.retrySafe, withId.attempts], [true, 2])
      // Bounded by the timeout per attempt (generously: a 2-core VM under load), never hung.
      assert.ok(plainMs < timeoutMs + 2000, `${plainMs} ms`)
      assert.ok(withIdMs < 2 * timeoutMs + 2000, `${withIdMs} ms`)
    } finally {
      server.resume()
    }
    // The same request id, resent after the stall, is charged at most once.
    const resent = await rl.consume('u', { requestId: 'r-1' })
    assert.equal(resent.allowed, true)
    const after = await rl.consume('u')
    assert.ok(after.remaining >= 1000 - 4 && after.remaining <= 1000 - 3, `${after.remaining}`)
  })
})

test('an AbortSignal rejects a stalled call with AbortedError (an unknown outcome), cause = reason', async () => {
  await withStallable({ timeoutMs: 60_000, retry: { maxAttempts: 1 } }, async (server, client) => {
    const rl = new ra.RateLimiter(client, { namespace: 'abort', limits })
    server.pause()
    try {
      const ac = new AbortController()
      const pending = concurrently(20, (i) => rejection(rl.consume('u', { requestId: `r-${i}`, signal: ac.signal })))
      // One listener on the signal, whatever the number of calls in flight on it.
      assert.equal(getEventListeners(ac.signal, 'abort').length, 1)
      const reason = new Error('client went away')
      ac.abort(reason)
      for (const e of await pending) {
        assert.ok(e instanceof ra.AbortedError && e instanceof ra.OutcomeUnknownError)
        assert.equal(e.name, 'AbortError')
        assert.equal(e.code, 'aborted')
        assert.equal(e.cause, reason)
        assert.equal(e.nothingRan, false, 'it was sent: it may have run')
        assert.equal(e.retrySafe, true, 'a request id makes the resend safe')
      }
      assert.equal(getEventListeners(ac.signal, 'abort').length, 0)
    } finally {
      server.resume()
    }
  })
})

test('an already-aborted signal sends nothing; a long-lived signal keeps no listeners', async () => {
  await withStallable({}, async (_server, client) => {
    const rl = new ra.RateLimiter(client, {
      namespace: 'pre',
      limits: [{ algorithm: 'fixed-window', limit: 1, periodMs: DAY }],
    })
    const e = await rejection(rl.consume('u', { signal: AbortSignal.abort('gone') }))
    assert.ok(e instanceof ra.AbortedError)
    assert.deepEqual([e.nothingRan, e.retrySafe, e.cause], [true, true, 'gone'])
    // It charged nothing: the one unit is still there.
    assert.equal((await rl.consume('u')).allowed, true)
    const shutdown = new AbortController()
    const q = new ra.RateLimiter(client, { namespace: 'long', limits })
    await concurrently(200, (i) => q.consume(`id-${i}`, { signal: shutdown.signal }))
    assert.equal(getEventListeners(shutdown.signal, 'abort').length, 0)
  })
})

test('connecting to a closed port is a ConnectionError; a bad URL a typed error', async () => {
  const server = await Server.start()
  const port = server.port
  server.stop()
  const e = await rejection(ra.Client.connect(`redis://127.0.0.1:${port}`, { timeoutMs: 500 }))
  assert.ok(e instanceof ra.ConnectionError || e instanceof ra.NotSentError, `${e.name}: ${e.message}`)
  const bad = await rejection(ra.Client.connect('http://127.0.0.1:1'))
  assert.ok(bad instanceof ra.RedisAtomicError, `${bad.name}: ${bad.message}`)
  const missingCa = await rejection(
    ra.Client.connect(`rediss://127.0.0.1:${port}`, { tls: { caFile: '/nonexistent/ca.pem' } }),
  )
  assert.ok(missingCa instanceof ra.TlsError, `${missingCa.name}: ${missingCa.message}`)
  assert.equal(missingCa.code, 'tls')
})

test('bad input: every case a BadArgumentError (thrown or rejected), a wrong type a TypeError, the process intact', async () => {
  const server = await Server.start()
  try {
    const client = await ra.Client.connect(server.url)
    const rl = new ra.RateLimiter(client, { namespace: 'bad', limits })
    const spec = (o) => ({ namespace: 'bad', limits: [{ algorithm: 'gcra', limit: 5, periodMs: 1000, ...o }] })
    const sync = {
      'zero limit': () => new ra.RateLimiter(client, spec({ limit: 0 })),
      'fractional limit': () => new ra.RateLimiter(client, spec({ limit: 2.5 })),
      'NaN period': () => new ra.RateLimiter(client, spec({ periodMs: NaN })),
      'negative period': () => new ra.RateLimiter(client, spec({ periodMs: -1 })),
      'sub-ms period': () => new ra.RateLimiter(client, spec({ periodMs: 0.5 })),
      'unknown algorithm': () => new ra.RateLimiter(client, spec({ algorithm: 'leaky' })),
      'burst on a window': () => new ra.RateLimiter(client, spec({ algorithm: 'fixed-window', burst: 2 })),
      'bad name': () => new ra.RateLimiter(client, spec({ name: 'a b' })),
      'no limits': () => new ra.RateLimiter(client, { namespace: 'bad', limits: [] }),
      'namespace with a colon': () => new ra.RateLimiter(client, { namespace: 'a:b', limits }),
      'two limits, one name': () =>
        new ra.RateLimiter(client, { namespace: 'bad', limits: [...limits, ...limits] }),
      'request ttl too long': () => new ra.Quotas(client, { namespace: 'q', requestTtlMs: 2 * DAY }),
      'unknown script folder': () => ra.ScriptSet.loadDir('/nonexistent', 'x'),
    }
    for (const [what, f] of Object.entries(sync)) {
      const e = thrown(f)
      assert.ok(e instanceof ra.BadArgumentError, `${what}: ${e?.name}: ${e?.message}`)
      assert.equal(e.code, 'bad_argument', what)
    }
    // A value of the wrong JavaScript type: a TypeError, as Node's own functions throw it.
    const wrongType = {
      'a string for a number': () => new ra.RateLimiter(client, spec({ limit: '5' })),
      'no options': () => new ra.RateLimiter(client),
      'not a client': () => new ra.RateLimiter({}, spec({})),
      'a number for a resource': () => new ra.Locks(client, { namespace: 'bad' }).keys(42),
    }
    for (const [what, f] of Object.entries(wrongType)) {
      const e = thrown(f)
      assert.ok(e instanceof TypeError, `${what}: ${e?.name}: ${e?.message}`)
      assert.equal(e.code, 'ERR_INVALID_ARG_TYPE', what)
    }
    const q = new ra.Quotas(client, { namespace: 'q' })
    const d = new ra.Dedup(client, { namespace: 'd' })
    const f = new ra.FencedWrites(client, { namespace: 'f' })
    const scripts = ra.ScriptSet.loadDir(new URL('../../../examples/user-scripts', import.meta.url).pathname, 'shop')
    const key = f.key('order-1', 'state')
    const rejected = {
      'NaN cost': () => rl.consume('u', { cost: NaN }),
      'negative cost': () => rl.consume('u', { cost: -1 }),
      'fractional cost': () => rl.consume('u', { cost: 1.5 }),
      'zero cost': () => rl.consume('u', { cost: 0 }),
      'cost beyond 2^53': () => rl.consume('u', { cost: 2 ** 60 }),
      'request id too long': () => rl.consume('u', { requestId: 'x'.repeat(257) }),
      'identity too long': () => rl.consume('k'.repeat(1025)),
      'bad delivery': () => ra.Client.connect(server.url, { delivery: 'carrier-pigeon' }),
      'zero pool': () => ra.Client.connect(server.url, { poolSize: 0 }),
      'half a cert': () => ra.Client.connect(server.url, { tls: { certFile: '/x' } }),
      'fractional delta': () => q.add('n', 1.5, { max: 10 }),
      'min above max': () => q.add('n', 1, { min: 5, max: 1 }),
      'negative ttl': () => q.expireOnce('n', -5),
      'dedup ttl beyond 30 days': () => d.firstSeen('e', 31 * DAY),
      'empty token': () => d.firstSeen('e', 1000, { token: '' }),
      'fence 0': () => f.write('order-1', 0, [{ op: 'set', key, value: 'x' }]),
      'unknown op': () => f.write('order-1', 1, [{ op: 'incr', key }]),
      'set without value': () => f.write('order-1', 1, [{ op: 'set', key }]),
      'key without the tag': () => f.write('order-1', 1, [{ op: 'del', key: 'elsewhere' }]),
      'unknown script': () => scripts.call(client, 'nope'),
      'fractional script arg': () => scripts.call(client, 'stock_reserve', { keys: ['a{x}', 'b{x}'], args: [1.5, 1] }),
      'wrong key count': () => scripts.call(client, 'stock_reserve', { keys: ['a{x}'], args: ['1', '1'] }),
    }
    for (const [what, f] of Object.entries(rejected)) {
      const e = await rejection(f()).catch((failure) => assert.fail(`${what}: ${failure.message}`))
      assert.ok(e instanceof ra.BadArgumentError, `${what}: ${e?.name}: ${e?.message}`)
      assert.equal(e.nothingRan, true, what)
    }
    // The client still works after all of that.
    assert.equal((await rl.consume('u')).allowed, true)
  } finally {
    server.stop()
  }
})

test('server-side refusals are typed: WrongTypeError, ServerError, CrossSlotError', async () => {
  const server = await Server.start()
  try {
    const client = await ra.Client.connect(server.url)
    const q = new ra.Quotas(client, { namespace: 'wt' })
    assert.equal(await command(server.port, 'LPUSH', q.keys('n').value, 'x'), ':1')
    const wrong = await rejection(q.get('n'))
    assert.ok(wrong instanceof ra.WrongTypeError, `${wrong.name}: ${wrong.message}`)
    const scripts = ra.ScriptSet.loadDir(new URL('../../../examples/user-scripts', import.meta.url).pathname, 'shop')
    const server_error = await rejection(
      scripts.call(client, 'session_touch', { keys: ['app:session:{u1}:s1', 'app:user-sessions:{u1}'], args: ['', 'u1', 60] }),
    )
    assert.ok(server_error instanceof ra.ServerError, `${server_error.name}: ${server_error.message}`)
    assert.equal(server_error.serverCode, 'ERR')
    const cross = await rejection(
      scripts.call(client, 'stock_reserve', { keys: ['shop:stock:{a}', 'shop:reservation:{b}:r1'], args: ['1', 60] }),
    )
    assert.ok(cross instanceof ra.CrossSlotError)
    assert.equal(cross.slots.length, 2)
    assert.equal(cross.nothingRan, true)
  } finally {
    server.stop()
  }
})
