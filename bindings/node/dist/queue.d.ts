import { type Client } from './client.js';
import { Lease } from './lease.js';
import type { Extended, Lost } from './locks.js';
import * as admin from './queue-admin.js';
export type { DeadLetter, DeadLetterPage, DeadLetters, JobAcked, JobDead, JobQueued, JobRunning, JobUnknown, NotDead, Purged, PurgeOptions, QueueStats, Reaped, Requeued, } from './queue-admin.js';
export interface QueueOptions {
    namespace: string;
    name: string;
    maxPayloadBytes?: number;
    maxDeliveries?: number;
    dedupWindowMs?: number;
    maxDeadLetters?: number;
    deadLetterRetentionMs?: number;
    claimIdTtlMs?: number;
}
export interface QueueKeys {
    due: string;
    inflight: string;
    dead: string;
    done: string;
    meta: string;
    payload: string;
    errors: string;
    claims: string;
}
export interface EnqueueOptions {
    delayMs?: number;
    runAt?: Date | number;
}
export interface ClaimOptions {
    maxJobs?: number;
    signal?: AbortSignal;
}
export interface Enqueued {
    enqueued: true;
    dueInMs: number;
}
export interface Exists {
    enqueued: false;
    status: 'queued' | 'running' | 'dead' | 'acked';
}
export interface Claimed {
    status: 'claimed';
    jobs: Job[];
}
export interface Empty {
    status: 'empty';
    retryAfterMs: number;
}
export interface Idle {
    status: 'idle';
}
export interface Acked {
    acked: true;
}
export interface Retrying {
    status: 'retrying';
    retryAfterMs: number;
}
export interface Dead {
    status: 'dead';
}
/** A queue's checked settings, as its scripts take them. */
export interface QueueConfig {
    maxPayloadBytes: number;
    maxDeliveries: number;
    dedupWindowMs: number;
    maxDeadLetters: number;
    deadLetterRetentionMs: number;
    claimIdTtlMs: number;
}
/** A job id, checked (1..=256 bytes). */
export declare function jobIdOf(id: unknown): string;
/** One queue: producers enqueue, workers claim jobs and ack or nack them. */
export declare class Queue {
    #private;
    /** @internal */
    readonly client: Client;
    /** @internal */
    readonly config: QueueConfig;
    constructor(client: Client, options: QueueOptions);
    get keys(): QueueKeys;
    /** The key of `claimId`'s record. */
    claimKey(claimId: string): string;
    /** Adds job `jobId` with `payload` (a job id that exists is not added again). */
    enqueue(jobId: string, payload: string | Buffer, options?: EnqueueOptions | null): Promise<Enqueued | Exists>;
    /** Leases up to `maxJobs` due jobs to `worker` for `ttlMs` (not retry-safe: see `claimWithId`). */
    claim(worker: string, ttlMs: number, options?: ClaimOptions | null): Promise<Claimed | Empty | Idle>;
    /** `claim`, retry-safe with `claimId`: a resend returns the first claim's live leases. */
    claimWithId(worker: string, ttlMs: number, claimId: string, options?: ClaimOptions | null): Promise<Claimed | Empty | Idle>;
    /** Sets the lease of `jobId` (leased to `worker` with `fence`) to end `ttlMs` from the server's now. */
    extend(jobId: string, worker: string, fence: number, ttlMs: number): Promise<Extended | Lost>;
    /** Completes `jobId` if it is leased to `worker` with `fence`. */
    ack(jobId: string, worker: string, fence: number): Promise<Acked | Lost>;
    /** Gives `jobId` back if it is leased to `worker` with `fence`: due again, or a dead letter. */
    nack(jobId: string, worker: string, fence: number, retryAfterMs?: number | null, error?: string | null): Promise<Retrying | Dead | Lost>;
    /** Counts of jobs by state. */
    stats(): Promise<admin.QueueStats>;
    /** One job's state. */
    inspect(jobId: string): Promise<admin.JobState>;
    /** A page of dead letters, oldest first. */
    deadLetters(page?: admin.DeadLetterPage | null): Promise<admin.DeadLetters>;
    /** Moves dead letter `jobId` back to the queue, due after `delayMs`, its deliveries reset. */
    requeueDead(jobId: string, delayMs?: number | null): Promise<admin.Requeued | admin.NotDead>;
    /** Deletes dead letters (oldest first), each with its record, payload and last error. */
    purgeDeadLetters(options?: admin.PurgeOptions | null): Promise<admin.Purged>;
    /** Returns at most `limit` expired leases to the queue (or the dead letters). */
    reap(limit?: number | null): Promise<admin.Reaped>;
}
/** A leased job; `ack()` or `nack()` it. */
export declare class Job extends Lease {
    #private;
    readonly id: string;
    readonly deliveries: number;
    readonly claimedAtMs: number;
    /** @internal */
    constructor(queue: Queue, id: string, worker: string, fence: number, deliveries: number, payload: Uint8Array, claimedAtMs: number, ttlMs: number, sent: number);
    get payload(): Buffer;
    get worker(): string;
    protected get subject(): string;
    protected renew(ttlMs: number): Promise<Extended | Lost>;
    /** Completes the job if this is still its lease; consumes the handle. */
    ack(): Promise<Acked | Lost>;
    /** Gives the job back (or dead-letters it) if this is still its lease; consumes the handle. */
    nack(retryAfterMs?: number | null, error?: string | null): Promise<Retrying | Dead | Lost>;
}
