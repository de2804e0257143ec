// The Client: one ioredis connection (or cluster) the primitives share, the package's retry
// policy, and its closed flag. Made by `Client.connect` from a URL or from a user's instance.
import { Cluster, Redis } from 'ioredis'
import { DEFAULT_BATCHING, type BatchConfig } from './batch.js'
import { adopt, connect, open, type TlsConfig } from './connection.js'
import { badArgument, ClientError, typeError } from './errors.js'
import { DEFAULT_RETRY, Runner, type Delivery, type RetryPolicy } from './runner.js'

/** Retry settings (each optional: the library's defaults otherwise). */
export interface RetryOptions {
  maxAttempts?: number
  deadlineMs?: number
  baseBackoffMs?: number
  maxBackoffMs?: number
}
/** Natural batching's bounds (each optional: the library's defaults otherwise). */
export interface BatchingOptions {
  inFlight?: number
  maxDecisions?: number
  maxBytes?: number
  minBatch?: number
}
/** Replicas a write must reach before it counts (WAIT). */
export interface ReplicaOptions {
  count: number
  timeoutMs: number
}
/** What `Client.connect` takes besides the URL. */
export interface ClientOptions {
  timeoutMs?: number
  retry?: RetryOptions
  contention?: RetryOptions
  delivery?: 'eval' | 'functions' | 'evalsha' | 'fcall'
  replicas?: ReplicaOptions
  tls?: TlsConfig
  forceLua?: boolean
  /** Accepted for compatibility, 1..=1024: one multiplexed ioredis connection serves every call. */
  poolSize?: number
  cluster?: boolean
  batching?: boolean | BatchingOptions
  signal?: AbortSignal
}
/** What the client's batching did so far. */
export interface BatchStats {
  decisions: number
  alone: number
  batches: number
  batched: number
  separate: number
}

const DELIVERY: Record<string, Delivery> = { eval: 'eval', evalsha: 'eval', functions: 'functions', fcall: 'functions' }

/**
 * A connection to Redis (one server, a Sentinel-named primary, or a Redis Cluster) that the
 * primitives share. Made by `Client.connect`; cheap to share; `close()` it when done.
 */
export class Client {
  /** @internal */
  readonly runner: Runner
  readonly #owned: boolean
  readonly #timeoutMs: number

  private constructor(runner: Runner, owned: boolean, timeoutMs: number) {
    this.runner = runner
    this.#owned = owned
    this.#timeoutMs = timeoutMs
  }

  /**
   * Connects: one URL (`redis://`, `rediss://`, `redis+unix://`, `redis+sentinel://`), the seed
   * URLs of a Redis Cluster as an array, or an ioredis `Redis` / `Cluster` of your own (used as
   * it is when it never resends on its own, duplicated with those settings otherwise). Rejects
   * with `ConnectionError`, `TlsError` or `BadArgumentError`.
   */
  static async connect(url: string | string[] | Redis | Cluster, options?: ClientOptions | null): Promise<Client> {
    const o = options ?? {}
    if (typeof o !== 'object') throw typeError('options must be an object')
    const timeoutMs = o.timeoutMs ?? 1000
    if (typeof timeoutMs !== 'number' || !(timeoutMs > 0)) throw badArgument(`timeoutMs must be a positive number, got ${String(timeoutMs)}`)
    const delivery = DELIVERY[o.delivery ?? 'eval']
    if (delivery === undefined) throw badArgument(`delivery must be eval or functions, got ${String(o.delivery)}`)
    // One ioredis connection multiplexes every call (pipelined): a pool size is accepted, checked
    // as the contract says, and needs no second connection.
    if (o.poolSize !== undefined && (!Number.isInteger(o.poolSize) || o.poolSize < 1 || o.poolSize > 1024)) {
      throw badArgument(`poolSize must be an integer in 1..=1024, got ${String(o.poolSize)}`)
    }
    const retry: RetryPolicy = { ...DEFAULT_RETRY, ...o.retry }
    const batching = batchingOf(o.batching)
    const replicas = replicasOf(o.replicas)
    let redis: Redis | Cluster
    let owned = true
    if (url instanceof Redis || url instanceof Cluster) {
      ({ redis, owned } = adopt(url))
    } else if (typeof url === 'string' || Array.isArray(url)) {
      redis = open(url, { timeoutMs, tls: o.tls, cluster: o.cluster })
    } else {
      throw typeError('url must be a string, an array of seed URLs, or an ioredis Redis / Cluster')
    }
    if (replicas !== undefined && redis instanceof Cluster) {
      // WAIT must follow the write on the connection of the key's node; this client sends it on
      // a standalone or Sentinel-named primary's connection only.
      throw badArgument('replicas: WAIT after every write is available on one server or a Sentinel-named primary, not on a Cluster')
    }
    await connect(redis, timeoutMs, o.signal)
    const runner = new Runner(redis, retry, delivery, owned, batching)
    runner.replicas = replicas
    runner.keepAlive(false)
    return new Client(runner, owned, timeoutMs)
  }

