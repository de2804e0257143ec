// The ioredis connection a Client runs on: built from a URL (redis://, rediss:// with a CA or
// client certificate, redis+unix://, redis+sentinel://, a cluster's seed URLs), or a user's own
// Redis / Cluster instance.
//
// ioredis is at-least-once by default: `maxRetriesPerRequest` 20 keeps a written command across
// reconnects, `autoResendUnfulfilledCommands` resends what was written but unanswered when a
// connection dropped, the offline queue holds commands until a connection is back, and a Cluster
// resends a command whose connection closed (`retryDelayOnFailover`). A resent script that is not
// retry-safe (a rate-limit decision, a lock acquire with a random token) would run twice. So the
// package's connections are at-most-once (SAFE below): ioredis never resends; the package's own
// retry loop (runner.ts) resends only what is retry-safe. A user's instance configured so is used
// as it is; one that is not is duplicated with these settings (a connection of the package's own).
import { readFileSync } from 'node:fs'
import type { ConnectionOptions } from 'node:tls'
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis'
import { AbortedError, badArgument, ConnectionError, TlsError } from './errors.js'

/** The settings that keep ioredis from ever resending a command on its own. */
export const SAFE = {
  autoResendUnfulfilledCommands: false,
  maxRetriesPerRequest: 0,
  enableOfflineQueue: false,
} as const satisfies RedisOptions

/** Where the certificates of a TLS connection come from. */
export interface TlsConfig {
  caFile?: string
  ca?: string | Buffer
  certFile?: string
  keyFile?: string
  cert?: string | Buffer
  key?: string | Buffer
}

/** What a connection is built from. */
export interface ConnectionSettings {
  timeoutMs: number
  tls?: TlsConfig | undefined
  cluster?: boolean | undefined
}

/** Whether a user's instance is already at-most-once (then it is used as it is). */
export function isSafe(redis: Redis | Cluster): boolean {
  const o: RedisOptions = redis instanceof Cluster ? { ...redis.options.redisOptions, enableOfflineQueue: redis.options.enableOfflineQueue ?? true } : redis.options
  const failover = redis instanceof Cluster ? redis.options.retryDelayOnFailover === 0 : true
  return o.autoResendUnfulfilledCommands === false && o.maxRetriesPerRequest === 0 && o.enableOfflineQueue === false && failover
}

/** A user's instance, or an at-most-once duplicate of it. */
export function adopt(redis: Redis | Cluster): { redis: Redis | Cluster, owned: boolean } {
  if (isSafe(redis)) return { redis, owned: false }
  if (redis instanceof Cluster) {
    const copy = redis.duplicate(undefined, { ...clusterOptions(redis.options.redisOptions ?? {}), lazyConnect: true })
    return { redis: copy, owned: true }
  }
  return { redis: redis.duplicate({ ...SAFE, lazyConnect: true }), owned: true }
}

/** A new connection for `url` (an array: a cluster's seeds). */
export function open(url: string | string[], s: ConnectionSettings): Redis | Cluster {
  const urls = Array.isArray(url) ? url : [url]
  if (urls.length === 0) throw badArgument('no URL: give a URL, or a Redis Cluster\'s seed URLs')
  const parsed = urls.map((u) => parse(u, s))
  if (Array.isArray(url) || s.cluster) {
    const nodes = parsed.map((p) => ({ host: p.host ?? '127.0.0.1', port: p.port ?? 6379 }))
    const first = parsed[0] ?? {}
    const { host: _h, port: _p, ...shared } = first
    return new Cluster(nodes, { ...clusterOptions(shared), lazyConnect: true })
  }
  return new Redis({ ...(parsed[0] ?? {}), lazyConnect: true })
}

function clusterOptions(redisOptions: RedisOptions): ClusterOptions {
  return {
    // The Cluster runs its node connections' offline queues and reconnects itself.
    redisOptions: nodeOptions(redisOptions),
    enableOfflineQueue: false,
    retryDelayOnFailover: 0,
    maxRedirections: 16,
    ...(redisOptions.tls ? { dnsLookup: (address: string, done: (e: Error | null, a: string) => void) => done(null, address) } : {}),
  }
}

/** A cluster node connection's options: never resending, connected and queued by the Cluster. */
function nodeOptions(o: RedisOptions): ClusterOptions['redisOptions'] {
  const { lazyConnect: _l, retryStrategy: _r, enableOfflineQueue: _e, host: _h, port: _p, path: _a, sentinels: _s, ...rest } = o
  // disconnectTimeout: the Cluster's slot-refresh connections, closed after one question, leave a
  // referenced timer this long each; while the Cluster retries an unreachable cluster, 2 s of
  // them (the default) would keep an idle client's process alive between its (unreferenced)
  // reconnects.
  return { ...rest, autoResendUnfulfilledCommands: false, maxRetriesPerRequest: 0, disconnectTimeout: 50 }
}

