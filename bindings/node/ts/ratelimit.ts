// Rate limits: the library's RateLimiter (crates/redis-atomic/src/primitives/ratelimit) over the
// generated script layer. One limit without a request id runs the limit's own script (one key,
// the lean common case); several limits, or a request id to record, run `rl_policy`. Every
// decision is made by the script on server time; a decision without a request id is not
// retry-safe (a resend would charge twice), one with a request id is (a repeat replays it).
import { live, type Client } from './client.js'
import { badArgument, CostExceedsBurstError, typeError } from './errors.js'
import { digest, key, namespaceOf } from './keys.js'
import { s } from './decoded.js'
import type * as S from './scripts.js'

/** The algorithms, canonical spelling. */
export type Algorithm = 'fixed-window' | 'anchored-window' | 'sliding-log' | 'sliding-window' | 'token-bucket' | 'gcra'

/** One limit of a policy. */
export interface LimitSpec {
  algorithm: Algorithm | 'fixed_window' | 'anchored_window' | 'sliding_log' | 'sliding_window' | 'token_bucket'
  limit: number
  periodMs: number
  burst?: number
  name?: string
}
/** What `new RateLimiter` takes. */
export interface RateLimiterOptions {
  namespace: string
  limits: LimitSpec[]
  requestTtlMs?: number
}
/** One consume's settings. */
export interface ConsumeOptions {
  cost?: number
  requestId?: string
  signal?: AbortSignal
}
/** One limit's state after a decision. */
export interface LimitStatus {
  name: string
  remaining: number
  resetAfterMs: number
  retryAfterMs: number
}
/** Admitted. */
export interface Allowed {
  allowed: true
  remaining: number
  resetAfterMs: number
  replayed: boolean
  limits: LimitStatus[]
}
/** Refused: try again after `retryAfterMs`. */
export interface Limited {
  allowed: false
  retryAfterMs: number
  resetAfterMs: number
  replayed: boolean
  limits: LimitStatus[]
}
/** The keys a consume uses. */
export interface RateLimitKeys {
  limits: string[]
  request?: string
}

const SCHEMA = 1
const MAX_KEY_LEN = 1024
const MAX_REQUEST_ID_LEN = 256
const MAX_REQUEST_TTL_MS = 86_400_000
const MAX_LIMIT = 2 ** 40
const MAX_LOG_LIMIT = 100_000
const EXACT = 2 ** 52
const ALGORITHMS: readonly Algorithm[] = ['fixed-window', 'anchored-window', 'sliding-log', 'sliding-window', 'token-bucket', 'gcra']
const CODE: Record<Algorithm, string> = {
  'fixed-window': 'fw', 'anchored-window': 'aw', 'sliding-log': 'sl', 'sliding-window': 'sw', 'token-bucket': 'tb', gcra: 'gcra',
}
/** Each limit's own script and its reply's decoder (the five share one shape). */
const SINGLE: Record<Exclude<Algorithm, 'anchored-window'>, { def: S.ScriptDef, decode: (raw: unknown) => S.RlFixedWindowReply }> = {
  'fixed-window': { def: s.RL_FIXED_WINDOW, decode: s.decodeRlFixedWindow },
  'sliding-log': { def: s.RL_SLIDING_LOG, decode: s.decodeRlSlidingLog },
  'sliding-window': { def: s.RL_SLIDING_WINDOW, decode: s.decodeRlSlidingWindow },
  'token-bucket': { def: s.RL_TOKEN_BUCKET, decode: s.decodeRlTokenBucket },
  gcra: { def: s.RL_GCRA, decode: s.decodeRlGcra },
}

/** The algorithms' names (canonical spelling). */
export function algorithms(): Algorithm[] {
  return [...ALGORITHMS]
}

/** An algorithm's name in either spelling (kebab or snake) as its canonical one. */
export function algorithmOf(name: unknown): Algorithm {
  const kebab = typeof name === 'string' ? name.replace(/_/g, '-') : ''
  const a = ALGORITHMS.find((x) => x === kebab)
  if (a === undefined) throw badArgument(`unknown algorithm ${JSON.stringify(name)}: one of ${ALGORITHMS.join(', ')}`)
  return a
}

/** A checked limit, with what its scripts are sent. */
interface Limit {
  name: string
  algorithm: Algorithm
  limit: number
  periodUs: number
  burst: number
  spec: string[]
}

