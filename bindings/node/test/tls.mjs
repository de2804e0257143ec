// Throwaway TLS material for the tests, made with the openssl CLI (Node's crypto cannot issue
// certificates): a CA, a server certificate for 127.0.0.1 / localhost, a client certificate,
// all P-256, valid for a day, in a private temp dir.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export function tlsMaterial() {
  const dir = mkdtempSync(join(tmpdir(), 'redis-atomic-node-tls-'))
  const ssl = (...args) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] })
  const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']
  ssl('req', '-x509', ...key, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '1', '-subj', '/CN=redis-atomic test CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign')
  const issue = (name, ext) => {
    writeFileSync(join(dir, `${name}.ext`), ext)
    ssl('req', ...key, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`)
    ssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial',
      '-out', `${name}.crt`, '-days', '1', '-extfile', `${name}.ext`)
  }
  issue('server', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n')
  issue('client', 'extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n')
  return dir
}
