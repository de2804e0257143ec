// The queue through the Node package: every job acked exactly once over many workers (counted
// per job id), retries and dead letters, retry-safe claims, expired leases, aborted claims.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { concurrently, ra, rejection, useServer } from './fixture.mjs'
import { Server } from './server.mjs'

const s = useServer()

test('every job is acked exactly once over 12 workers on two clients', async () => {
  const second = await ra.Client.connect(s.server.url)
  const queues = [s.client, second].map((c) => new ra.Queue(c, { namespace: 'qu1', name: 'emails' }))
  const jobs = 300
  await concurrently(jobs, (i) => queues[0].enqueue(`job-${i}`, JSON.stringify({ n: i })))
  const acks = new Map()
  const payloads = new Map()
  await concurrently(12, async (w) => {
    const queue = queues[w % 2]
    for (;;) {
      const claim = await queue.claim(`worker-${w}`, 30_000, { maxJobs: 4 })
      if (claim.status === 'idle') return
      if (claim.status === 'empty') {
        // Others still hold jobs: the protocol says when to look again.
        await new Promise((r) => setTimeout(r, Math.min(claim.retryAfterMs, 10)))
        continue
      }
      for (const job of claim.jobs) {
        payloads.set(job.id, JSON.parse(job.payload.toString()).n)
        const { acked } = await job.ack()
        if (acked) acks.set(job.id, (acks.get(job.id) ?? 0) + 1)
      }
    }
  })
  assert.equal(acks.size, jobs, 'every job acked')
  for (const [id, n] of acks) assert.equal(n, 1, `${id} acked ${n} times`)
  for (const [id, n] of payloads) assert.equal(id, `job-${n}`, 'each payload byte for byte')
  const stats = await queues[0].stats()
  assert.deepEqual(stats, { ready: 0, scheduled: 0, running: 0, expired: 0, dead: 0, acked: jobs })
  // An acked id is remembered: enqueueing it again adds nothing.
  assert.deepEqual(await queues[1].enqueue('job-0', 'again'), { enqueued: false, status: 'acked' })
})

test('nack retries, then dead-letters after maxDeliveries; dead letters are listed, requeued, purged', async () => {
  const queue = new ra.Queue(s.client, { namespace: 'qu2', name: 'q', maxDeliveries: 2 })
  assert.deepEqual(await queue.claim('w', 1_000), { status: 'idle' })
  assert.deepEqual(await queue.enqueue('a', 'x'), { enqueued: true, dueInMs: 0 })
  assert.deepEqual(await queue.enqueue('a', 'x'), { enqueued: false, status: 'queued' })
  let [job] = (await queue.claim('w', 1_000)).jobs
  assert.deepEqual([job.id, job.deliveries, job.worker], ['a', 1, 'w'])
  assert.deepEqual(await job.nack(0, 'first'), { status: 'retrying', retryAfterMs: 0 })
  ;[job] = (await queue.claim('w', 1_000)).jobs
  assert.equal(job.deliveries, 2)
  assert.deepEqual(await job.nack(0, 'second'), { status: 'dead' })
  assert.ok((await rejection(job.ack())) instanceof ra.HandleEndedError)
  assert.deepEqual(await queue.inspect('a'), { state: 'dead', deliveries: 2, error: 'second' })
  const page = await queue.deadLetters()
  assert.equal(page.total, 1)
  assert.deepEqual([page.letters[0].id, page.letters[0].deliveries, page.letters[0].error], ['a', 2, 'second'])
  assert.deepEqual(await queue.requeueDead('a'), { requeued: true })
  assert.deepEqual(await queue.requeueDead('a'), { requeued: false }, 'a resend finds it requeued')
  const state = await queue.inspect('a')
  assert.deepEqual([state.state, state.deliveries], ['queued', 0])
  // Dead again, then purged.
  for (let i = 0; i < 2; i++) await (await queue.claim('w', 1_000)).jobs[0].nack(0, 'again')
  assert.deepEqual(await queue.purgeDeadLetters(), { purged: 1, remaining: 0 })
  assert.deepEqual(await queue.inspect('a'), { state: 'unknown' })
})

