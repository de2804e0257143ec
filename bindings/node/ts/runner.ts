// Runs one script call the way every face of the library does: EVALSHA (or FCALL), on NOSCRIPT
// the body loaded once and the call sent again; refusals (nothing ran) retried with backoff; an
// unknown outcome retried only when the call is retry-safe (the script header's retry class, or
// the caller's own token or request id). ioredis itself never resends (see connection.ts), so
// this loop is the only place a call is sent twice, and only when resending cannot repeat its
// effect.
import type { Cluster, Redis } from 'ioredis'
import { Batcher, type BatchConfig } from './batch.js'
import { classify } from './classify.js'
import { AbortedError, ClientError, NotReplicatedError, OutcomeUnknownError, RedisAtomicError, RejectedError, ServerError } from './errors.js'
import { LIBRARY, type ScriptArg, type ScriptDef, type ScriptRunner } from './scripts.js'

/** How often and how long a failed call is tried again. */
export interface RetryPolicy {
  maxAttempts: number
  deadlineMs: number
  baseBackoffMs: number
  maxBackoffMs: number
}

/** The library's default: 4 attempts within 3 s, backoff from 5 ms up to 250 ms. */
export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 4, deadlineMs: 3000, baseBackoffMs: 5, maxBackoffMs: 250 }

/** One call's own settings. */
export interface CallOptions {
  /** Resending after an unknown outcome cannot repeat the effect (default: the script's class). */
  safe?: boolean | undefined
  /** What an unknown outcome tells the caller about resending (default: `safe`): a call the
   * client may resend itself (its own random token) may still be unsafe for the caller to. */
  retrySafe?: boolean | undefined
  signal?: AbortSignal | null | undefined
  /** Bulk replies as Buffers, byte for byte (payloads, stored responses), not UTF-8 text. */
  binary?: boolean | undefined
}

/** How scripts reach the server: EVALSHA of the script, or FCALL of the loaded library. */
export type Delivery = 'eval' | 'functions'

/** Sends script calls over one ioredis connection (or cluster), with the package's retry rules. */
export class Runner implements ScriptRunner {
  closed = false
  /** Natural batching of batchable scripts' decisions (none when the client turned it off). */
  readonly batcher: Batcher | undefined

  constructor(
    readonly redis: Redis | Cluster,
    readonly retry: RetryPolicy,
    readonly delivery: Delivery,
    readonly owned: boolean,
    batching?: BatchConfig,
  ) {
    const cluster = 'nodes' in redis
    this.libraries.set(LIBRARY.name, LIBRARY.source)
    this.batcher = batching ? new Batcher(batching, cluster, (def, keys, args) => this.once(def, keys, args)) : undefined
    // A new socket (a reconnect) starts referenced: match it to the calls in flight.
    redis.on('connect', () => this.keepAlive(this.inflight > 0))
    // ioredis arms its reconnect timer right after this event: an idle client's is unreferenced.
    redis.on('reconnecting', () => queueMicrotask(() => {
      const timer = (redis as unknown as { reconnectTimeout?: NodeJS.Timeout | null }).reconnectTimeout
      if (this.owned && this.inflight === 0) timer?.unref()
    }))
  }

  run(def: ScriptDef, keys: string[], args: ScriptArg[]): Promise<unknown> {
    return this.call(def, keys, args)
  }

  /**
   * `def` with `keys` and `args`, tried as the retry policy and the call's safety allow. The
   * first attempt is one promise chain (no async frames): the common case costs one command.
   */
  call(def: ScriptDef, keys: string[], args: ScriptArg[], options?: CallOptions): Promise<unknown> {
    const binary = options?.binary === true
    // A binary reply is decoded byte for byte by its caller: it leaves alone, never in a batch.
    const batcher = def.batch === undefined || binary ? undefined : this.batcher
    const attempt = batcher ? () => batcher.attempt(def, keys, args) : () => this.once(def, keys, args, binary)
    const safe = options?.safe ?? def.retrySafe
    return this.exec(attempt, safe, options?.signal ?? undefined, options?.retrySafe ?? safe)
  }

  /** A primitive's own idempotent command (`GET`, `PEXPIRE … NX`, `ZADD GT CH`, `SET … NX GET`). */
  command(name: string, args: (string | number | Buffer)[], options?: CallOptions): Promise<unknown> {
    return this.exec(() => this.sendCommand(name, args), options?.safe ?? true, options?.signal ?? undefined)
  }

  private exec(attempt: () => Promise<unknown>, safe: boolean, signal: AbortSignal | undefined, reported = safe): Promise<unknown> {
    try {
      this.gate(signal)
    } catch (e) {
      return Promise.reject(e)
    }
    const started = Date.now()
    const first = attempt()
    if (this.inflight++ === 0) this.keepAlive(true)
    return (signal ? abortable(first, signal) : first).then(
      (reply) => this.settled(reply),
      (e: unknown) => this.again(attempt, safe, reported, signal, started, e).then(
        (reply) => this.settled(reply),
        (err: unknown) => { this.settled(undefined); throw err },
      ),
    )
  }

