// The job queue: the library's Queue (crates/redis-atomic/src/primitives/queue). Every key of a
// queue lives under its `{name}` tag (one slot): due (job → due time), inflight (leased job →
// lease end), dead, done (acked ids for the dedup window), meta, payload, errors, and the
// claim-id records of `claimWithId`. A claim leases due jobs to a worker (its token) with a fence
// per lease; ack and nack take the worker and fence, so a superseded lease changes nothing.
// Retry: enqueue (the job id), ack, nack, extend and `claimWithId` (the claim id) are retry-safe;
// a plain `claim` is not (a resend would lease more jobs), and the package never resends it.
// Administration (stats, inspect, dead letters, reap) is in queue-admin.ts.
import { live, type Client } from './client.js'
import { badArgument, typeError } from './errors.js'
import { digest, key, namespaceOf } from './keys.js'
import { fenceOf, Lease, lost, ownerToken } from './lease.js'
import type { Extended, Lost } from './locks.js'
import * as admin from './queue-admin.js'
import { s } from './decoded.js'

const SCHEMA = 1
const DAY_MS = 86_400_000
const YEAR_MS = 365 * DAY_MS
const MAX_BATCH = 1000

export type {
  DeadLetter, DeadLetterPage, DeadLetters, JobAcked, JobDead, JobQueued, JobRunning, JobUnknown, NotDead, Purged,
  PurgeOptions, QueueStats, Reaped, Requeued,
} from './queue-admin.js'
export interface QueueOptions {
  namespace: string
  name: string
  maxPayloadBytes?: number
  maxDeliveries?: number
  dedupWindowMs?: number
  maxDeadLetters?: number
  deadLetterRetentionMs?: number
  claimIdTtlMs?: number
}
export interface QueueKeys { due: string, inflight: string, dead: string, done: string, meta: string, payload: string, errors: string, claims: string }
export interface EnqueueOptions { delayMs?: number, runAt?: Date | number }
export interface ClaimOptions { maxJobs?: number, signal?: AbortSignal }
export interface Enqueued { enqueued: true, dueInMs: number }
export interface Exists { enqueued: false, status: 'queued' | 'running' | 'dead' | 'acked' }
export interface Claimed { status: 'claimed', jobs: Job[] }
export interface Empty { status: 'empty', retryAfterMs: number }
export interface Idle { status: 'idle' }
export interface Acked { acked: true }
export interface Retrying { status: 'retrying', retryAfterMs: number }
export interface Dead { status: 'dead' }

/** A queue's checked settings, as its scripts take them. */
export interface QueueConfig {
  maxPayloadBytes: number
  maxDeliveries: number
  dedupWindowMs: number
  maxDeadLetters: number
  deadLetterRetentionMs: number
  claimIdTtlMs: number
}

/** `v` (default `fallback`) as an integer in `min..=max`. */
function intIn(what: string, v: unknown, fallback: number, min: number, max: number): number {
  if (v === undefined || v === null) return fallback
  if (typeof v !== 'number') throw typeError(`${what} must be a number`)
  if (!Number.isInteger(v) || v < min || v > max) throw badArgument(`${what} must be an integer in ${min}..=${max}, got ${v}`)
  return v
}

/** A job id, checked (1..=256 bytes). */
export function jobIdOf(id: unknown): string {
  if (typeof id !== 'string') throw typeError('jobId must be a string')
  const len = Buffer.byteLength(id)
  if (len === 0 || len > 256) throw badArgument(`job id must be 1..=256 bytes, got ${len}`)
  return id
}

function configOf(o: QueueOptions): QueueConfig {
  return {
    maxPayloadBytes: intIn('maxPayloadBytes', o.maxPayloadBytes, 64 << 10, 0, 1 << 20),
    maxDeliveries: intIn('maxDeliveries', o.maxDeliveries, 5, 1, 0xffffffff),
    dedupWindowMs: intIn('dedupWindowMs', o.dedupWindowMs, DAY_MS, 0, YEAR_MS),
    maxDeadLetters: intIn('maxDeadLetters', o.maxDeadLetters, 10_000, 1, 1_000_000_000),
    deadLetterRetentionMs: intIn('deadLetterRetentionMs', o.deadLetterRetentionMs, 7 * DAY_MS, 1, YEAR_MS),
    claimIdTtlMs: intIn('claimIdTtlMs', o.claimIdTtlMs, 3_600_000, 1000, DAY_MS),
  }
}