function limitOf(l: LimitSpec): Limit {
  if (typeof l !== 'object' || l === null) throw typeError('each limit must be an object')
  const algorithm = algorithmOf(l.algorithm)
  const max = algorithm === 'sliding-log' ? MAX_LOG_LIMIT : MAX_LIMIT
  if (typeof l.limit !== 'number') throw typeError('limit must be a number')
  if (typeof l.periodMs !== 'number') throw typeError('periodMs must be a number of ms')
  if (!Number.isInteger(l.limit) || l.limit < 1 || l.limit > max) throw badArgument(`${algorithm} limit must be in 1..=${max}, got ${l.limit}`)
  if (typeof l.periodMs !== 'number' || !(l.periodMs >= 1 && l.periodMs <= 366 * 86_400_000)) {
    throw badArgument(`period must be between 1 ms and 366 days, got ${l.periodMs} ms`)
  }
  const periodUs = Math.round(l.periodMs * 1000)
  let burst = l.limit
  if (l.burst !== undefined) {
    if (algorithm !== 'token-bucket' && algorithm !== 'gcra') throw badArgument(`${algorithm} has no burst: its capacity is its limit`)
    if (!Number.isInteger(l.burst) || l.burst < 1 || l.burst > MAX_LIMIT) throw badArgument(`burst must be in 1..=${MAX_LIMIT}, got ${l.burst}`)
    burst = l.burst
  }
  const name = l.name ?? algorithm
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name)) throw badArgument(`limit name must be 1..=64 bytes of [A-Za-z0-9_.-], got ${JSON.stringify(name)}`)
  const interval = Math.ceil(periodUs / l.limit)
  const product = algorithm === 'sliding-window' ? l.limit * periodUs : algorithm === 'token-bucket' || algorithm === 'gcra' ? burst * interval : 0
  if (product > EXACT) throw badArgument(`${algorithm} ${l.limit}/${l.periodMs} ms (burst ${burst}) needs more than 52 bits of µs arithmetic`)
  return { name, algorithm, limit: l.limit, periodUs, burst, spec: [CODE[algorithm], String(l.limit), String(periodUs), String(burst)] }
}

/** Decisions of one policy (one or more limits) per identity. */
export class RateLimiter {
  readonly #client: Client
  readonly #namespace: string
  readonly #limits: Limit[]
  readonly #specs: LimitSpec[]
  readonly #scope: string
  readonly #requestTtlMs: number
  readonly #maxCost: number
  readonly #single: { def: S.ScriptDef, args: string[], decode: (raw: unknown) => S.RlFixedWindowReply } | undefined