  /** Calls in flight: while there are any, the connection keeps the process alive. */
  private inflight = 0

  private settled<T>(reply: T): T {
    if (--this.inflight === 0) this.keepAlive(false)
    return reply
  }

  /**
   * Whether the package's own sockets keep Node's event loop alive: while a call is in flight,
   * as Node's own pending I/O would; an idle client does not hold a process open (a caller's own
   * connection is left as the caller set it).
   */
  keepAlive(on: boolean): void {
    if (!this.owned) return
    const streams = 'nodes' in this.redis ? this.redis.nodes().map((n) => n.stream) : [this.redis.stream]
    for (const st of streams) {
      if (st === undefined || st === null) continue
      if (on) st.ref()
      else st.unref()
    }
  }

  /** After a failed attempt: the next ones, while the failure and the call's safety allow. */
  private async again(attempt: () => Promise<unknown>, safe: boolean, reported: boolean, signal: AbortSignal | undefined, started: number, failure: unknown): Promise<unknown> {
    let timedOut = false
    let earlier: string | undefined // the first unknown outcome: that attempt may have run
    for (let n = 1; ; n++) {
      const e = failure instanceof RedisAtomicError ? failure : classify(failure, true)
      timedOut ||= e.timedOut
      const unknown = e instanceof OutcomeUnknownError && !(e instanceof AbortedError)
      if (unknown) earlier ??= e.message
      const again = (e.transient || (unknown && safe)) && n < this.retry.maxAttempts
      const pause = backoff(this.retry, n)
      if (e instanceof AbortedError && !e.nothingRan) {
        throw new AbortedError(e.message, { cause: e.cause, attempts: n, timedOut, retrySafe: reported })
      }
      if (!again || Date.now() - started + pause > this.retry.deadlineMs || signal?.aborted) {
        throw finalError(e, unknown, earlier, { attempts: n, timedOut, retrySafe: reported })
      }
      await new Promise((resolve) => setTimeout(resolve, pause))
      try {
        this.gate(signal)
        return await abortable(attempt(), signal)
      } catch (next) {
        failure = next
      }
    }
  }

  /** Refuses a call on a closed client or an aborted signal: nothing is sent. */
  gate(signal?: AbortSignal): void {
    if (this.closed) throw new ClientError('the client is closed', { nothingRan: true, retrySafe: true })
    if (signal?.aborted) {
      throw new AbortedError('the call was aborted before it was sent', { nothingRan: true, retrySafe: true, attempts: 0, cause: signal.reason })
    }
  }

  /** One attempt: the call, and after NOSCRIPT the body loaded and the call sent once more. */
  once(def: ScriptDef, keys: string[], args: ScriptArg[], binary = false): Promise<unknown> {
    return this.replicated(def, keys, args, binary).catch(async (e: unknown) => {
      if (!isNoScript(e)) throw e
      await this.load(def)
      return this.replicated(def, keys, args, binary)
    })
  }

  /**
   * The call, and for a write with `replicas` set a `WAIT` pipelined right behind it on the same
   * connection (so it covers the write): fewer acknowledgements than asked is NotReplicatedError
   * (the write ran and stands on the primary).
   */
  private replicated(def: ScriptDef, keys: string[], args: ScriptArg[], binary: boolean): Promise<unknown> {
    const call = this.send(def, keys, args, binary)
    const r = this.replicas
    if (r === undefined || def.readOnly) return call
    const wait = this.sendCommand('WAIT', [r.count, r.timeoutMs])
    return Promise.all([call, wait.catch((e: unknown) => e)]).then(([reply, acked]) => {
      if (typeof acked === 'number' && acked >= r.count) return reply
      const detail = typeof acked === 'number' ? `${acked} of ${r.count} replicas acknowledged` : `WAIT failed: ${String(acked)}`
      throw new NotReplicatedError(`the write ran, but ${detail} within ${r.timeoutMs} ms`, { acked: typeof acked === 'number' ? acked : 0, wanted: r.count })
    }, (e: unknown) => {
      void wait.catch(() => {})
      throw e
    })
  }

  /** Replicas every write waits for (`WAIT`), if the client asked for any. */
  replicas: { count: number, timeoutMs: number } | undefined

  /** The Function libraries this runner can load, by name (the built-in one, users' sets). */
  readonly libraries = new Map<string, string>()