/** One queue: producers enqueue, workers claim jobs and ack or nack them. */
export class Queue {
  /** @internal */
  readonly client: Client
  /** @internal */
  readonly config: QueueConfig
  readonly #keys: QueueKeys

  constructor(client: Client, options: QueueOptions) {
    if (typeof options !== 'object' || options === null) throw typeError('options must be an object')
    if (typeof options.name !== 'string') throw typeError('name must be a string')
    const base = key(namespaceOf(options.namespace), 'queue', SCHEMA, options.name)
    this.client = live(client)
    this.config = configOf(options)
    const k = (part: string): string => `${base}:${part}`
    this.#keys = {
      due: k('due'), inflight: k('inflight'), dead: k('dead'), done: k('done'), meta: k('meta'),
      payload: k('payload'), errors: k('errors'), claims: k('claim'),
    }
  }

  get keys(): QueueKeys { return { ...this.#keys } }

  /** The key of `claimId`'s record. */
  claimKey(claimId: string): string {
    if (typeof claimId !== 'string') throw typeError('claimId must be a string')
    return `${this.#keys.claims}:${digest(claimId, 256, 'claim id')}`
  }

  /** Adds job `jobId` with `payload` (a job id that exists is not added again). */
  async enqueue(jobId: string, payload: string | Buffer, options?: EnqueueOptions | null): Promise<Enqueued | Exists> {
    jobIdOf(jobId)
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) throw typeError('payload must be a string or a Buffer')
    const size = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length
    if (size > this.config.maxPayloadBytes) throw badArgument(`payload is ${size} bytes, over the ${this.config.maxPayloadBytes}-byte limit`)
    const delayMs = intIn('delayMs', options?.delayMs, 0, 0, YEAR_MS)
    const runAt = options?.runAt
    let atMs = 0
    if (runAt !== undefined && runAt !== null) {
      if (options?.delayMs !== undefined && options.delayMs !== null) throw badArgument('give delayMs or runAt, not both')
      const ms = runAt instanceof Date ? runAt.getTime() : runAt
      if (typeof ms !== 'number' || !Number.isFinite(ms)) throw badArgument('runAt must be a Date or ms since the epoch')
      if (ms > 253_402_300_799_999) throw badArgument('runAt beyond the year 9999')
      atMs = Math.max(Math.floor(ms), 1)
    }
    const k = this.#keys
    const r = s.decodeQueueEnqueue(await this.client.runner.call(s.QUEUE_ENQUEUE, [k.due, k.meta, k.payload], [jobId, payload, delayMs, atMs]))
    return r.outcome === 'enqueued' ? { enqueued: true, dueInMs: r.dueInMs } : { enqueued: false, status: r.status }
  }

  /** Leases up to `maxJobs` due jobs to `worker` for `ttlMs` (not retry-safe: see `claimWithId`). */
  async claim(worker: string, ttlMs: number, options?: ClaimOptions | null): Promise<Claimed | Empty | Idle> {
    const args = this.#claimArgs(worker, ttlMs, options)
    const k = this.#keys
    const sent = performance.now()
    const raw = await this.client.runner.call(s.QUEUE_CLAIM, [k.due, k.inflight, k.dead, k.meta, k.payload, k.errors], args,
      { signal: options?.signal, binary: true })
    const r = s.decodeQueueClaim(raw)
    if (r.outcome !== 'claimed') return r.outcome === 'empty' ? { status: 'empty', retryAfterMs: r.retryAfterMs } : { status: 'idle' }
    return { status: 'claimed', jobs: r.jobs.map((j) => new Job(this, j.id, worker, j.fence, j.deliveries, j.payload, r.nowMs, ttlMs, sent)) }
  }

  /** `claim`, retry-safe with `claimId`: a resend returns the first claim's live leases. */
  async claimWithId(worker: string, ttlMs: number, claimId: string, options?: ClaimOptions | null): Promise<Claimed | Empty | Idle> {
    const args = this.#claimArgs(worker, ttlMs, options)
    const record = this.claimKey(claimId)
    const k = this.#keys
    const sent = performance.now()
    const raw = await this.client.runner.call(s.QUEUE_CLAIM_ID, [k.due, k.inflight, k.dead, k.meta, k.payload, k.errors, record],
      [...args, this.config.claimIdTtlMs], { signal: options?.signal, binary: true })
    const r = s.decodeQueueClaimId(raw)
    if (r.outcome !== 'claimed') return r.outcome === 'empty' ? { status: 'empty', retryAfterMs: r.retryAfterMs } : { status: 'idle' }
    return {
      status: 'claimed',
      jobs: r.jobs.map((j) => {
        const claimedAt = Math.max(0, r.nowMs + j.ttlMs - ttlMs)
        return new Job(this, j.id, worker, j.fence, j.deliveries, j.payload, claimedAt, j.ttlMs, sent)
      }),
    }
  }

  #claimArgs(worker: string, ttlMs: number, options: ClaimOptions | null | undefined): (string | number)[] {
    if (typeof worker !== 'string') throw typeError('worker must be a string')
    const len = Buffer.byteLength(worker)
    if (len === 0 || len > 128) throw badArgument(`worker must be 1..=128 bytes, got ${len}`)
    ownerToken(worker)
    const maxJobs = intIn('maxJobs', options?.maxJobs, 1, 1, MAX_BATCH)
    const ttl = intIn('ttlMs', ttlMs ?? Number.NaN, 0, 1, DAY_MS)
    const c = this.config
    return [worker, ttl, maxJobs, c.maxDeliveries, c.maxDeadLetters, c.deadLetterRetentionMs]
  }

  /** Sets the lease of `jobId` (leased to `worker` with `fence`) to end `ttlMs` from the server's now. */
  async extend(jobId: string, worker: string, fence: number, ttlMs: number): Promise<Extended | Lost> {
    const args = [jobIdOf(jobId), ownerToken(worker), fenceOf(fence), intIn('ttlMs', ttlMs ?? Number.NaN, 0, 1, DAY_MS)]
    const r = s.decodeQueueExtend(await this.client.runner.call(s.QUEUE_EXTEND, [this.#keys.inflight, this.#keys.meta], args))
    return r.outcome === 'extended' ? { extended: true, fence: r.fence, ttlMs: r.ttlMs } : lost('extended')
  }

  /** Completes `jobId` if it is leased to `worker` with `fence`. */
  async ack(jobId: string, worker: string, fence: number): Promise<Acked | Lost> {
    const k = this.#keys
    const args = [jobIdOf(jobId), ownerToken(worker), fenceOf(fence), this.config.dedupWindowMs]
    const r = s.decodeQueueAck(await this.client.runner.call(s.QUEUE_ACK, [k.inflight, k.meta, k.payload, k.errors, k.done], args))
    return r.outcome === 'acked' ? { acked: true } : lost('acked')
  }

  /** Gives `jobId` back if it is leased to `worker` with `fence`: due again, or a dead letter. */
  async nack(jobId: string, worker: string, fence: number, retryAfterMs?: number | null, error?: string | null): Promise<Retrying | Dead | Lost> {
    const k = this.#keys
    const after = intIn('retryAfterMs', retryAfterMs, 0, 0, YEAR_MS)
    if (error !== undefined && error !== null && typeof error !== 'string') throw typeError('error must be a string')
    const c = this.config
    const args = [jobIdOf(jobId), ownerToken(worker), fenceOf(fence), after, c.maxDeliveries, cut(error ?? '', 4096), c.maxDeadLetters, c.deadLetterRetentionMs]
    const r = s.decodeQueueNack(await this.client.runner.call(s.QUEUE_NACK, [k.inflight, k.due, k.dead, k.meta, k.payload, k.errors], args))
    switch (r.outcome) {
      case 'retrying': return { status: 'retrying', retryAfterMs: r.retryAfterMs }
      case 'dead': return { status: 'dead' }
      case 'lost': return lost('nacked')
    }
  }

  /** Counts of jobs by state. */
  async stats(): Promise<admin.QueueStats> { return admin.stats(this.client, this.#keys) }
  /** One job's state. */
  async inspect(jobId: string): Promise<admin.JobState> { return admin.inspect(this.client, this.#keys, jobIdOf(jobId)) }
  /** A page of dead letters, oldest first. */
  async deadLetters(page?: admin.DeadLetterPage | null): Promise<admin.DeadLetters> {
    if (page !== undefined && page !== null && typeof page !== 'object') throw typeError('page must be an object')
    const start = intIn('start', page?.start, 0, 0, 0xffffffff)
    return admin.deadLetters(this.client, this.#keys, start, intIn('count', page?.count, 100, 1, MAX_BATCH))
  }
  /** Moves dead letter `jobId` back to the queue, due after `delayMs`, its deliveries reset. */
  async requeueDead(jobId: string, delayMs?: number | null): Promise<admin.Requeued | admin.NotDead> {
    return admin.requeueDead(this.client, this.#keys, jobIdOf(jobId), intIn('delayMs', delayMs, 0, 0, YEAR_MS))
  }
  /** Deletes dead letters (oldest first), each with its record, payload and last error. */
  async purgeDeadLetters(options?: admin.PurgeOptions | null): Promise<admin.Purged> {
    const olderThanMs = intIn('olderThanMs', options?.olderThanMs, 0, 0, YEAR_MS)
    return admin.purge(this.client, this.#keys, olderThanMs, intIn('limit', options?.limit, MAX_BATCH, 1, MAX_BATCH))
  }
  /** Returns at most `limit` expired leases to the queue (or the dead letters). */
  async reap(limit?: number | null): Promise<admin.Reaped> {
    return admin.reap(this.client, this.#keys, this.config, intIn('limit', limit, 100, 1, MAX_BATCH))
  }
}

/** `text` cut to at most `max` bytes of UTF-8, on a character boundary. */
function cut(text: string, max: number): string {
  const b = Buffer.from(text)
  if (b.length <= max) return text
  let end = max
  while (end > 0 && (b[end]! & 0xc0) === 0x80) end--
  return b.toString('utf8', 0, end)
}

/** A leased job; `ack()` or `nack()` it. */
export class Job extends Lease {
  readonly #queue: Queue
  readonly #payload: Buffer

  /** @internal */
  constructor(queue: Queue, readonly id: string, worker: string, fence: number, readonly deliveries: number,
    payload: Uint8Array, readonly claimedAtMs: number, ttlMs: number, sent: number) {
    super(worker, fence, ttlMs, sent)
    this.#queue = queue
    this.#payload = Buffer.from(payload)
  }

  get payload(): Buffer { return Buffer.from(this.#payload) }
  get worker(): string { return this.token }
  protected get subject(): string { return `job ${this.id}` }
  protected renew(ttlMs: number): Promise<Extended | Lost> {
    return this.#queue.extend(this.id, this.token, this.fence, ttlMs)
  }

  /** Completes the job if this is still its lease; consumes the handle. */
  async ack(): Promise<Acked | Lost> {
    this.end('ack')
    return this.#queue.ack(this.id, this.token, this.fence)
  }

  /** Gives the job back (or dead-letters it) if this is still its lease; consumes the handle. */
  async nack(retryAfterMs?: number | null, error?: string | null): Promise<Retrying | Dead | Lost> {
    intIn('retryAfterMs', retryAfterMs, 0, 0, YEAR_MS)
    this.end('nack')
    return this.#queue.nack(this.id, this.token, this.fence, retryAfterMs, error)
  }
}
