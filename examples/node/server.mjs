// @ts-check
// An HTTP server on node:http with redis-atomic (docs/node.md).
//
//   REDIS_URL=redis://127.0.0.1:6379 PORT=8080 node server.mjs
//   curl -i -H 'x-api-key: k1' localhost:8080/api/hello
//
// GET /api/hello is rate limited per API key (or client address) by two limits decided
// together: 10 per second as GCRA (bursts of 5) and 1000 per day. Every answer carries the
// RateLimit headers; a refusal is 429 with Retry-After. A request id header makes a retried
// request count once. Redis trouble is 503, and says whether the request may have been counted.
import { createServer } from 'node:http'
import { Client, RateLimiter, RedisAtomicError, OutcomeUnknownError } from 'redis-atomic'

const client = await Client.connect(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
  timeoutMs: 250,
})

const limiter = new RateLimiter(client, {
  namespace: 'example',
  limits: [
    { algorithm: 'gcra', limit: 10, periodMs: 1_000, burst: 5, name: 'per-second' },
    { algorithm: 'fixed-window', limit: 1_000, periodMs: 86_400_000, name: 'per-day' },
  ],
})

/**
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 */
async function hello(req, res) {
  const identity = String(req.headers['x-api-key'] ?? req.socket.remoteAddress ?? 'anonymous')
  const requestId = req.headers['x-request-id']
  // Abandon the wait if the client hangs up (the consume may still have counted).
  const aborted = new AbortController()
  res.on('close', () => aborted.abort())
  const decision = await limiter.consume(identity, {
    requestId: typeof requestId === 'string' ? requestId : undefined,
    signal: aborted.signal,
  })
  const policy = limiter.limits
    .map((l) => `"${l.name}";q=${l.limit};w=${Math.ceil(l.periodMs / 1000)}`)
    .join(', ')
  res.setHeader('RateLimit-Policy', policy)
  res.setHeader(
    'RateLimit',
    decision.limits
      .map((l) => `"${l.name}";r=${l.remaining};t=${Math.ceil(l.resetAfterMs / 1000)}`)
      .join(', '),
  )
  if (!decision.allowed) {
    res.writeHead(429, { 'Retry-After': String(Math.ceil(decision.retryAfterMs / 1000)) })
    res.end(JSON.stringify({ error: 'rate limited', retryAfterMs: decision.retryAfterMs }))
    return
  }
  res.writeHead(200, { 'content-type': 'application/json' })
  res.end(JSON.stringify({ hello: identity, remaining: decision.remaining, replayed: decision.replayed }))
}

// Phase 2 of the package (locks, idempotency keys, the job queue) slots in here:
//   POST /orders   an idempotent endpoint: `Idempotency-Key` header → idempotency.begin(key)
//                  → run once, store the response, replay it to every retry.
//   a queue worker: `for await (const job of queue.claims({ signal }))` → fenced writes with
//                  job.fence → job.ack(); a lost claim is redelivered, never processed twice.

const server = createServer((req, res) => {
  const route = `${req.method} ${req.url?.split('?')[0]}`
  const handler = route === 'GET /api/hello' ? hello : null
  if (!handler) {
    res.writeHead(404).end()
    return
  }
  handler(req, res).catch((/** @type {unknown} */ e) => {
    if (res.headersSent) return
    const unknown = e instanceof OutcomeUnknownError
    res.writeHead(e instanceof RedisAtomicError ? 503 : 500, { 'content-type': 'application/json' })
    res.end(JSON.stringify({
      error: e instanceof Error ? e.message : String(e),
      code: e instanceof RedisAtomicError ? e.code : undefined,
      // Whether resending the same request (same x-request-id) is safe.
      retrySafe: unknown ? e.retrySafe : e instanceof RedisAtomicError && e.nothingRan,
    }))
  })
})

const port = Number(process.env.PORT ?? 8080)
server.listen(port, '127.0.0.1', () => {
  const address = server.address()
  console.log(`listening on http://127.0.0.1:${typeof address === 'object' ? address?.port : port}`)
})
process.on('SIGTERM', () => server.close())
