import type { Client } from './client.js';
import type { QueueConfig, QueueKeys } from './queue.js';
export interface QueueStats {
    ready: number;
    scheduled: number;
    running: number;
    expired: number;
    dead: number;
    acked: number;
}
export interface JobQueued {
    state: 'queued';
    dueInMs: number;
    deliveries: number;
    lastFence: number;
}
export interface JobRunning {
    state: 'running';
    fence: number;
    deliveries: number;
    ttlMs: number;
    worker: string;
}
export interface JobDead {
    state: 'dead';
    deliveries: number;
    error: string;
}
export interface JobAcked {
    state: 'acked';
    fence: number;
}
export interface JobUnknown {
    state: 'unknown';
}
export type JobState = JobQueued | JobRunning | JobDead | JobAcked | JobUnknown;
export interface DeadLetter {
    id: string;
    deadAtMs: number;
    deliveries: number;
    error: string;
}
export interface DeadLetterPage {
    start?: number;
    count?: number;
}
export interface DeadLetters {
    total: number;
    letters: DeadLetter[];
}
export interface Requeued {
    requeued: true;
}
export interface NotDead {
    requeued: false;
}
export interface PurgeOptions {
    olderThanMs?: number;
    limit?: number;
}
export interface Purged {
    purged: number;
    remaining: number;
}
export interface Reaped {
    requeued: number;
    dead: number;
}
/** Counts of jobs by state. */
export declare function stats(client: Client, k: QueueKeys): Promise<QueueStats>;
/** One job's state. */
export declare function inspect(client: Client, k: QueueKeys, jobId: string): Promise<JobState>;
/** A page of dead letters, oldest first. */
export declare function deadLetters(client: Client, k: QueueKeys, start: number, count: number): Promise<DeadLetters>;
/** Moves dead letter `jobId` back to the queue, due after `delayMs`, its deliveries reset. */
export declare function requeueDead(client: Client, k: QueueKeys, jobId: string, delayMs: number): Promise<Requeued | NotDead>;
/** Deletes dead letters (oldest first), each with its record, payload and last error. */
export declare function purge(client: Client, k: QueueKeys, olderThanMs: number, limit: number): Promise<Purged>;
/** Returns at most `limit` expired leases to the queue (or the dead letters). */
export declare function reap(client: Client, k: QueueKeys, c: QueueConfig, limit: number): Promise<Reaped>;
