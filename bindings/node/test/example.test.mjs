// examples/node/server.mjs, run as a user would (its own process, `redis-atomic` resolved
// through examples/node/node_modules), against a real server: refusals are 429 with Retry-After
// and charge nothing (the daily limit counts exactly the admitted requests); a repeated request
// id is counted once.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { test } from 'node:test'
import { concurrently } from './fixture.mjs'
import { Server } from './server.mjs'

const dir = fileURLToPath(new URL('../../../examples/node', import.meta.url))

test('the example server limits per API key and replays request ids', async (t) => {
  assert.ok(existsSync(`${dir}/node_modules/redis-atomic`), 'run `npm ci --ignore-scripts` in examples/node')
  const redis = await Server.start()
  t.after(() => redis.stop())
  const child = spawn(process.execPath, ['server.mjs'], {
    cwd: dir,
    env: { ...process.env, REDIS_URL: redis.url, PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  t.after(() => child.kill('SIGKILL'))
  const [line] = await once(child.stdout, 'data')
  const base = String(line).match(/http:\/\/127\.0\.0\.1:\d+/)?.[0]
  assert.ok(base, `the example printed its address: ${line}`)
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
