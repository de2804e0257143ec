// A queue's administration: counts by state, one job's state, the dead letters (list, requeue,
// purge) and the reaper of expired leases — the library's queue admin (crates/redis-atomic/src/
// primitives/queue). Each is one script over the queue's keys; every one is retry-safe (reads,
// or moves that a resend finds done: a requeued job is no longer dead, a reaped lease no longer
// expired). The Queue checks the arguments; these functions send them.
import type { Client } from './client.js'
import type { QueueConfig, QueueKeys } from './queue.js'
import { s } from './decoded.js'

export interface QueueStats { ready: number, scheduled: number, running: number, expired: number, dead: number, acked: number }
export interface JobQueued { state: 'queued', dueInMs: number, deliveries: number, lastFence: number }
export interface JobRunning { state: 'running', fence: number, deliveries: number, ttlMs: number, worker: string }
export interface JobDead { state: 'dead', deliveries: number, error: string }
export interface JobAcked { state: 'acked', fence: number }
export interface JobUnknown { state: 'unknown' }
export type JobState = JobQueued | JobRunning | JobDead | JobAcked | JobUnknown
export interface DeadLetter { id: string, deadAtMs: number, deliveries: number, error: string }
export interface DeadLetterPage { start?: number, count?: number }
export interface DeadLetters { total: number, letters: DeadLetter[] }
export interface Requeued { requeued: true }
export interface NotDead { requeued: false }
export interface PurgeOptions { olderThanMs?: number, limit?: number }
export interface Purged { purged: number, remaining: number }
export interface Reaped { requeued: number, dead: number }

/** Counts of jobs by state. */
export async function stats(client: Client, k: QueueKeys): Promise<QueueStats> {
  const r = s.decodeQueueStats(await client.runner.call(s.QUEUE_STATS, [k.due, k.inflight, k.dead, k.done], []))
  return { ready: r.ready, scheduled: r.scheduled, running: r.running, expired: r.expired, dead: r.dead, acked: r.acked }
}

/** One job's state. */
export async function inspect(client: Client, k: QueueKeys, jobId: string): Promise<JobState> {
  const r = s.decodeQueueInspect(await client.runner.call(s.QUEUE_INSPECT, [k.due, k.inflight, k.meta, k.errors], [jobId]))
  switch (r.outcome) {
    case 'queued': return { state: 'queued', dueInMs: r.dueInMs, deliveries: r.deliveries, lastFence: r.lastFence }
    case 'running': return { state: 'running', fence: r.fence, deliveries: r.deliveries, ttlMs: r.ttlMs, worker: r.worker }
    case 'dead': return { state: 'dead', deliveries: r.deliveries, error: r.error }
    case 'acked': return { state: 'acked', fence: r.fence }
    case 'unknown': return { state: 'unknown' }
  }
}

/** A page of dead letters, oldest first. */
export async function deadLetters(client: Client, k: QueueKeys, start: number, count: number): Promise<DeadLetters> {
  const r = s.decodeQueueDeadList(await client.runner.call(s.QUEUE_DEAD_LIST, [k.dead, k.meta, k.errors], [start, count]))
  return { total: r.total, letters: r.letters.map((l) => ({ id: l.id, deadAtMs: l.deadAtMs, deliveries: l.deliveries, error: l.error })) }
}

/** Moves dead letter `jobId` back to the queue, due after `delayMs`, its deliveries reset. */
export async function requeueDead(client: Client, k: QueueKeys, jobId: string, delayMs: number): Promise<Requeued | NotDead> {
  const r = s.decodeQueueDeadRequeue(await client.runner.call(s.QUEUE_DEAD_REQUEUE, [k.dead, k.due, k.meta, k.errors], [jobId, delayMs]))
  return { requeued: r.outcome === 'requeued' } as Requeued | NotDead
}

/** Deletes dead letters (oldest first), each with its record, payload and last error. */
export async function purge(client: Client, k: QueueKeys, olderThanMs: number, limit: number): Promise<Purged> {
  const r = s.decodeQueueDeadPurge(await client.runner.call(s.QUEUE_DEAD_PURGE, [k.dead, k.meta, k.payload, k.errors], [olderThanMs, limit]))
  return { purged: r.purged, remaining: r.remaining }
}

/** Returns at most `limit` expired leases to the queue (or the dead letters). */
export async function reap(client: Client, k: QueueKeys, c: QueueConfig, limit: number): Promise<Reaped> {
  const args = [limit, c.maxDeliveries, c.maxDeadLetters, c.deadLetterRetentionMs]
  const r = s.decodeQueueReap(await client.runner.call(s.QUEUE_REAP, [k.inflight, k.due, k.dead, k.meta, k.payload, k.errors], args))
  return { requeued: r.requeued, dead: r.dead }
}
