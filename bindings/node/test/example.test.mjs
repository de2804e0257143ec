// examples/node/server.mjs and worker.mjs, run as a user would (their own processes,
// `redis-atomic` resolved through examples/node/node_modules), against a real server: refusals
// are 429 with Retry-After and charge nothing (the daily limit counts exactly the admitted
// requests); a repeated request id is counted once; concurrent retries of an order enqueue it
// once and all get the same answer; two workers ship every order once.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { test } from 'node:test'
import { concurrently, ra } from './fixture.mjs'
import { Server, bulk } from './server.mjs'

const dir = fileURLToPath(new URL('../../../examples/node', import.meta.url))

/** Starts `script` of the example against `redis`; its first line of output. */
async function start(t, script, redis) {
  assert.ok(existsSync(`${dir}/node_modules/redis-atomic`), 'run `npm ci --ignore-scripts` in examples/node')
  const child = spawn(process.execPath, [script], {
    cwd: dir,
    env: { ...process.env, REDIS_URL: redis.url, PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  t.after(() => child.kill('SIGKILL'))
  const [line] = await once(child.stdout, 'data')
  return { child, line: String(line) }
}

/** The example server's base URL. */
async function startServer(t, redis) {
  const { line } = await start(t, 'server.mjs', redis)
  const base = line.match(/http:\/\/127\.0\.0\.1:\d+/)?.[0]
  assert.ok(base, `the example printed its address: ${line}`)
  return base
}

test('the example server limits per API key and replays request ids', async (t) => {
  const redis = await Server.start()
  t.after(() => redis.stop())
  const base = await startServer(t, redis)
  const get = (key, id) =>
    fetch(`${base}/api/hello`, { headers: { 'x-api-key': key, ...(id ? { 'x-request-id': id } : {}) } })
  const answers = await concurrently(40, () => get('k1'))
  const admitted = answers.filter((r) => r.status === 200).length
  assert.ok(admitted >= 5 && admitted < 40, `${admitted}: the GCRA burst of 5, then refusals`)
  for (const r of answers.filter((r) => r.status !== 200)) {
    assert.equal(r.status, 429)
    assert.ok(Number(r.headers.get('retry-after')) >= 1)
  }
  // The daily limit was charged exactly once per admitted request, never for a refusal.
  const daily = (r) => Number(r.headers.get('ratelimit')?.match(/"per-day";r=(\d+)/)?.[1])
  const last = await get('k1')
  assert.equal(daily(last), 1000 - admitted - (last.status === 200 ? 1 : 0))
  const first = await (await get('k2', 'req-1')).json()
  const again = await (await get('k2', 'req-1')).json()
  assert.deepEqual([first.replayed, again.replayed, again.remaining], [false, true, first.remaining])
  assert.equal((await fetch(`${base}/nope`)).status, 404)
})

test('orders: concurrent retries enqueue once and share one answer; two workers ship each once', async (t) => {
  const redis = await Server.start()
  t.after(() => redis.stop())
  const base = await startServer(t, redis)
  const post = (key, body) =>
    fetch(`${base}/orders`, { method: 'POST', headers: { 'idempotency-key': key }, body })
  const keys = Array.from({ length: 8 }, (_, i) => `o-${i}`)
  // Five copies of every order at once.
  const answers = await concurrently(keys.length * 5, async (i) => {
    const r = await post(keys[i % keys.length], `{"sku":${i % keys.length}}`)
    return { key: keys[i % keys.length], status: r.status, body: await r.text() }
  })
  for (const a of answers) assert.ok([201, 409].includes(a.status), `${a.status} ${a.body}`)
  // Once settled, every retry replays the first answer exactly.
  for (const key of keys) {
    const replay = await post(key, `{"sku":${key.slice(2)}}`)
    assert.equal(replay.status, 201)
    const body = await replay.text()
    assert.deepEqual(JSON.parse(body), { order: `order-${key}`, queued: true })
    for (const a of answers.filter((a) => a.key === key && a.status === 201)) assert.equal(a.body, body)
  }
  assert.equal((await post('o-0', '{"sku":"other"}')).status, 422, 'the same key, another body')
  const client = await ra.Client.connect(redis.url)
  const queue = new ra.Queue(client, { namespace: 'example', name: 'orders' })
  const queued = await queue.stats()
  assert.equal(queued.ready + queued.running + queued.acked, keys.length, 'one job per order')
  // Two workers drain the queue; wait (bounded) until every order is acked.
  const workers = [await start(t, 'worker.mjs', redis), await start(t, 'worker.mjs', redis)]
  for (const w of workers) assert.match(w.line, /ready/)
  const deadline = Date.now() + 20_000
  let stats = await queue.stats()
  while (stats.acked < keys.length && Date.now() < deadline) {
    await new Promise((r) => setImmediate(r))
    stats = await queue.stats()
  }
  assert.deepEqual(stats, { ready: 0, scheduled: 0, running: 0, expired: 0, dead: 0, acked: keys.length })
  const fenced = new ra.FencedWrites(client, { namespace: 'example' })
  for (const key of keys) {
    const state = await bulk(redis.port, 'HGET', fenced.key(`order-${key}`, 'state'), 'delivery')
    assert.equal(state, '1', `order-${key} shipped on its first delivery`)
  }
  for (const w of workers) {
    w.child.kill('SIGTERM')
    await once(w.child, 'exit')
  }
})
