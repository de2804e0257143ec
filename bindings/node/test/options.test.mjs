// Client options that change what a call means: `replicas` (every write waits for replicas,
// else NotReplicatedError while the write stands) and `signal` (abandons connecting).
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { test } from 'node:test'
import { ra, rejection, useServer } from './fixture.mjs'
import { bulk, command } from './server.mjs'
import { Server } from './server.mjs'

const s = useServer()

test('replicas: fewer acknowledgements than asked is NotReplicatedError, and the write stands', async () => {
  const client = await ra.Client.connect(s.server.url, { replicas: { count: 1, timeoutMs: 20 } })
  try {
    const quotas = new ra.Quotas(client, { namespace: 'rep1' })
    const e = await rejection(quotas.add('n', 2, { max: 10 }))
    assert.ok(e instanceof ra.NotReplicatedError, `${e?.name}: ${e?.message}`)
    assert.equal(e.code, 'not_replicated')
    assert.deepEqual([e.acked, e.wanted, e.nothingRan], [0, 1, false])
    // It ran once: the counter holds the one add (no resend).
    assert.equal(await bulk(s.server.port, 'GET', quotas.keys('n').value), '2')
    // A read waits for nobody.
    const locks = new ra.Locks(client, { namespace: 'rep1' })
    assert.equal((await locks.inspect('r')).held, false)
  } finally {
    await client.close()
  }
})

test('replicas: a write acknowledged by its replica is on the replica when the call returns', async (t) => {
  const replica = await Server.start()
  t.after(() => replica.stop())
  assert.equal(await command(replica.port, 'REPLICAOF', '127.0.0.1', String(s.server.port)), '+OK')
  // Wait (bounded) until the primary counts the replica as online (synced).
  for (let i = 0; !/slave0:.*state=online/.test(await bulk(s.server.port, 'INFO', 'replication')); i++) {
    assert.ok(i < 1000, 'the replica never came online')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  const client = await ra.Client.connect(s.server.url, { timeoutMs: 20_000, replicas: { count: 1, timeoutMs: 10_000 } })
  try {
    const quotas = new ra.Quotas(client, { namespace: 'rep2' })
    for (let i = 1; i <= 5; i++) {
      assert.deepEqual(await quotas.add('n', 1, { max: 10 }), { applied: true, value: i })
      assert.equal(await bulk(replica.port, 'GET', quotas.keys('n').value), String(i))
    }
  } finally {
    await client.close()
  }
})

test('signal: an aborted connect rejects with AbortedError; nothing ran', async () => {
  const pre = await rejection(ra.Client.connect(s.server.url, { signal: AbortSignal.abort('no') }))
  assert.ok(pre instanceof ra.AbortedError, `${pre?.name}: ${pre?.message}`)
  assert.deepEqual([pre.nothingRan, pre.cause], [true, 'no'])
  // A server that accepts and never answers: connecting waits until the signal fires.
  const silent = createServer(() => {})
  silent.listen(0, '127.0.0.1')
  await once(silent, 'listening')
  try {
    const ac = new AbortController()
    silent.once('connection', () => ac.abort('stop'))
    const e = await rejection(ra.Client.connect(`redis://127.0.0.1:${silent.address().port}`, { timeoutMs: 60_000, signal: ac.signal }))
    assert.ok(e instanceof ra.AbortedError, `${e?.name}: ${e?.message}`)
    assert.deepEqual([e.code, e.cause], ['aborted', 'stop'])
  } finally {
    silent.close()
  }
})
