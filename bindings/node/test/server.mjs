// Real servers for the tests, started the way redis-atomic-testkit starts them
// (crates/redis-atomic-testkit/src/server.rs): the binary from REDIS_ATOMIC_SERVER_BIN or
// `redis-server` on PATH (so the same suite runs on Valkey), a private temp dir, a free port on
// 127.0.0.1 (or a Unix socket in that dir), ready once it answers PING, killed (by its own pid) on
// teardown. Options add what the URL-form tests need: a one-node cluster owning every slot, a
// Sentinel watching a primary, TLS with certificates from tls.mjs.

import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { createServer, connect } from 'node:net'
import { connect as tlsConnect } from 'node:tls'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'

export function serverBinary() {
  const explicit = process.env.REDIS_ATOMIC_SERVER_BIN
  if (explicit) {
    if (!existsSync(explicit)) throw new Error(`REDIS_ATOMIC_SERVER_BIN=${explicit}: no such file`)
    return explicit
  }
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const p = join(dir, 'redis-server')
    if (existsSync(p)) return p
  }
  throw new Error('redis-server not found: install it or set REDIS_ATOMIC_SERVER_BIN')
}

/** A free port on 127.0.0.1: bound, then closed (nothing listens on it until someone does). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.on('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
  })
}

/** One command over a fresh connection (RESP2). `to` is a port, or `{ port, path, tls }` (a
 * Unix socket path; node:tls options). `complete(reply)` returns the answer once `reply` (a
 * Buffer) holds it, else undefined. */
function roundTrip(to, words, complete) {
  return new Promise((resolve, reject) => {
    const where = typeof to === 'number' ? { port: to } : to
    const sock = where.tls
      ? tlsConnect({ host: '127.0.0.1', port: where.port, ...where.tls })
      : connect(where.path ? { path: where.path } : { host: '127.0.0.1', port: where.port })
    const timer = setTimeout(() => {
      sock.destroy()
      reject(new Error(`no reply to ${words[0]} within 2 s`))
    }, 2000)
    sock.on('error', (e) => {
      clearTimeout(timer)
      reject(e)
    })
    let buf = Buffer.alloc(0)
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d])
      const answer = complete(buf)
      if (answer !== undefined) {
        clearTimeout(timer)
        sock.destroy()
        resolve(answer)
      }
    })
    const parts = [`*${words.length}\r\n`]
    for (const w of words) parts.push(`$${Buffer.byteLength(String(w))}\r\n${w}\r\n`)
    sock.write(parts.join(''))
  })
}

/** A command's first reply line (`+PONG`, `:1`, `$4`, `-ERR …`). */
export function command(to, ...words) {
  return roundTrip(to, words, (buf) => {
    const end = buf.indexOf('\r\n')
    return end < 0 ? undefined : buf.subarray(0, end).toString()
  })
}

/** A command's whole bulk-string reply. */
export function bulk(to, ...words) {
  return roundTrip(to, words, (buf) => {
    const end = buf.indexOf('\r\n')
    if (end < 0) return undefined
    const n = Number(buf.subarray(1, end).toString())
    return buf.length >= end + 4 + n ? buf.subarray(end + 2, end + 2 + n).toString() : undefined
  })
}

export class Server {
  /**
   * Starts a server. `options`: `unixSocket` (listen on a socket only), `cluster` (cluster mode,
   * every slot assigned to this one node), `sentinel: { service, primaryPort }` (a Sentinel),
   * `tls: { dir, auth }` (TLS only, certificates in `dir` from tls.mjs; `auth` 'yes' | 'no').
   */
  static async start(options = {}) {
    const bin = serverBinary()
    for (let attempt = 0; attempt < 5; attempt++) {
      const dir = mkdtempSync(join(tmpdir(), 'redis-atomic-node-'))
      const port = await freePort()
      const server = new Server(bin, dir, port, options)
      writeFileSync(join(dir, 'redis.conf'), server.config().join('\n'))
      const args = [join(dir, 'redis.conf'), ...(options.sentinel ? ['--sentinel'] : [])]
      server.watch(spawn(bin, args, { stdio: 'ignore' }))
      if (await server.ready(10_000)) {
        if (options.cluster) await server.assignAllSlots()
        return server
      }
      server.stop()
    }
    throw new Error(`${bin} did not start (5 attempts)`)
  }

