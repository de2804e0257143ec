// Idempotency keys through the Node package: each key's side effect runs once under concurrent
// duplicates (counted), replays are exact, and every answer of `begin` is a value.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { concurrently, ra, rejection, useServer } from './fixture.mjs'

const s = useServer()

/** Serves one request the way an endpoint would: runs `effect` at most once per key and answers
 * every duplicate with the stored response. */
async function serve(idem, key, request, effect) {
  for (;;) {
    const begun = await idem.begin('tenant-1', key, request)
    switch (begun.status) {
      case 'claimed': {
        const body = await effect(begun.fence)
        const response = { status: 201, headers: { 'content-type': 'application/json' }, body }
        assert.deepEqual(await begun.complete(response), { stored: true })
        return { status: 201, body, replayed: false }
      }
      case 'inProgress':
        // The protocol's own pause: the other executor's lease says when to look again.
        await new Promise((r) => setTimeout(r, Math.min(begun.retryAfterMs, 20)))
        continue
      case 'replay':
        return { status: begun.response.status, body: begun.response.body.toString(), replayed: true }
      case 'mismatch':
        return { status: 422, body: '', replayed: false }
    }
  }
}

test('each key\'s side effect runs once under 40 concurrent duplicates; every duplicate gets its response', async () => {
  const idem = new ra.Idempotency(s.client, { namespace: 'id1' })
  const effects = new Map()
  const keys = ['order-1', 'order-2', 'order-3']
  const answers = await concurrently(40 * keys.length, (i) => {
    const key = keys[i % keys.length]
    return serve(idem, key, ['POST', '/orders', key], async (fence) => {
      effects.set(key, (effects.get(key) ?? 0) + 1)
      // Work that takes a round trip, so duplicates arrive while it runs.
      await new ra.Quotas(s.client, { namespace: 'id1-work' }).add(key, 1, { max: 1e9 })
      return JSON.stringify({ key, fence })
    })
  })
  for (const key of keys) assert.equal(effects.get(key), 1, `${key} ran ${effects.get(key)} times`)
  for (const [i, a] of answers.entries()) {
    const key = keys[i % keys.length]
    assert.equal(a.status, 201)
    assert.equal(JSON.parse(a.body).key, key)
  }
  // One body per key, whoever answered.
  for (const key of keys) {
    const bodies = new Set(answers.filter((_, i) => keys[i % keys.length] === key).map((a) => a.body))
    assert.equal(bodies.size, 1)
  }
  assert.ok(answers.some((a) => a.replayed), 'duplicates were answered by replay')
})

test('replay is exact (status, headers in order, binary body); a different request is a mismatch', async () => {
  const idem = new ra.Idempotency(s.client, { namespace: 'id2' })
  const claim = await idem.begin('t', Buffer.from([0xff, 0x00]), 'GET /a')
  assert.ok(claim instanceof ra.Claim && claim instanceof ra.IdempotencyClaim, 'Claim, and its deprecated name IdempotencyClaim')
  assert.deepEqual([claim.status, claim.scope, claim.takeover, claim.ttlMs], ['claimed', 't', false, 30_000])
  assert.deepEqual(claim.key, Buffer.from([0xff, 0x00]))
  const body = Buffer.from([0, 1, 2, 255])
  const headers = [{ name: 'set-cookie', value: 'a=1' }, { name: 'set-cookie', value: Buffer.from('b=2') }]
  assert.deepEqual(await claim.complete({ status: 207, headers, body }), { stored: true })
  const replay = await idem.begin('t', Buffer.from([0xff, 0x00]), 'GET /a')
  assert.equal(replay.status, 'replay')
  assert.equal(replay.outcome, 'completed')
  assert.equal(replay.response.status, 207)
  assert.deepEqual(replay.response.headers, [
    { name: 'set-cookie', value: Buffer.from('a=1') },
    { name: 'set-cookie', value: Buffer.from('b=2') },
  ])
  assert.deepEqual(replay.response.body, body)
  assert.equal(replay.response.reference, undefined)
  assert.deepEqual(await idem.begin('t', Buffer.from([0xff, 0x00]), 'GET /b'), { status: 'mismatch' })
  // The same bytes under another scope are another key.
  assert.equal((await idem.begin('u', Buffer.from([0xff, 0x00]), 'GET /b')).status, 'claimed')
  // A reference instead of a body.
  const big = await idem.begin('t', 'big', 'GET /big')
  await big.complete({ status: 200, reference: 's3://bucket/big' })
  const r = await idem.begin('t', 'big', 'GET /big')
  assert.deepEqual([r.response.body, r.response.reference], [undefined, 's3://bucket/big'])
  assert.match(idem.keys('t', 'big').record, /^id2:idem:v1:\{[0-9a-f]+\}$/)
})

