// Your own scripts through the Node package (examples/user-scripts), by EVALSHA and by FCALL.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { test } from 'node:test'
import { concurrently, ra, rejection, useServer } from './fixture.mjs'
import { command } from './server.mjs'

const s = useServer()
const dir = fileURLToPath(new URL('../../../examples/user-scripts', import.meta.url))
const scripts = ra.ScriptSet.loadDir(dir, 'shop')

test('the folder loads with its names and library', () => {
  assert.deepEqual(scripts.names, ['session_touch', 'stock_reserve', 'zadd_unless_smaller'])
  const version = Number(readFileSync(`${dir}/library.version`, 'utf8').trim())
  assert.ok(version >= 1)
  assert.deepEqual(scripts.library, { name: `shop_v${version}`, version })
})

for (const delivery of ['eval', 'functions']) {
  test(`${delivery}: stock never goes below zero and a request id reserves once`, async () => {
    const client = await ra.Client.connect(s.server.url, { delivery })
    await scripts.preload(client)
    const sku = `sku-${delivery}`
    assert.equal(await command(s.server.port, 'SET', `shop:stock:{${sku}}`, '10'), '+OK')
    const reserve = (id) =>
      scripts.call(client, 'stock_reserve', {
        keys: [`shop:stock:{${sku}}`, `shop:reservation:{${sku}}:${id}`],
        args: ['1', 600],
      })
    const replies = await concurrently(30, (i) => reserve(`req-${i}`))
    assert.equal(replies.filter((r) => r.status === 'reserved').length, 10)
    for (const r of replies) {
      if (r.status === 'reserved') assert.ok(Number.isInteger(r.fields[0]) && r.fields[0] >= 0)
      else assert.deepEqual(r, { status: 'insufficient', fields: [0] })
    }
    // A resent request replays and takes nothing.
    const first = replies.findIndex((r) => r.status === 'reserved')
    assert.deepEqual(await reserve(`req-${first}`), { status: 'replay', fields: [0] })
    assert.equal(await command(s.server.port, 'GET', `shop:stock:{${sku}}`), '$1')
  })
}

test('replies become JavaScript values; the header retry class sets retrySafe', async () => {
  const touched = await scripts.call(s.client, 'session_touch', {
    keys: ['app:session:{u1}:s1', 'app:user-sessions:{u1}'],
    args: ['s1', Buffer.from('u1'), 60],
  })
  assert.deepEqual(touched, { status: 'touched', fields: [1] })
  const other = await scripts.call(s.client, 'session_touch', {
    keys: ['app:session:{u1}:s1', 'app:user-sessions:{u1}'],
    args: ['s1', 'u2', 60],
  })
  assert.deepEqual(other, { status: 'other_user', fields: ['u1'] })
  const e = await rejection(scripts.call(s.client, 'stock_reserve', { keys: ['a{x}', 'b{x}'], args: ['x', '1'] }))
  assert.ok(e instanceof ra.RedisAtomicError, `${e.name}: ${e.message}`)
})