  constructor(bin, dir, port, options) {
    Object.assign(this, { bin, dir, port, options, exited: false })
  }

  watch(child) {
    this.child = child
    child.on('exit', () => {
      this.exited = true
    })
  }

  config() {
    const { unixSocket, cluster, sentinel, tls } = this.options
    const lines = [
      `port ${unixSocket || tls ? 0 : this.port}`,
      'bind 127.0.0.1',
      `dir ${this.dir}`,
      'logfile redis.log',
      'save ""',
      'appendonly no',
      'protected-mode no',
      'daemonize no',
    ]
    if (!sentinel) lines.push('enable-debug-command yes')
    if (unixSocket) lines.push(`unixsocket ${this.socket}`, 'unixsocketperm 700')
    // The node announces its address: a lone node that never met another has none, and answers
    // CLUSTER SLOTS with an empty IP, which ioredis skips (so its Cluster would never be ready).
    if (cluster) lines.push('cluster-enabled yes', `cluster-config-file ${join(this.dir, 'nodes.conf')}`, 'cluster-announce-ip 127.0.0.1')
    if (sentinel) lines.push(`sentinel monitor ${sentinel.service} 127.0.0.1 ${sentinel.primaryPort} 1`)
    if (tls) {
      lines.push(
        `tls-port ${this.port}`,
        `tls-cert-file ${join(tls.dir, 'server.crt')}`,
        `tls-key-file ${join(tls.dir, 'server.key')}`,
        `tls-ca-cert-file ${join(tls.dir, 'ca.crt')}`,
        `tls-auth-clients ${tls.auth ?? 'no'}`,
      )
    }
    return lines
  }

  get socket() {
    return join(this.dir, 'redis.sock')
  }

  /** Where `command()` reaches this server. */
  get address() {
    const { unixSocket, tls } = this.options
    if (unixSocket) return { path: this.socket }
    if (tls) {
      const file = (f) => readFileSync(join(tls.dir, f))
      return { port: this.port, tls: { ca: file('ca.crt'), cert: file('client.crt'), key: file('client.key'), servername: 'localhost' } }
    }
    return { port: this.port }
  }

  get url() {
    if (this.options.unixSocket) return `redis+unix://${this.socket}`
    return `${this.options.tls ? 'rediss' : 'redis'}://127.0.0.1:${this.port}`
  }

  /** Waits (bounded) until the server answers PING. */
  async ready(limitMs) {
    return this.until(limitMs, async () => (await command(this.address, 'PING')) === '+PONG')
  }

  /** Polls `check` (bounded in time) until it holds; false if it never did. */
  async until(limitMs, check) {
    const deadline = Date.now() + limitMs
    while (Date.now() < deadline && !this.exited) {
      try {
        if (await check()) return true
      } catch {
        // not there yet
      }
      await new Promise((r) => setTimeout(r, 10))
    }
    return false
  }

  /** A one-node cluster: every slot here, then wait for `cluster_state:ok`. */
  async assignAllSlots() {
    const reply = await command(this.address, 'CLUSTER', 'ADDSLOTSRANGE', '0', '16383')
    if (reply !== '+OK') throw new Error(`CLUSTER ADDSLOTSRANGE: ${reply}`)
    const ok = await this.until(10_000, async () =>
      (await bulk(this.address, 'CLUSTER', 'INFO')).includes('cluster_state:ok'),
    )
    if (!ok) throw new Error('the one-node cluster never reached cluster_state:ok')
  }

  /** SIGSTOP: the server stops answering, connections stay open (a stall, not a refusal). */
  pause() {
    process.kill(this.child.pid, 'SIGSTOP')
  }

  resume() {
    process.kill(this.child.pid, 'SIGCONT')
  }

  stop() {
    if (!this.exited) {
      try {
        process.kill(this.child.pid, 'SIGCONT')
        process.kill(this.child.pid, 'SIGKILL')
      } catch {
        // already gone
      }
    }
    rmSync(this.dir, { recursive: true, force: true })
  }
}