/** One URL as ioredis options (with the package's timeouts and at-most-once settings). */
function parse(text: string, s: ConnectionSettings): RedisOptions {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw badArgument(`not a URL: ${JSON.stringify(text)}`)
  }
  const base: RedisOptions = {
    ...SAFE,
    connectTimeout: s.timeoutMs,
    commandTimeout: s.timeoutMs,
    retryStrategy: (times: number) => Math.min(50 * times, 1000),
    lazyConnect: true,
    ...auth(url),
  }
  const scheme = url.protocol.replace(/:$/, '')
  switch (scheme) {
    case 'redis':
    case 'rediss':
      return { ...base, host: url.hostname || '127.0.0.1', port: Number(url.port || 6379), db: db(url.pathname), ...tlsOf(scheme === 'rediss', s.tls, url.hostname) }
    case 'redis+unix':
    case 'unix':
      return { ...base, path: decodeURIComponent(url.pathname), db: Number(url.searchParams.get('db') ?? 0) }
    case 'redis+sentinel':
    case 'rediss+sentinel': {
      const [service, index] = url.pathname.split('/').filter((p) => p !== '')
      if (!service) throw badArgument('a redis+sentinel:// URL names its service: redis+sentinel://host:port/service')
      const sentinels = url.host.split(',').map((hp) => {
        const [host, port] = hp.split(':')
        return { host: host || '127.0.0.1', port: Number(port || 26379) }
      })
      const tls = scheme === 'rediss+sentinel' ? tlsOf(true, s.tls, sentinels[0]?.host ?? '') : {}
      // A round of sentinels that all fail ends the attempt: the reconnect is then the
      // connection's own (retryStrategy), whose timer an idle client leaves unreferenced.
      return { ...base, sentinels, name: service, db: Number(index ?? 0), sentinelRetryStrategy: () => null, ...tls, ...(tls.tls ? { enableTLSForSentinelMode: true, sentinelTLS: tls.tls } : {}) }
    }
    default:
      throw badArgument(`unsupported URL scheme ${scheme}: redis://, rediss://, redis+unix://, redis+sentinel://`)
  }
}

function auth(url: URL): RedisOptions {
  const out: RedisOptions = {}
  if (url.username) out.username = decodeURIComponent(url.username)
  if (url.password) out.password = decodeURIComponent(url.password)
  return out
}

function db(pathname: string): number {
  const n = pathname.replace(/^\//, '')
  if (n === '') return 0
  if (!/^\d+$/.test(n)) throw badArgument(`the URL's database must be a number, got ${n}`)
  return Number(n)
}

/** The TLS options of a connection: CA and client certificate, read now (a failure is TlsError). */
function tlsOf(on: boolean, config: TlsConfig | undefined, host: string): { tls?: ConnectionOptions } {
  if (!on && !config) return {}
  if (!on) throw badArgument('TLS settings need a rediss:// URL')
  const read = (file: string | undefined, inline: string | Buffer | undefined): string | Buffer | undefined => {
    if (inline !== undefined) return inline
    if (file === undefined) return undefined
    try {
      return readFileSync(file)
    } catch (e) {
      throw new TlsError(`cannot read ${file}: ${(e as Error).message}`, { cause: e, nothingRan: true, retrySafe: true })
    }
  }
  const tls: ConnectionOptions = { servername: host }
  const ca = read(config?.caFile, config?.ca)
  const cert = read(config?.certFile, config?.cert)
  const key = read(config?.keyFile, config?.key)
  if (ca !== undefined) tls.ca = ca
  if (cert !== undefined) tls.cert = cert
  if (key !== undefined) tls.key = key
  return { tls }
}

/** Connects `redis` (built lazily) or fails with ConnectionError / TlsError; nothing ran. */
export async function connect(redis: Redis | Cluster, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) {
    throw new AbortedError('connecting was aborted before it began', { nothingRan: true, retrySafe: true, attempts: 0, cause: signal.reason })
  }
  if (redis.status === 'ready') return
  const failures: Error[] = []
  const onError = (e: Error): void => {
    failures.push(e)
  }
  redis.on('error', onError)
  try {
    await withTimeout(redis.connect(), timeoutMs * 2, signal)
  } catch (e) {
    redis.disconnect()
    if (e instanceof AbortedError) throw e
    const cause = failures[0] ?? e
    const message = cause instanceof Error ? cause.message : String(cause)
    const props = { cause, nothingRan: true, transient: true, retrySafe: true, timedOut: /timed? ?out|ETIMEDOUT/i.test(message) }
    const said = [...failures, e].map((f) => (f instanceof Error ? f.message : String(f))).join('; ')
    // Over TLS, a server that drops the connection during the handshake refused the client's
    // certificate (or its absence): TLS 1.3 sends that alert after the client's first write, so
    // the client may read either the alert or the reset.
    const handshake = isTls(redis) && /ECONNRESET|socket hang up|alert/i.test(said)
    if (handshake || /SSL|TLS|certificate|self.signed|EPROTO|handshake/i.test(said)) throw new TlsError(message, { ...props, transient: false })
    throw new ConnectionError(message, props)
  } finally {
    redis.off('error', onError)
  }
  // Later errors (a dropped connection while reconnecting) fail the calls they touch; ioredis
  // would print them as unhandled without a listener.
  redis.on('error', () => {})
}

/** Whether `redis` connects over TLS. */
function isTls(redis: Redis | Cluster): boolean {
  const options = 'nodes' in redis ? redis.options.redisOptions : redis.options
  return options?.tls !== undefined
}

/** `p`, or a rejection after `ms` (or an AbortedError when `signal` fires: nothing ran). */
function withTimeout<T>(p: Promise<T>, ms: number, signal?: AbortSignal): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  let onAbort: (() => void) | undefined
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`connect timed out after ${ms} ms`)), ms)
    onAbort = () => reject(new AbortedError('connecting was aborted', { nothingRan: true, retrySafe: true, attempts: 0, cause: signal?.reason }))
    signal?.addEventListener('abort', onAbort, { once: true })
  })
  return Promise.race([p, t]).finally(() => {
    clearTimeout(timer)
    if (onAbort) signal?.removeEventListener('abort', onAbort)
  })
}