test('claimWithId: a resend returns the same leases and leases nothing new', async () => {
  const queue = new ra.Queue(s.client, { namespace: 'qu3', name: 'q' })
  for (const id of ['a', 'b', 'c']) await queue.enqueue(id, id)
  const first = await queue.claimWithId('w', 10_000, 'claim-1', { maxJobs: 2 })
  const resent = await queue.claimWithId('w', 10_000, 'claim-1', { maxJobs: 2 })
  const view = (c) => c.jobs.map((j) => [j.id, j.fence, j.deliveries])
  assert.deepEqual(view(resent), view(first))
  assert.equal((await queue.stats()).running, 2, 'the resend leased nothing more')
  await first.jobs[0].ack()
  assert.deepEqual(
    view(await queue.claimWithId('w', 10_000, 'claim-1', { maxJobs: 2 })),
    view(first).slice(1),
    'an acked job is left out of a later resend',
  )
  assert.match(queue.claimKey('claim-1'), /^qu3:queue:v1:\{q\}:claim:[0-9a-f]{32}$/)
  assert.equal(queue.keys.due, 'qu3:queue:v1:{q}:due')
})

test('delays and schedules; extend, by-parts ack; an expired lease is reaped and claimed again', async () => {
  const queue = new ra.Queue(s.client, { namespace: 'qu4', name: 'q' })
  const later = await queue.enqueue('later', 'x', { delayMs: 60_000 })
  assert.ok(later.enqueued && later.dueInMs > 59_000)
  const at = await queue.enqueue('at', 'x', { runAt: new Date(Date.now() + 120_000) })
  assert.ok(at.enqueued && at.dueInMs > 100_000, `${at.dueInMs}`)
  const empty = await queue.claim('w', 1_000)
  assert.equal(empty.status, 'empty')
  assert.ok(empty.retryAfterMs > 59_000)
  await queue.enqueue('now', 'x')
  const [job] = (await queue.claim('w', 200)).jobs
  assert.deepEqual(await job.extend(300), { extended: true, fence: job.fence, ttlMs: 300 })
  assert.deepEqual(await queue.extend('now', 'w', job.fence, 250), { extended: true, fence: job.fence, ttlMs: 250 })
  // Let the lease run out (the lease's own time), then return it.
  await new Promise((r) => setTimeout(r, 300))
  assert.deepEqual(await queue.reap(), { requeued: 1, dead: 0 })
  const [again] = (await queue.claim('w2', 10_000)).jobs
  assert.deepEqual([again.id, again.deliveries], ['now', 2])
  assert.ok(again.fence > job.fence)
  // The first lease is superseded: its ack is refused as a value.
  assert.deepEqual(await job.ack(), { lost: true, acked: false })
  assert.deepEqual(await queue.ack('now', 'w2', again.fence), { acked: true })
  assert.deepEqual(await again.ack(), { acked: true }, 'a repeat within the dedup window agrees')
})

test('a claim aborted on a stalled server: the claim id recovers the leases', async () => {
  const server = await Server.start()
  try {
    const client = await ra.Client.connect(server.url, { timeoutMs: 60_000 })
    const queue = new ra.Queue(client, { namespace: 'qu5', name: 'q' })
    await queue.enqueue('j', 'x')
    server.pause()
    const ac = new AbortController()
    const pending = queue.claimWithId('w', 30_000, 'c-1', { signal: ac.signal })
    setImmediate(() => ac.abort())
    const e = await rejection(pending)
    server.resume()
    assert.ok(e instanceof ra.AbortedError)
    assert.equal(e.retrySafe, true)
    // It may have run: the same claim id answers with its lease, or claims afresh.
    const claim = await queue.claimWithId('w', 30_000, 'c-1')
    assert.deepEqual(claim.jobs.map((j) => j.id), ['j'])
    assert.deepEqual(await claim.jobs[0].ack(), { acked: true })
    // A plain claim is not retry-safe.
    server.pause()
    const plain = await rejection(queue.claim('w', 1_000, { signal: AbortSignal.timeout(50) }))
    server.resume()
    assert.deepEqual([plain instanceof ra.AbortedError, plain.retrySafe], [true, false])
  } finally {
    server.stop()
  }
})