  constructor(client: Client, options: RateLimiterOptions) {
    if (typeof options !== 'object' || options === null) throw typeError('options must be an object')
    if (!Array.isArray(options.limits)) throw typeError('limits must be an array')
    this.#client = live(client)
    this.#namespace = namespaceOf(options.namespace)
    if (options.limits.length === 0) throw badArgument('a policy needs at least one limit')
    this.#limits = options.limits.map(limitOf)
    const names = this.#limits.map((l) => `${l.name}:${CODE[l.algorithm]}`)
    if (new Set(this.#limits.map((l) => l.name)).size !== this.#limits.length) throw badArgument('limit names must be distinct')
    this.#specs = this.#limits.map((l) => ({ algorithm: l.algorithm, limit: l.limit, periodMs: l.periodUs / 1000, burst: l.burst, name: l.name }))
    this.#scope = digestParts(names)
    const longest = Math.max(...this.#limits.map((l) => l.periodUs / 1000))
    this.#requestTtlMs = options.requestTtlMs ?? Math.min(Math.ceil(longest), MAX_REQUEST_TTL_MS)
    if (!(this.#requestTtlMs >= 1 && this.#requestTtlMs <= MAX_REQUEST_TTL_MS)) {
      throw badArgument(`request ttl must be between 1 ms and 24 h, got ${this.#requestTtlMs} ms`)
    }
    this.#maxCost = Math.min(...this.#limits.map((l) => l.burst))
    const only = this.#limits.length === 1 ? this.#limits[0] : undefined
    if (only === undefined) this.#single = undefined
    else if (only.algorithm === 'anchored-window') this.#single = { def: s.RL_ANCHORED_WINDOW, args: [String(only.limit), String(Math.ceil(only.periodUs / 1000))], decode: s.decodeRlAnchoredWindow }
    else this.#single = { def: SINGLE[only.algorithm].def, args: [String(only.limit), String(only.periodUs), String(only.burst), ''], decode: SINGLE[only.algorithm].decode }
  }

  /** The policy's limits. */
  get limits(): LimitSpec[] {
    return this.#specs.map((l) => ({ ...l }))
  }

  /** How long a request id is remembered, ms. */
  get requestTtlMs(): number {
    return this.#requestTtlMs
  }

  /** Takes `cost` (default 1) units from every limit of `key`'s identity, or none. */
  async consume(identity: string, options?: ConsumeOptions | null): Promise<Allowed | Limited> {
    if (typeof identity !== 'string') throw typeError('key must be a string')
    const cost = options?.cost ?? 1
    if (!Number.isSafeInteger(cost) || cost < 1) throw badArgument(`cost must be an integer in 1..=2^53-1, got ${cost}`)
    if (cost > this.#maxCost) throw new CostExceedsBurstError(`cost ${cost} exceeds the burst ${this.#maxCost}`, { cost, burst: this.#maxCost, nothingRan: true, retrySafe: true })
    const requestId = options?.requestId
    const tag = digest(identity, MAX_KEY_LEN, 'rate-limit key')
    const runner = this.#client.runner
    const single = this.#single
    if (single !== undefined && requestId === undefined) {
      const k = this.#limitKey(tag, 0)
      const raw = await runner.call(single.def, [k], [cost, ...single.args], options?.signal ? { signal: options.signal } : undefined)
      return this.#one(single.decode(raw))
    }
    const request = requestId === undefined ? '' : digest(requestId, MAX_REQUEST_ID_LEN, 'request id')
    const first = key(this.#namespace, 'rl', SCHEMA, tag, ['req', request === '' ? '-' : this.#scope, ...(request === '' ? [] : [request])])
    const keys = [first, ...this.#limits.map((_, i) => this.#limitKey(tag, i))]
    const args = [String(cost), request, String(this.#requestTtlMs * 1000), '', ...this.#limits.flatMap((l) => l.spec)]
    const raw = await runner.call(s.RL_POLICY, keys, args, { safe: request !== '', signal: options?.signal })
    return this.#policy(s.decodeRlPolicy(raw))
  }

  /** The keys a consume for `identity` (with `requestId`, if any) uses. */
  keys(identity: string, requestId?: string | null): RateLimitKeys {
    const tag = digest(identity, MAX_KEY_LEN, 'rate-limit key')
    const limits = this.#limits.map((_, i) => this.#limitKey(tag, i))
    if (requestId === undefined || requestId === null) return { limits }
    const request = digest(requestId, MAX_REQUEST_ID_LEN, 'request id')
    return { limits, request: key(this.#namespace, 'rl', SCHEMA, tag, ['req', this.#scope, request]) }
  }

  /** A limit's state key; `tag` is a digest (hex), so only the parts checked once are joined. */
  #limitKey(tag: string, i: number): string {
    const l = this.#limits[i] as Limit
    return `${this.#namespace}:rl:v${SCHEMA}:{${tag}}:${l.name}:${CODE[l.algorithm]}`
  }

  #one(r: S.RlFixedWindowReply): Allowed | Limited {
    const name = (this.#limits[0] as Limit).name
    if (r.outcome === 'allowed') {
      const resetAfterMs = r.resetUs / 1000
      return { allowed: true, remaining: r.remaining, resetAfterMs, replayed: false, limits: [{ name, remaining: r.remaining, resetAfterMs, retryAfterMs: 0 }] }
    }
    const retryAfterMs = r.retryUs / 1000
    const resetAfterMs = r.resetUs / 1000
    return { allowed: false, retryAfterMs, resetAfterMs, replayed: false, limits: [{ name, remaining: r.remaining, resetAfterMs, retryAfterMs }] }
  }

  #policy(r: S.RlPolicyReply): Allowed | Limited {
    const limits = r.limits.map((l, i) => ({ name: (this.#limits[i] as Limit).name, remaining: l.remaining, resetAfterMs: l.resetUs / 1000, retryAfterMs: l.retryUs / 1000 }))
    if (r.outcome === 'limited') return { allowed: false, retryAfterMs: r.retryUs / 1000, resetAfterMs: r.resetUs / 1000, replayed: false, limits }
    return { allowed: true, remaining: r.remaining, resetAfterMs: r.resetUs / 1000, replayed: r.outcome === 'replayed', limits }
  }
}

/** 128 bits of SHA-256 in hex of `parts` joined by `|` (the scope of a request record). */
function digestParts(parts: string[]): string {
  return digest(parts.join('|'), Number.MAX_SAFE_INTEGER, 'scope')
}
