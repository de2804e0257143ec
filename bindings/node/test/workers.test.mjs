// The package in worker threads: one runtime per process serves every thread, each thread gets
// its own error classes, and a limit shared by the main thread and two workers admits exactly
// its limit in all.
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { test } from 'node:test'
import { Worker } from 'node:worker_threads'
import { concurrently, ra, useServer } from './fixture.mjs'

const s = useServer()
const options = { namespace: 'workers', limits: [{ algorithm: 'sliding-log', limit: 30, periodMs: 86_400_000 }] }

const worker = `
const { parentPort, workerData } = require('node:worker_threads')
const ra = require(workerData.pkg)
;(async () => {
  const client = await ra.Client.connect(workerData.url)
  const rl = new ra.RateLimiter(client, workerData.options)
  const results = await Promise.all(Array.from({ length: 50 }, () => rl.consume('shared')))
  const bad = await rl.consume('shared', { cost: -1 }).catch((e) => e)
  parentPort.postMessage({
    admitted: results.filter((r) => r.allowed).length,
    typed: bad instanceof ra.BadArgumentError && bad.code === 'bad_argument',
  })
})()
`

test('two workers and the main thread share one limit: exactly the limit admitted in all', async () => {
  const pkg = new URL('..', import.meta.url).pathname
  const workers = [1, 2].map(
    () => new Worker(worker, { eval: true, workerData: { pkg, url: s.server.url, options } }),
  )
  const rl = new ra.RateLimiter(s.client, options)
  const [mine, ...theirs] = await Promise.all([
    concurrently(50, () => rl.consume('shared')),
    ...workers.map(async (w) => (await once(w, 'message'))[0]),
  ])
  await Promise.all(workers.map((w) => w.terminate()))
  const admitted = mine.filter((r) => r.allowed).length + theirs.reduce((n, t) => n + t.admitted, 0)
  assert.equal(admitted, 30)
  for (const t of theirs) assert.equal(t.typed, true, 'typed errors inside a worker')
})
