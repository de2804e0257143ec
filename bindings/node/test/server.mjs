// Real servers for the tests, started the way redis-atomic-testkit starts them
// (crates/redis-atomic-testkit/src/server.rs): the binary from REDIS_ATOMIC_SERVER_BIN or
// `redis-server` on PATH (so the same suite runs on Valkey), a private temp dir, a free port on
// 127.0.0.1, ready once it answers PING, killed (by its own pid) on teardown.

import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { createServer, connect } from 'node:net'
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

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.on('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
  })
}

/** One command over a fresh connection (RESP2); resolves with the first reply line. */
export function command(port, ...words) {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: '127.0.0.1', port })
    const timer = setTimeout(() => {
      sock.destroy()
      reject(new Error(`no reply to ${words[0]} within 2 s`))
    }, 2000)
    sock.on('error', (e) => {
      clearTimeout(timer)
      reject(e)
    })
    let buf = ''
    sock.on('data', (d) => {
      buf += d.toString('latin1')
      const end = buf.indexOf('\r\n')
      if (end >= 0) {
        clearTimeout(timer)
        sock.destroy()
        resolve(buf.slice(0, end))
      }
    })
    const parts = [`*${words.length}\r\n`]
    for (const w of words) parts.push(`$${Buffer.byteLength(String(w))}\r\n${w}\r\n`)
    sock.write(parts.join(''))
  })
}

export class Server {
  static async start() {
    const bin = serverBinary()
    for (let attempt = 0; attempt < 5; attempt++) {
      const dir = mkdtempSync(join(tmpdir(), 'redis-atomic-node-'))
      const port = await freePort()
      const conf = [
        `port ${port}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        'logfile redis.log',
        'save ""',
        'appendonly no',
        'protected-mode no',
        'daemonize no',
        'enable-debug-command yes',
      ].join('\n')
      writeFileSync(join(dir, 'redis.conf'), conf)
      const child = spawn(bin, [join(dir, 'redis.conf')], { stdio: 'ignore' })
      const server = new Server(bin, dir, port, child)
      if (await server.ready(10_000)) return server
      server.stop()
    }
    throw new Error(`${bin} did not start (5 attempts)`)
  }

  constructor(bin, dir, port, child) {
    Object.assign(this, { bin, dir, port, child, exited: false })
    child.on('exit', () => {
      this.exited = true
    })
  }

  get url() {
    return `redis://127.0.0.1:${this.port}`
  }

  /** Waits (bounded) until the server answers PING. */
  async ready(limitMs) {
    const deadline = Date.now() + limitMs
    while (Date.now() < deadline && !this.exited) {
      try {
        if ((await command(this.port, 'PING')) === '+PONG') return true
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 10))
    }
    return false
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
