// @ts-check
// The queue worker for server.mjs's orders (docs/node.md).
//
//   REDIS_URL=redis://127.0.0.1:6379 node worker.mjs     # as many as you like; SIGTERM stops one
//
// Each order is claimed under a lease, processed with a fenced write (the lease's fence goes
// with the write, so a worker whose lease ran out and was claimed again cannot overwrite the
// newer worker's result) and acked. A worker that dies mid-order loses nothing: its lease runs
// out and another worker claims the order again (deliveries + 1); after `maxDeliveries` failed
// attempts the order becomes a dead letter instead of looping for ever.
import { setTimeout as sleep } from 'node:timers/promises'
import { AbortedError, Client, FencedWrites, Queue } from 'redis-atomic'

const client = await Client.connect(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
  timeoutMs: 1_000,
})
const orders = new Queue(client, { namespace: 'example', name: 'orders', maxDeliveries: 3 })
const fenced = new FencedWrites(client, { namespace: 'example' })
const worker = `worker-${process.pid}`
const stop = new AbortController()
process.on('SIGTERM', () => stop.abort())

/** @param {import('redis-atomic').Job} job */
async function processOrder(job) {
  // Renew the lease while the work runs; `lost` fires if the lease is lost all the same.
  const lost = job.watch()
  try {
    const resource = job.id
    const result = await fenced.write(resource, job.fence, [
      {
        op: 'hset',
        key: fenced.key(resource, 'state'),
        fields: { status: 'shipped', payload: job.payload, worker, delivery: String(job.deliveries) },
      },
    ])
    if (lost.aborted || !result.applied) return // a newer lease has the order: leave it to it
    const acked = await job.ack()
    if (acked.acked) console.log(`${worker}: ${job.id} shipped (delivery ${job.deliveries})`)
  } catch (e) {
    // Give it back for another attempt in a second (a dead letter after maxDeliveries).
    if (!job.ended) await job.nack(1_000, e instanceof Error ? e.message : String(e))
    throw e
  }
}

console.log(`${worker} ready`)
try {
  while (!stop.signal.aborted) {
    const claim = await orders.claim(worker, 30_000, { maxJobs: 10, signal: stop.signal })
    if (claim.status === 'claimed') {
      await Promise.allSettled(claim.jobs.map(processOrder))
      continue
    }
    // 'empty': the next job is due (or a lease runs out) in retryAfterMs; 'idle': nothing at all.
    const pause = claim.status === 'empty' ? Math.min(claim.retryAfterMs, 1_000) : 250
    await sleep(pause, undefined, { signal: stop.signal }).catch(() => {})
  }
} catch (e) {
  // A claim abandoned on SIGTERM may still have leased jobs: their leases run out and another
  // worker claims them again.
  if (!(e instanceof AbortedError)) throw e
}
console.log(`${worker} stopped`)
