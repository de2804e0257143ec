// Idempotency keys: the library's Idempotency (crates/redis-atomic/src/primitives/idempotency).
// One record per (scope, key) at `<ns>:idem:v1:{<digest>}` — the digest is SHA-256 of (scope,
// key), so user-supplied keys never pick the slot — holding state, fence, owner token, the
// request's fingerprint, lease end and the stored response (response.ts, the library's encoding).
// `begin` claims the key (a lease with a fence), answers a live claim's `inProgress`, a finished
// request's `replay`, or a different request's `mismatch`. A begin with a random token is not
// retry-safe (the caller never saw the token); with the caller's token it is. Extend and the
// ends (token and fence) are.
import { bytes, msOf } from './args.js'
import { createHash } from 'node:crypto'
import { live, type Client } from './client.js'
import { badArgument, typeError } from './errors.js'
import { key as keyOf, namespaceOf } from './keys.js'
import { fenceOf, Lease, lost, ownerToken } from './lease.js'
import { randomToken, type Extended, type Lost } from './locks.js'
import { decodeResponse, encodeResponse, type ResponseInit, type StoredResponse } from './response.js'
import { s } from './decoded.js'

const SCHEMA = 1
const MAX_KEY_LEN = 512
const MAX_TTL_MS = 86_400_000
const MAX_RESULT_TTL_MS = 30 * 86_400_000

export type { Header, HeaderInit, ResponseInit, StoredResponse } from './response.js'
export interface IdempotencyOptions { namespace: string, ttlMs?: number, resultTtlMs?: number, maxResponseBytes?: number }
export interface BeginOptions { token?: string, signal?: AbortSignal }
export interface IdempotencyKeys { record: string }
export interface InProgress { status: 'inProgress', retryAfterMs: number }
export interface Replay { status: 'replay', outcome: 'completed' | 'failed', response: StoredResponse }
export interface Mismatch { status: 'mismatch' }
export interface Stored { stored: true }

type Bytes = string | Buffer


/** The library's Fingerprint::of: SHA-256 over each part's u64 BE length and bytes, 128 bits hex. */
export function fingerprint(parts: readonly Buffer[]): string {
  const h = createHash('sha256')
  for (const p of parts) {
    const len = Buffer.alloc(8)
    len.writeBigUInt64BE(BigInt(p.length))
    h.update(len).update(p)
  }
  return h.digest('hex').slice(0, 32)
}


/** Idempotency records of one namespace, keyed per call by (scope, key). */
export class Idempotency {
  readonly #client: Client
  readonly #namespace: string
  readonly #ttlMs: number
  readonly #resultTtlMs: number
  readonly #maxResponseBytes: number

  constructor(client: Client, options: IdempotencyOptions) {
    if (typeof options !== 'object' || options === null) throw typeError('options must be an object')
    this.#client = live(client)
    this.#namespace = namespaceOf(options.namespace)
    this.#ttlMs = msOf('ttlMs', options.ttlMs ?? 30_000, MAX_TTL_MS)
    this.#resultTtlMs = msOf('resultTtlMs', options.resultTtlMs ?? 86_400_000, MAX_RESULT_TTL_MS)
    const max = options.maxResponseBytes ?? 1 << 20
    if (typeof max !== 'number') throw typeError('maxResponseBytes must be a number')
    if (!Number.isSafeInteger(max) || max < 1) throw badArgument(`max response bytes must be at least 1, got ${max}`)
    this.#maxResponseBytes = max
  }

  /** Claims (`scope`, `key`) for `request`, or answers a duplicate. */
  async begin(scope: string, key: Bytes, request: Bytes | Bytes[], options?: BeginOptions | null): Promise<Claim | InProgress | Replay | Mismatch> {
    const record = this.keys(scope, key).record
    const parts = (Array.isArray(request) ? request : [request]).map((p) => bytes('request', p))
    const token = options?.token === undefined || options.token === null ? randomToken() : ownerToken(options.token)
    const safe = options?.token !== undefined && options.token !== null
    const sent = performance.now()
    const raw = await this.#client.runner.call(s.IDEM_BEGIN, [record], [token, fingerprint(parts), this.#ttlMs, this.#resultTtlMs],
      { safe, signal: options?.signal, binary: true })
    const r = s.decodeIdemBegin(raw)
    switch (r.outcome) {
      case 'claimed': return new Claim(this, scope, bytes('key', key), token, r.fence, r.takeover, this.#ttlMs, sent)
      case 'in_progress': return { status: 'inProgress', retryAfterMs: r.retryAfterMs }
      case 'replay': return { status: 'replay', outcome: r.outcomeValue, response: decodeResponse(r.payload) }
      case 'mismatch': return { status: 'mismatch' }
    }
  }