  /**
   * Makes sure `def` is known to the server(s): `SCRIPT LOAD` of its body, or with FCALL delivery
   * `FUNCTION LOAD` of its library (on every primary of a cluster). A library already loaded
   * under its name is left alone (its name carries its version: replacing it is the ops CLI's
   * decision).
   */
  async load(def: ScriptDef): Promise<void> {
    const functions = this.delivery === 'functions'
    const source = functions ? this.libraries.get(def.library) : undefined
    if (functions && source === undefined) throw new ClientError(`no Function library ${def.library} is known to this client`, { nothingRan: true, retrySafe: true })
    const nodes = 'nodes' in this.redis ? this.redis.nodes('master') : [this.redis]
    for (const node of nodes) {
      const written = node.status === 'ready'
      try {
        if (source === undefined) await node.call('SCRIPT', 'LOAD', def.body)
        else await loadLibrary(node, def.library, source)
      } catch (raw) {
        throw classify(raw, written)
      }
    }
  }

  /** Sends a script call (EVALSHA, or FCALL of the loaded library). */
  private send(def: ScriptDef, keys: string[], args: ScriptArg[], binary = false): Promise<unknown> {
    const functions = this.delivery === 'functions'
    const command = functions ? (def.readOnly ? 'fcall_ro' : 'fcall') : 'evalsha'
    return this.sendCommand(command, [functions ? def.functionName : def.sha1, keys.length, ...keys, ...(args as (string | number | Buffer)[])], binary)
  }

  /** Hands a command to ioredis: what it refuses while not connected was never written. */
  private sendCommand(name: string, args: (string | number | Buffer)[], binary = false): Promise<unknown> {
    const written = this.redis.status === 'ready'
    const redis = this.redis as Redis
    return (binary ? redis.callBuffer(name, ...args) : redis.call(name, ...args)).catch((raw: unknown) => {
      throw classify(raw, written)
    })
  }
}

/** `FUNCTION LOAD` of `source`; refused because it is there already (asked of the server) is fine. */
async function loadLibrary(node: Redis, name: string, source: string): Promise<void> {
  try {
    await node.call('FUNCTION', 'LOAD', source)
  } catch (e) {
    const listed = await node.call('FUNCTION', 'LIST', 'LIBRARYNAME', name)
    if (!Array.isArray(listed) || !listed.some((l: unknown) => Array.isArray(l) && l.includes(name))) throw e
  }
}

function isNoScript(e: unknown): boolean {
  return (e instanceof RejectedError && e.serverCode === 'NOSCRIPT') ||
    (e instanceof ServerError && e.message.includes('Function not found'))
}

/** The pause before attempt `attempt + 1`: exponential from the base, capped, with jitter. */
function backoff(policy: RetryPolicy, attempt: number): number {
  const ceiling = Math.min(policy.maxBackoffMs, policy.baseBackoffMs * 2 ** (attempt - 1))
  return Math.ceil(ceiling / 2 + Math.random() * (ceiling / 2))
}

/**
 * The error a call ends with: the last attempt's, except that a call one of whose attempts may
 * have run is an unknown outcome even if its last attempt surely did not run (a lost reply, then a
 * refused reconnect while the server restarts): reporting the last attempt's "nothing ran" would
 * tell the caller an effect that may have happened did not (the library's `final_error`).
 */
function finalError(e: RedisAtomicError, unknown: boolean, earlier: string | undefined, facts: { attempts: number, timedOut: boolean, retrySafe: boolean }): RedisAtomicError {
  if (unknown) return new OutcomeUnknownError(e.message, { cause: e.cause ?? e, ...facts })
  if (earlier === undefined || !(e.nothingRan || e.transient)) return e
  const message = `an earlier attempt may have run (${earlier}); the last: ${e.message}`
  return e instanceof AbortedError ? new AbortedError(message, { cause: e, ...facts }) : new OutcomeUnknownError(message, { cause: e, ...facts })
}

/** The calls waiting on each signal, and its one listener (however many calls share it). */
const waiters = new WeakMap<AbortSignal, { calls: Set<() => void>, listener: () => void }>()

/** `p`, or an AbortedError as soon as `signal` fires (the call may still run: outcome unknown). */
function abortable<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p
  return new Promise<T>((resolve, reject) => {
    let entry = waiters.get(signal)
    if (entry === undefined) {
      const calls = new Set<() => void>()
      const listener = (): void => {
        waiters.delete(signal)
        for (const fire of calls) fire()
      }
      entry = { calls, listener }
      waiters.set(signal, entry)
      signal.addEventListener('abort', listener, { once: true })
    }
    const onAbort = (): void => reject(new AbortedError('the call was aborted; it may have run', { attempts: 1, cause: signal.reason }))
    entry.calls.add(onAbort)
    p.then(resolve, reject).finally(() => forget(signal, onAbort))
  })
}

/** Drops a settled call from its signal's waiters; the last one takes the listener away. */
function forget(signal: AbortSignal, call: () => void): void {
  const entry = waiters.get(signal)
  if (entry === undefined) return
  entry.calls.delete(call)
  if (entry.calls.size > 0) return
  waiters.delete(signal)
  signal.removeEventListener('abort', entry.listener)
}