test('fail(): without a response the key is free again; with one, duplicates replay the failure', async () => {
  const idem = new ra.Idempotency(s.client, { namespace: 'id3' })
  const first = await idem.begin('t', 'k', 'req')
  assert.deepEqual(await first.fail(), { stored: true })
  const retry = await idem.begin('t', 'k', 'req')
  assert.equal(retry.status, 'claimed', 'a retryable failure frees the key')
  assert.ok(retry.fence > first.fence)
  assert.deepEqual(await retry.fail({ status: 400, body: 'bad card' }), { stored: true })
  const replay = await idem.begin('t', 'k', 'req')
  assert.deepEqual([replay.status, replay.outcome, replay.response.status], ['replay', 'failed', 400])
  assert.equal(replay.response.body.toString(), 'bad card')
  // A handle is used up by its end verb; a bad response leaves it usable.
  const other = await idem.begin('t', 'k2', 'req')
  const bad = await rejection(other.complete({ status: 200, body: 'x', reference: 'y' }))
  assert.ok(bad instanceof ra.BadArgumentError && !(bad instanceof ra.HandleEndedError))
  assert.equal(other.ended, false)
  await other.complete({ status: 200 })
  assert.ok((await rejection(other.fail())) instanceof ra.HandleEndedError)
})

test('a claim whose lease ran out is taken over; the old executor\'s complete stores nothing', async () => {
  const idem = new ra.Idempotency(s.client, { namespace: 'id4', ttlMs: 200 })
  const stale = await idem.begin('t', 'k', 'req', { token: 'exec-1' })
  // The same token again while live: the same claim (how to recover an unknown outcome).
  const same = await idem.begin('t', 'k', 'req', { token: 'exec-1' })
  assert.deepEqual([same.status, same.fence], ['claimed', stale.fence])
  const busy = await idem.begin('t', 'k', 'req')
  assert.equal(busy.status, 'inProgress')
  assert.ok(busy.retryAfterMs > 0 && busy.retryAfterMs <= 200)
  // Past the lease (the protocol's own time), a duplicate takes the key over.
  await new Promise((r) => setTimeout(r, busy.retryAfterMs + 50))
  const fresh = await idem.begin('t', 'k', 'req')
  assert.deepEqual([fresh.status, fresh.takeover], ['claimed', true])
  assert.ok(fresh.fence > stale.fence)
  assert.deepEqual(await stale.complete({ status: 200, body: 'stale' }), { lost: true, stored: false })
  assert.deepEqual(await stale.extend(1_000).catch((e) => e.code), 'handle_ended')
  assert.deepEqual(await same.extend(1_000), { lost: true, extended: false })
  // By parts, with the winner's token and fence.
  assert.deepEqual(await idem.extend('t', 'k', fresh.token, fresh.fence, 5_000), {
    extended: true,
    fence: fresh.fence,
    ttlMs: 5_000,
  })
  assert.deepEqual(await idem.complete('t', 'k', fresh.token, fresh.fence, { status: 200, body: 'fresh' }), {
    stored: true,
  })
  // A repeat of the same end (a resend after an unknown outcome) answers the same.
  assert.deepEqual(await idem.complete('t', 'k', fresh.token, fresh.fence, { status: 200, body: 'fresh' }), {
    stored: true,
  })
  const replay = await idem.begin('t', 'k', 'req')
  assert.equal(replay.response.body.toString(), 'fresh')
})

test('a watched claim outlives its ttl; its signal stays quiet until complete', async () => {
  // A 2 s lease renewed every ~0.67 s: a descheduled process on a loaded machine still renews.
  const idem = new ra.Idempotency(s.client, { namespace: 'id5', ttlMs: 2_000 })
  const claim = await idem.begin('t', 'slow', 'req')
  const lost = claim.watch()
  await new Promise((r) => setTimeout(r, 2_600))
  assert.equal((await idem.begin('t', 'slow', 'req')).status, 'inProgress', 'still held past its ttl')
  assert.deepEqual(await claim.complete({ status: 200, body: 'done' }), { stored: true })
  assert.equal(lost.aborted, false)
  assert.equal((await idem.begin('t', 'slow', 'req')).status, 'replay')
})