  /** Sets the lease of the claim `token` holds with `fence` to end `ttlMs` from the server's now. */
  async extend(scope: string, key: Bytes, token: string, fence: number, ttlMs: number): Promise<Extended | Lost> {
    const record = this.keys(scope, key).record
    const args = [ownerToken(token), fenceOf(fence), msOf('ttlMs', ttlMs, MAX_TTL_MS)]
    const r = s.decodeIdemExtend(await this.#client.runner.call(s.IDEM_EXTEND, [record], args))
    return r.outcome === 'extended' ? { extended: true, fence: r.fence, ttlMs: r.ttlMs } : lost('extended')
  }

  /** Stores `response` as the result of the claim `token` holds with `fence`. */
  async complete(scope: string, key: Bytes, token: string, fence: number, response: ResponseInit): Promise<Stored | Lost> {
    return this.finish(scope, bytes('key', key), token, fence, 'completed', this.encode(response))
  }

  /** Ends the claim with a failure: without a response the key is freed; with one, it is stored. */
  async fail(scope: string, key: Bytes, token: string, fence: number, response?: ResponseInit | null): Promise<Stored | Lost> {
    const payload = response === undefined || response === null ? undefined : this.encode(response)
    return this.finish(scope, bytes('key', key), token, fence, payload === undefined ? 'retry' : 'failed', payload)
  }

  /** @internal `response` encoded, within the size limit (checked before a handle is ended). */
  encode(response: ResponseInit): Buffer {
    const payload = encodeResponse(response)
    if (payload.length > this.#maxResponseBytes) {
      throw badArgument(`response is ${payload.length} bytes encoded, over the ${this.#maxResponseBytes}-byte limit: store a reference`)
    }
    return payload
  }

  /** @internal A claim's end: `completed`, `failed` (both with a payload) or `retry` (none). */
  async finish(scope: string, key: Buffer, token: string, fence: number, word: string, payload: Buffer | undefined): Promise<Stored | Lost> {
    const record = this.keys(scope, key).record
    const args = [ownerToken(token), fenceOf(fence), word, payload ?? '', this.#resultTtlMs]
    const r = s.decodeIdemComplete(await this.#client.runner.call(s.IDEM_COMPLETE, [record], args))
    return r.outcome === 'stored' ? { stored: true } : lost('stored')
  }

  /** The keys of (`scope`, `key`). */
  keys(scope: string, key: Bytes): IdempotencyKeys {
    if (typeof scope !== 'string') throw typeError('scope must be a string')
    const k = bytes('key', key)
    for (const [what, len] of [['scope', Buffer.byteLength(scope)], ['idempotency key', k.length]] as const) {
      if (len === 0 || len > MAX_KEY_LEN) throw badArgument(`${what} must be 1..=${MAX_KEY_LEN} bytes, got ${len}`)
    }
    return { record: keyOf(this.#namespace, 'idem', SCHEMA, fingerprint([Buffer.from(scope), k])) }
  }
}

/** A live claim: run the request, then `complete(response)` or `fail(response?)`. */
export class Claim extends Lease {
  readonly #store: Idempotency
  readonly #key: Buffer

  /** @internal */
  constructor(store: Idempotency, readonly scope: string, key: Buffer, token: string, fence: number, readonly takeover: boolean, ttlMs: number, sent: number) {
    super(token, fence, ttlMs, sent)
    this.#store = store
    this.#key = key
  }

  get status(): 'claimed' { return 'claimed' }
  get key(): Buffer { return Buffer.from(this.#key) }
  protected get subject(): string { return `the claim on ${this.scope}` }
  protected renew(ttlMs: number): Promise<Extended | Lost> {
    return this.#store.extend(this.scope, this.#key, this.token, this.fence, ttlMs)
  }

  /** Stores `response` for replay; consumes the handle. */
  async complete(response: ResponseInit): Promise<Stored | Lost> {
    const payload = this.#store.encode(response)
    this.end('complete')
    return this.#store.finish(this.scope, this.#key, this.token, this.fence, 'completed', payload)
  }

  /** Ends the claim with a failure; consumes the handle. */
  async fail(response?: ResponseInit | null): Promise<Stored | Lost> {
    const payload = response === undefined || response === null ? undefined : this.#store.encode(response)
    this.end('fail')
    return this.#store.finish(this.scope, this.#key, this.token, this.fence, payload === undefined ? 'retry' : 'failed', payload)
  }
}
