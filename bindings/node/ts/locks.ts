// Locks with fencing tokens: the library's Locks (crates/redis-atomic/src/primitives/lock) over
// the generated script layer. An acquire with a random token is not retry-safe (the caller never
// saw the token, so a resend would take a second lease); with the caller's token and no wait it
// is (the same token gets its own fence back). Release and extend are safe (token and fence).
import { randomFillSync } from 'node:crypto'
import { live, type Client } from './client.js'
import { AbortedError, badArgument, typeError } from './errors.js'
import { fenceOf, Lease, lost } from './lease.js'
import { key, namespaceOf } from './keys.js'
import { s } from './decoded.js'

const SCHEMA = 1
const MAX_TTL_MS = 604_800_000

export interface LocksOptions { namespace: string }
export interface AcquireOptions { token?: string, waitMs?: number, signal?: AbortSignal }
export interface LockKeys { lock: string, fence: string }
export interface Held { acquired: false, retryAfterMs: number }
export interface Released { released: true, fence: number }
export interface Extended { extended: true, fence: number, ttlMs: number }
export interface Lost { lost: true, released?: false, extended?: false, acked?: false, stored?: false, status?: 'lost' }
export interface Locked { held: true, fence: number, ttlMs: number }
export interface Free { held: false, fence: number, ttlMs: 0 }
export interface WatchOptions { renewFraction?: number, marginFraction?: number }

/** Random bytes for the next tokens, filled 256 tokens at a time (as Node pools randomUUID's):
 * the same CSPRNG output, one call into it per 256 acquisitions instead of one each. */
const POOL = Buffer.alloc(16 * 256)
let pooled = 0

/** A fresh owner token: 128 random bits in hex. */
export function randomToken(): string {
  if (pooled === 0) {
    randomFillSync(POOL)
    pooled = POOL.length
  }
  pooled -= 16
  return POOL.toString('hex', pooled, pooled + 16)
}

/** A lease's length, checked: 1 ms ..= 7 days, whole ms. */
export function ttlOf(ttlMs: unknown): number {
  if (typeof ttlMs !== 'number') throw typeError('ttlMs must be a number')
  if (!Number.isInteger(ttlMs) || ttlMs < 1 || ttlMs > MAX_TTL_MS) throw badArgument(`ttl must be an integer number of ms in 1..=${MAX_TTL_MS}, got ${ttlMs}`)
  return ttlMs
}

/** Waits `ms`, or rejects with AbortedError when `signal` fires (a waiting acquire's token is
 * its own: whatever it sent may have run, and it cannot be resent). */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = (): void => {
      clearTimeout(timer)
      reject(new AbortedError('the wait was aborted; an earlier attempt may have run', { attempts: 1, cause: signal?.reason }))
    }
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/** Locks of one namespace. */
export class Locks {
  readonly #client: Client
  readonly #namespace: string

  constructor(client: Client, options: LocksOptions) {
    if (typeof options !== 'object' || options === null) throw typeError('options must be an object')
    this.#client = live(client)
    this.#namespace = namespaceOf(options.namespace)
  }

  /** Tries once (or for up to `waitMs`) to take `resource` for `ttlMs`. */
  async acquire(resource: string, ttlMs: number, options?: AcquireOptions | null): Promise<LockGuard | Held> {
    if (typeof resource !== 'string') throw typeError('resource must be a string')
    const ttl = ttlOf(ttlMs)
    const keys = this.keys(resource)
    const given = options?.token
    if (given !== undefined && (typeof given !== 'string' || given === '')) throw badArgument('token must be a non-empty string')
    const token = given ?? randomToken()
    const waitMs = options?.waitMs ?? 0
    if (typeof waitMs !== 'number' || !(waitMs >= 0)) throw badArgument(`waitMs must be a number of ms, got ${String(waitMs)}`)
    if (given !== undefined && waitMs > 0) throw badArgument('a wait uses a token of its own: give token or waitMs, not both')
    // Resending the same token cannot take a second lease (the client may); only the caller's own
    // token without a wait lets the caller resend.
    const retrySafe = given !== undefined && waitMs === 0
    const signal = options?.signal
    const started = Date.now()
    for (;;) {
      const sent = performance.now()
      const raw = await this.#client.runner.call(s.LOCK_ACQUIRE, [keys.lock, keys.fence], [token, String(ttl)], { safe: true, retrySafe, signal })
      const r = s.decodeLockAcquire(raw)
      if (r.outcome === 'acquired') return new LockGuard(this, resource, token, r.fence, r.ttlMs, sent)
      const left = started + waitMs - Date.now()
      if (left <= 0) return { acquired: false, retryAfterMs: r.retryAfterMs }
      await pause(Math.max(1, Math.min(r.retryAfterMs, left, 50 + Math.random() * 50)), signal)
    }
  }

  /** Releases `resource` if `token` holds it with the lease `fence`. */
  async release(resource: string, token: string, fence: number): Promise<Released | Lost> {
    const keys = this.keys(resource)
    const r = s.decodeLockRelease(await this.#client.runner.call(s.LOCK_RELEASE, [keys.lock], [token, fenceOf(fence)]))
    return r.outcome === 'released' ? { released: true, fence: r.fence } : lost('released')
  }

  /** Sets the lease `fence` of `token` to end `ttlMs` from the server's now. */
  async extend(resource: string, token: string, fence: number, ttlMs: number): Promise<Extended | Lost> {
    const ttl = ttlOf(ttlMs)
    const keys = this.keys(resource)
    const r = s.decodeLockExtend(await this.#client.runner.call(s.LOCK_EXTEND, [keys.lock], [token, fenceOf(fence), String(ttl)]))
    return r.outcome === 'extended' ? { extended: true, fence: r.fence, ttlMs: r.ttlMs } : lost('extended')
  }

  /** The lock's state. */
  async inspect(resource: string): Promise<Locked | Free> {
    const keys = this.keys(resource)
    const r = s.decodeLockInspect(await this.#client.runner.call(s.LOCK_INSPECT, [keys.lock, keys.fence], []))
    return r.outcome === 'held' ? { held: true, fence: r.fence, ttlMs: r.ttlMs } : { held: false, fence: r.lastFence, ttlMs: 0 }
  }

  /** @internal Throws the closed client's ClientError (before a handle judges itself). */
  live(): void {
    live(this.#client)
  }

  /** The keys of `resource`'s lock. */
  keys(resource: string): LockKeys {
    if (typeof resource !== 'string') throw typeError('resource must be a string')
    return { lock: key(this.#namespace, 'lock', SCHEMA, resource), fence: key(this.#namespace, 'lock', SCHEMA, resource, ['fence']) }
  }
}

/** A held lock: its fence goes to every write it protects; `release()` when done. */
export class LockGuard extends Lease {
  /** @internal */
  constructor(readonly locks: Locks, readonly resource: string, token: string, fence: number, ttlMs: number, sent: number) {
    super(token, fence, ttlMs, sent)
  }

  get acquired(): true { return true }
  protected get subject(): string { return `the lock on ${this.resource}` }
  protected override clientLive(): void { this.locks.live() }
  protected renew(ttlMs: number): Promise<Extended | Lost> {
    return this.locks.extend(this.resource, this.token, this.fence, ttlMs)
  }

  /** Gives the lock back; consumes the handle. */
  async release(): Promise<Released | Lost> {
    this.end('release')
    return this.locks.release(this.resource, this.token, this.fence)
  }
}
