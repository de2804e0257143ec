// Dedup: first sightings of event ids (the library's Dedup, crates/redis-atomic/src/primitives/
// dedup.rs): one `SET key token NX PX ttl GET` per id. Nil: this call set it (first sighting);
// our own token back: our earlier attempt set it (a resend after a lost reply is still the first
// sighting); anything else: a duplicate. Retry-safe, since the token tells the attempts apart.
import { live, type Client } from './client.js'
import { badArgument, typeError } from './errors.js'
import { key, namespaceOf } from './keys.js'
import { randomToken } from './locks.js'

const SCHEMA = 1
const MAX_TTL_MS = 30 * 86_400_000

export interface DedupOptions { namespace: string }
export interface SightingOptions { token?: string, signal?: AbortSignal }
export interface DedupKeys { seen: string }

/** First sightings of one namespace's event ids. */
export class Dedup {
  readonly #client: Client
  readonly #namespace: string

  constructor(client: Client, options: DedupOptions) {
    if (typeof options !== 'object' || options === null) throw typeError('options must be an object')
    this.#client = live(client)
    this.#namespace = namespaceOf(options.namespace)
  }

  /** Whether this is the first sighting of `eventId` within `ttlMs`. */
  async firstSeen(eventId: string, ttlMs: number, options?: SightingOptions | null): Promise<boolean> {
    const k = this.keys(eventId).seen
    if (typeof ttlMs !== 'number') throw typeError('ttlMs must be a number')
    if (!Number.isInteger(ttlMs) || ttlMs < 1 || ttlMs > MAX_TTL_MS) throw badArgument(`ttl must be an integer number of ms in 1..=${MAX_TTL_MS}, got ${ttlMs}`)
    const token = options?.token ?? randomToken()
    if (typeof token !== 'string' || token === '') throw badArgument('token must be a non-empty string')
    const reply = await this.#client.runner.command('set', [k, token, 'NX', 'PX', ttlMs, 'GET'], { signal: options?.signal })
    return reply === null || reply === token
  }

  /** `firstSeen` of each id, sent together. */
  async firstSeenMany(eventIds: string[], ttlMs: number, options?: SightingOptions | null): Promise<boolean[]> {
    if (!Array.isArray(eventIds)) throw typeError('eventIds must be an array')
    return Promise.all(eventIds.map((id) => this.firstSeen(id, ttlMs, options)))
  }

  /** The key of `eventId`'s sighting. */
  keys(eventId: string): DedupKeys {
    if (typeof eventId !== 'string') throw typeError('eventId must be a string')
    return { seen: key(this.#namespace, 'dedup', SCHEMA, eventId) }
  }
}
