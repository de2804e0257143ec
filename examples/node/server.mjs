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
//
// POST /orders is idempotent by its `Idempotency-Key` header: the first request claims the key,
// enqueues the order for the worker (worker.mjs) and stores its answer; every retry of it gets
// that answer replayed, byte for byte, however many arrive at once; a retry still running is
// 409 with Retry-After; the same key with a different body is 422.
import { createServer } from 'node:http'
import {
  Client,
  Idempotency,
  Queue,
  RateLimiter,
  RedisAtomicError,
  OutcomeUnknownError,
} from 'redis-atomic'

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

const idempotency = new Idempotency(client, { namespace: 'example', ttlMs: 10_000 })
const orders = new Queue(client, { namespace: 'example', name: 'orders' })

/** @param {import('node:http').IncomingMessage} req */
async function body(req) {
  const parts = []
  for await (const part of req) parts.push(part)
  return Buffer.concat(parts)
}

/**
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 */
async function order(req, res) {
  const key = req.headers['idempotency-key']
  if (typeof key !== 'string' || key === '') {
    res.writeHead(400).end('an Idempotency-Key header is required')
    return
  }
  const payload = await body(req)
  // The request's fingerprint: what makes a retry "the same request".
  const begun = await idempotency.begin('orders', key, ['POST /orders', payload])
  switch (begun.status) {
    case 'replay': {
      const r = begun.response
      res.writeHead(r.status, r.headers.map((h) => [h.name, h.value.toString()]).flat())
      res.end(r.body)
      return
    }
    case 'inProgress':
      res.writeHead(409, { 'Retry-After': String(Math.ceil(begun.retryAfterMs / 1000)) })
      res.end('this request is still running')
      return
    case 'mismatch':
      res.writeHead(422).end('this Idempotency-Key was used with another request')
      return
  }
  // Claimed: the side effect runs here, once per key. The job id is the key, so even a
  // claim taken over after a crash enqueues nothing twice.
  const enqueued = await orders.enqueue(`order-${key}`, payload)
  const answer = { order: `order-${key}`, queued: enqueued.enqueued }
  const stored = await begun.complete({
    status: 201,
    headers: [{ name: 'content-type', value: 'application/json' }],
    body: JSON.stringify(answer),
  })
  res.writeHead(stored.stored ? 201 : 409, { 'content-type': 'application/json' })
  res.end(JSON.stringify(answer))
}

const server = createServer((req, res) => {
  const route = `${req.method} ${req.url?.split('?')[0]}`
  const handler = route === 'GET /api/hello' ? hello : route === 'POST /orders' ? order : null
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
