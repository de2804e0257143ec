// The Node package's driver for `redis-atomic verify --driver` (docs/verify.md, "Drivers"):
// `node tools/drivers/node_face.mjs` drives the `redis-atomic` npm package (TypeScript on ioredis,
// its ESM entry) through the protocol's rows — `lock` (fences), `quota`, `queue`, `ratelimit-sl` (a
// sliding log), `ratelimit-win` (a fixed window), `semaphore` — as a user following docs/node.md
// would. It proves the package's retry rules on ioredis under faults: ioredis resends on its own
// by default, and the package turns that off and decides itself (its `retry` policy resends only
// retry-safe calls). On top, as docs/node.md tells a user: an `OutcomeUnknownError` whose
// `retrySafe` is true (an acquisition of a lock or a permit with the caller's token, an add with a
// request id, an enqueue, a claim with a claim id (`claimWithId`), an ack by parts) is resent as
// it was, at most twice more; nothing else is resent. The queue allows 1000 deliveries (as the
// in-process row), so a job the row's zombies and faults redeliver is not dead-lettered. Under a
// fault the client's deadline is the in-process rows' 200 ms, so a stall or a lost reply becomes
// an unknown outcome.
//
// JSON lines on stdin and stdout, one request at a time. Answers are the vocabulary's outcome
// words or the package's `error.code`; an error that is not the package's is a bug of this driver:
// it propagates, and the process exits with its stack on stderr (the harness quotes it).

import { createInterface } from 'node:readline'
import { Client, Locks, OutcomeUnknownError, Queue, Quotas, RateLimiter, RedisAtomicError, Semaphore } from '../../bindings/node/index.mjs'

const ROWS = ['lock', 'quota', 'queue', 'ratelimit-sl', 'ratelimit-win', 'semaphore']
const RESENDS = 2
const CONNECTS = 5

/** The server: its URL, or a cluster's seed URLs (every node's). */
function target (hello) {
  return hello.cluster ? hello.urls : hello.url
}

/** `call()`, resent after an unknown outcome the package says is retry-safe. A resend that fails
 * does not settle the first call, whatever it says: a refused resend (the server restarting) says
 * nothing about the first, which may have run — the outcome stays unknown. */
async function resend (call) {
  try {
    return await call()
  } catch (first) {
    if (!(first instanceof OutcomeUnknownError) || first.retrySafe !== true) throw first
    for (let i = 0; i < RESENDS; i++) {
      try {
        return await call()
      } catch (e) {
        if (!(e instanceof RedisAtomicError)) throw e
      }
    }
    throw first
  }
}

/** A client, connecting again while the failure is transient (a killed or slow handshake under
 * the row's fault): connecting runs nothing, and a hello has no error answer. */
async function connect (url, timeoutMs) {
  for (let n = 1; ; n++) {
    try {
      return await Client.connect(url, { timeoutMs })
    } catch (e) {
      if (!(e instanceof RedisAtomicError) || !e.transient || n >= CONNECTS) throw e
    }
  }
}

class Driver {
  client = null
  row = ''
  ns = ''
  limiter = null
  semaphore = null

  async hello (msg) {
    if (this.client !== null) await this.client.close()
    this.client = null
    this.client = await connect(target(msg), msg.fault ? 200 : 10_000)
    this.row = msg.row
    this.ns = msg.namespace
    this.limiter = null
    this.semaphore = null
    return { driver: 'redis-atomic (Node, ioredis)', rows: ROWS }
  }

  async run (op, a) {
    switch (op) {
      case 'lock.acquire': {
        const locks = new Locks(this.client, { namespace: this.ns })
        const got = await resend(() => locks.acquire(a.resource, a.ttl_ms, { token: a.token }))
        return got.acquired ? { outcome: 'acquired', fence: got.fence, handle: got.fence } : { outcome: 'held' }
      }
      case 'lock.release': {
        const got = await new Locks(this.client, { namespace: this.ns }).release(a.resource, a.token, Number(a.handle))
        return { outcome: got.released ? 'released' : 'lost' }
      }
      case 'quota.add': {
        const quotas = new Quotas(this.client, { namespace: this.ns })
        const options = { min: a.min, max: a.max, ttlMs: a.ttl_ms, requestId: a.request_id }
        const got = await resend(() => quotas.add(a.name, a.delta, options))
        return { outcome: got.applied ? 'applied' : 'refused', value: got.value }
      }
      case 'quota.get':
        return { outcome: 'value', value: await new Quotas(this.client, { namespace: this.ns }).get(a.name) }
      case 'ratelimit.consume': {
        this.limiter ??= this.rateLimiter(a)
        const got = await this.limiter.consume(a.name)
        return { outcome: got.allowed ? 'allowed' : 'limited' }
      }
      case 'queue.enqueue': case 'queue.claim': case 'queue.ack': case 'queue.inspect':
        return this.queue(op, a)
      case 'semaphore.acquire': {
        this.semaphore ??= new Semaphore(this.client, { namespace: this.ns, name: a.name, capacity: a.limit })
        const got = await resend(() => this.semaphore.acquire(a.ttl_ms, { token: a.token }))
        return got.acquired ? { outcome: 'acquired', fence: got.fence, handle: got.fence } : { outcome: 'full' }
      }
      case 'semaphore.release': {
        const got = await this.semaphore.release(a.token, Number(a.handle))
        return { outcome: got.released ? 'released' : 'lost' }
      }
      default:
        return { error: 'bad_argument' }
    }
  }

  /** A queue call (one job per claim), resent as `resend` says. */
  async queue (op, a) {
    const q = new Queue(this.client, { namespace: this.ns, name: a.queue, maxDeliveries: 1000 })
    switch (op) {
      case 'queue.enqueue': {
        const got = await resend(() => q.enqueue(a.job_id, a.payload))
        return { outcome: got.enqueued ? 'enqueued' : 'exists' }
      }
      case 'queue.claim': {
        const got = await resend(() => q.claimWithId(a.worker, a.visibility_ms, a.claim_id, { maxJobs: 1 }))
        if (got.status !== 'claimed') return { outcome: got.status }
        const job = got.jobs[0]
        return job === undefined ? { outcome: 'claimed' } : { outcome: 'claimed', job_id: job.id, fence: job.fence, handle: job.fence }
      }
      case 'queue.ack': {
        const got = await resend(() => q.ack(a.job_id, a.worker, Number(a.handle)))
        return { outcome: got.acked ? 'acked' : 'lost' }
      }
      default:
        return { outcome: (await resend(() => q.inspect(a.job_id))).state }
    }
  }

  rateLimiter (a) {
    const algorithm = this.row === 'ratelimit-sl' ? 'sliding-log' : 'fixed-window'
    const limits = [{ algorithm, limit: a.limit, periodMs: a.period_ms }]
    return new RateLimiter(this.client, { namespace: this.ns, limits })
  }
}

/** One request's answer: the outcome, or the package's error code (anything else propagates). */
async function answer (driver, msg) {
  if (msg.op === 'hello') return driver.hello(msg)
  try {
    return await driver.run(msg.op, msg.args ?? {})
  } catch (e) {
    if (e instanceof RedisAtomicError) return { error: e.code }
    throw e
  }
}

const driver = new Driver()
for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  if (line.trim() === '') continue
  process.stdout.write(JSON.stringify(await answer(driver, JSON.parse(line))) + '\n')
}
if (driver.client !== null) await driver.client.close()