  /**
   * Closes the client: every later call through it, its primitives or their handles rejects
   * with `ClientError` and sends nothing (calls in flight finish). Closing twice is fine. A
   * connection handed in by the caller stays open (it is the caller's).
   */
  async close(): Promise<void> {
    if (this.runner.closed) return
    this.runner.closed = true
    if (this.#owned) await this.runner.redis.quit().catch(() => this.runner.redis.disconnect())
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }

  /** Whether `close()` was called. */
  get closed(): boolean {
    return this.runner.closed
  }

  /** What this client's batching did so far. */
  batchStats(): BatchStats {
    const c = this.runner.batcher?.counts
    return c ? { ...c } : { decisions: 0, alone: 0, batches: 0, batched: 0, separate: 0 }
  }

  /** Whether this client talks to a Redis Cluster. */
  get isCluster(): boolean {
    return this.runner.redis instanceof Cluster
  }

  /** The per-request timeout, ms. */
  get timeoutMs(): number {
    return this.#timeoutMs
  }

  /** The ioredis connection the client runs on (the caller's own, or the package's). */
  get redis(): Redis | Cluster {
    return this.runner.redis
  }
}

/** The `batching` option as the batcher's bounds (undefined: off). */
function batchingOf(o: boolean | BatchingOptions | undefined): BatchConfig | undefined {
  if (o === false) return undefined
  if (o === undefined || o === true) return DEFAULT_BATCHING
  if (typeof o !== 'object' || o === null) throw typeError('batching must be a boolean or an object')
  const c = { ...DEFAULT_BATCHING }
  for (const k of ['inFlight', 'maxDecisions', 'maxBytes', 'minBatch'] as const) {
    const v = o[k]
    if (v === undefined) continue
    if (!Number.isInteger(v) || v < 1) throw badArgument(`batching.${k} must be a positive integer, got ${String(v)}`)
    c[k] = v
  }
  return c
}

/** The `replicas` option, checked (undefined: none). */
function replicasOf(o: ReplicaOptions | undefined): ReplicaOptions | undefined {
  if (o === undefined || o === null) return undefined
  if (typeof o !== 'object') throw typeError('replicas must be an object { count, timeoutMs }')
  if (!Number.isInteger(o.count) || o.count < 0) throw badArgument(`replicas.count must be a whole number, got ${String(o.count)}`)
  if (!Number.isInteger(o.timeoutMs) || o.timeoutMs < 0) throw badArgument(`replicas.timeoutMs must be a whole number of ms, got ${String(o.timeoutMs)}`)
  return o.count === 0 ? undefined : { count: o.count, timeoutMs: o.timeoutMs }
}

/** `client` as a live Client: a TypeError for anything else, a ClientError once it is closed. */
export function live(client: unknown): Client {
  if (!(client instanceof Client)) throw typeError('client must be a Client (from Client.connect)')
  if (client.closed) throw new ClientError('the client is closed', { nothingRan: true, retrySafe: true })
  return client
}
