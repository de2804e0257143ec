// Semaphores with leases: the library's Semaphore (crates/redis-atomic/src/primitives/semaphore)
// over the generated script layer. At most `capacity` live permits at any instant of the server's
// clock, each with a fence greater than every fence issued before it. Keys: `<ns>:sem:v1:{name}`
// (holders by lease end), `…:holders` (each holder's fence), `…:fence` (the last fence issued).
// An acquire with a random token is not retry-safe (the caller never saw the token: a resend
// would take a second permit); with the caller's token it is. Release and extend are safe.
import { live, type Client } from './client.js'
import { badArgument, typeError } from './errors.js'
import { key, namespaceOf } from './keys.js'
import { fenceOf, Lease, lost, ownerToken } from './lease.js'
import { randomToken, ttlOf, type Extended, type Lost, type Released } from './locks.js'
import { s } from './decoded.js'

const SCHEMA = 1
const MAX_CAPACITY = 100_000

export interface SemaphoreOptions { namespace: string, name: string, capacity: number }
export interface PermitOptions { token?: string, signal?: AbortSignal }
export interface SemaphoreKeys { permits: string, holders: string, fence: string }
export interface Full { acquired: false, retryAfterMs: number }
export interface SemaphoreState { live: number, nextExpiryMs: number, lastFence: number }

/** One named semaphore of a fixed capacity. */
export class Semaphore {
  readonly #client: Client
  readonly #keys: SemaphoreKeys
  readonly #capacity: number

  constructor(client: Client, options: SemaphoreOptions) {
    if (typeof options !== 'object' || options === null) throw typeError('options must be an object')
    const { capacity } = options
    if (typeof capacity !== 'number') throw typeError('capacity must be a number')
    if (!Number.isInteger(capacity) || capacity < 1 || capacity > MAX_CAPACITY) {
      throw badArgument(`capacity must be in 1..=${MAX_CAPACITY}, got ${capacity}`)
    }
    if (typeof options.name !== 'string') throw typeError('name must be a string')
    const permits = key(namespaceOf(options.namespace), 'sem', SCHEMA, options.name)
    this.#client = live(client)
    this.#capacity = capacity
    this.#keys = { permits, holders: `${permits}:holders`, fence: `${permits}:fence` }
  }

  get capacity(): number { return this.#capacity }
  get keys(): SemaphoreKeys { return { ...this.#keys } }

  /** Takes a permit for `ttlMs` if one is free. */
  async acquire(ttlMs: number, options?: PermitOptions | null): Promise<Permit | Full> {
    const ttl = ttlOf(ttlMs)
    const token = options?.token === undefined || options.token === null ? randomToken() : ownerToken(options.token)
    const k = this.#keys
    const sent = performance.now()
    const raw = await this.#client.runner.call(s.SEM_ACQUIRE, [k.permits, k.holders, k.fence], [token, this.#capacity, ttl],
      { safe: options?.token !== undefined && options.token !== null, signal: options?.signal })
    const r = s.decodeSemAcquire(raw)
    if (r.outcome === 'full') return { acquired: false, retryAfterMs: r.retryAfterMs }
    return new Permit(this, token, r.fence, r.ttlMs, sent)
  }

  /** Gives back the permit `token` holds with `fence`. */
  async release(token: string, fence: number): Promise<Released | Lost> {
    const args = [ownerToken(token), fenceOf(fence)]
    const r = s.decodeSemRelease(await this.#client.runner.call(s.SEM_RELEASE, [this.#keys.permits, this.#keys.holders], args))
    return r.outcome === 'released' ? { released: true, fence: r.fence } : lost('released')
  }

  /** Sets the permit `token` holds with `fence` to end `ttlMs` from the server's now. */
  async extend(token: string, fence: number, ttlMs: number): Promise<Extended | Lost> {
    const args = [ownerToken(token), fenceOf(fence), ttlOf(ttlMs)]
    const r = s.decodeSemExtend(await this.#client.runner.call(s.SEM_EXTEND, [this.#keys.permits, this.#keys.holders], args))
    return r.outcome === 'extended' ? { extended: true, fence: r.fence, ttlMs: r.ttlMs } : lost('extended')
  }

  /** Counts live permits without changing anything. */
  async inspect(): Promise<SemaphoreState> {
    const r = s.decodeSemInspect(await this.#client.runner.call(s.SEM_INSPECT, [this.#keys.permits, this.#keys.fence], []))
    return { live: Math.min(r.live, MAX_CAPACITY), nextExpiryMs: r.nextExpiryMs, lastFence: r.lastFence }
  }
}

/** A held permit: its fence goes to the writes it protects; `release()` when done. */
export class Permit extends Lease {
  readonly #semaphore: Semaphore

  /** @internal */
  constructor(semaphore: Semaphore, token: string, fence: number, ttlMs: number, sent: number) {
    super(token, fence, ttlMs, sent)
    this.#semaphore = semaphore
  }

  get acquired(): true { return true }
  protected get subject(): string { return 'a permit' }
  protected renew(ttlMs: number): Promise<Extended | Lost> {
    return this.#semaphore.extend(this.token, this.fence, ttlMs)
  }

  /** Gives the permit back; consumes the handle. */
  async release(): Promise<Released | Lost> {
    this.end('release')
    return this.#semaphore.release(this.token, this.fence)
  }
}
