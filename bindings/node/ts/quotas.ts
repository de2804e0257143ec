// Quotas: bounded counters (the library's Quotas, crates/redis-atomic/src/primitives/quota.rs).
// A bounded add without a request id is not retry-safe (a resend would add twice); with one it
// is (a repeat returns the recorded answer). Reads, TTLs, `raise` and `addUnlessSmaller` are
// idempotent commands, resent within the retry policy.
import { live, type Client } from './client.js'
import { msOf } from './args.js'
import { badArgument, typeError } from './errors.js'
import { digest, key, namespaceOf } from './keys.js'
import { s } from './decoded.js'

const SCHEMA = 1
const MAX_VALUE = Number.MAX_SAFE_INTEGER
const MAX_TTL_MS = 366 * 86_400_000
const MAX_BATCH = 1000
const MAX_REQUEST_ID_LEN = 256

export interface QuotasOptions { namespace: string, requestTtlMs?: number }
export interface AddOptions { min?: number, max: number, ttlMs?: number, clamp?: boolean, requestId?: string, signal?: AbortSignal }
export interface Applied { applied: true, value: number }
export interface Refused { applied: false, value: number }
export interface Raised { raised: true, value: number }
export interface Kept { raised: false, value: number }
export interface QuotaKeys { value: string, request?: string }
export interface ScoredMember { score: number, member: string | Buffer }

function within(what: string, n: unknown): number {
  if (typeof n !== 'number') throw typeError(`${what} must be a number`)
  if (!Number.isInteger(n) || Math.abs(n) > MAX_VALUE) throw badArgument(`${what} ${n} is not an integer within ±(2^53 - 1)`)
  return n
}


/** Bounded counters of one namespace. */
export class Quotas {
  readonly #client: Client
  readonly #namespace: string
  readonly #requestTtlMs: number

  constructor(client: Client, options: QuotasOptions) {
    if (typeof options !== 'object' || options === null) throw typeError('options must be an object')
    this.#client = live(client)
    this.#namespace = namespaceOf(options.namespace)
    this.#requestTtlMs = msOf('requestTtlMs', options.requestTtlMs ?? 3_600_000, 86_400_000, 1000)
  }

  /** Adds `delta` if the result stays within `[min, max]` (or clamps it with `clamp: true`). */
  async add(name: string, delta: number, options: AddOptions): Promise<Applied | Refused> {
    if (typeof options !== 'object' || options === null) throw typeError('options must be an object')
    within('delta', delta)
    const min = within('min', options.min ?? 0)
    const max = within('max', options.max)
    if (min > max) throw badArgument(`min ${min} is above max ${max}`)
    const ttl = options.ttlMs === undefined ? 0 : msOf('ttlMs', options.ttlMs, MAX_TTL_MS)
    const mode = options.clamp ? 'clamp' : 'refuse'
    const keys = this.keys(name, options.requestId)
    const signal = options.signal
    if (keys.request === undefined) {
      const raw = await this.#client.runner.call(s.QUOTA_ADD, [keys.value], [delta, min, max, mode, ttl], { signal })
      const r = s.decodeQuotaAdd(raw)
      return r.outcome === 'applied' ? { applied: true, value: r.value } : { applied: false, value: r.value }
    }
    const raw = await this.#client.runner.call(s.QUOTA_ADD_ID, [keys.value, keys.request], [delta, min, max, mode, ttl, this.#requestTtlMs], { signal })
    const r = s.decodeQuotaAddId(raw)
    return r.outcome === 'applied' ? { applied: true, value: r.value } : { applied: false, value: r.value }
  }

  /** The counter's value (0 when absent). */
  async get(name: string): Promise<number> {
    const reply = await this.#client.runner.command('get', [this.keys(name).value])
    if (reply === null) return 0
    const n = Number(reply)
    if (!Number.isSafeInteger(n)) throw badArgument(`the counter ${name} does not hold an integer`)
    return n
  }

  /** Sets the counter's TTL only if it has none. */
  async expireOnce(name: string, ttlMs: number): Promise<boolean> {
    return this.#pexpire(name, ttlMs, 'NX')
  }

  /** Moves the counter's TTL forward only. */
  async extendTtl(name: string, ttlMs: number): Promise<boolean> {
    return this.#pexpire(name, ttlMs, 'GT')
  }

  async #pexpire(name: string, ttlMs: number, option: string): Promise<boolean> {
    const ttl = msOf('ttlMs', ttlMs, MAX_TTL_MS)
    return (await this.#client.runner.command('pexpire', [this.keys(name).value, ttl, option])) === 1
  }

  /** Raises the counter to `candidate` if that is larger (a monotonic max). */
  async raise(name: string, candidate: number): Promise<Raised | Kept> {
    within('candidate', candidate)
    const r = s.decodeQuotaMax(await this.#client.runner.call(s.QUOTA_MAX, [this.keys(name).value], [candidate]))
    return r.outcome === 'raised' ? { raised: true, value: r.value } : { raised: false, value: r.value }
  }

  /** `ZADD GT CH`: each member's score only ever rises; answers how many changed. */
  async addUnlessSmaller(set: string, entries: ScoredMember[]): Promise<number> {
    if (!Array.isArray(entries)) throw typeError('entries must be an array')
    if (entries.length === 0 || entries.length > MAX_BATCH) throw badArgument(`a batch has 1..=${MAX_BATCH} entries, got ${entries.length}`)
    const args: (string | number | Buffer)[] = [this.keys(set).value, 'GT', 'CH']
    for (const e of entries) args.push(within('score', e.score), e.member)
    return Number(await this.#client.runner.command('zadd', args))
  }

  /** The keys of counter `name` (and of a request id's record). */
  keys(name: string, requestId?: string | null): QuotaKeys {
    if (typeof name !== 'string') throw typeError('name must be a string')
    const value = key(this.#namespace, 'quota', SCHEMA, name)
    if (requestId === undefined || requestId === null) return { value }
    const r = digest(requestId, MAX_REQUEST_ID_LEN, 'request id')
    return { value, request: key(this.#namespace, 'quota', SCHEMA, name, ['req', r]) }
  }
}
