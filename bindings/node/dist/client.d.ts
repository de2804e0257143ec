import { Cluster, Redis } from 'ioredis';
import { type TlsConfig } from './connection.js';
import { Runner } from './runner.js';
/** Retry settings (each optional: the library's defaults otherwise). */
export interface RetryOptions {
    maxAttempts?: number;
    deadlineMs?: number;
    baseBackoffMs?: number;
    maxBackoffMs?: number;
}
/** Natural batching's bounds (each optional: the library's defaults otherwise). */
export interface BatchingOptions {
    inFlight?: number;
    maxDecisions?: number;
    maxBytes?: number;
    minBatch?: number;
}
/** Replicas a write must reach before it counts (WAIT). */
export interface ReplicaOptions {
    count: number;
    timeoutMs: number;
}
/** What `Client.connect` takes besides the URL. */
export interface ClientOptions {
    timeoutMs?: number;
    retry?: RetryOptions;
    contention?: RetryOptions;
    delivery?: 'eval' | 'functions' | 'evalsha' | 'fcall';
    replicas?: ReplicaOptions;
    tls?: TlsConfig;
    forceLua?: boolean;
    /** Accepted for compatibility, 1..=1024: one multiplexed ioredis connection serves every call. */
    poolSize?: number;
    cluster?: boolean;
    batching?: boolean | BatchingOptions;
    signal?: AbortSignal;
}
/** What the client's batching did so far. */
export interface BatchStats {
    decisions: number;
    alone: number;
    batches: number;
    batched: number;
    separate: number;
}
/**
 * A connection to Redis (one server, a Sentinel-named primary, or a Redis Cluster) that the
 * primitives share. Made by `Client.connect`; cheap to share; `close()` it when done.
 */
export declare class Client {
    #private;
    /** @internal */
    readonly runner: Runner;
    private constructor();
    /**
     * Connects: one URL (`redis://`, `rediss://`, `redis+unix://`, `redis+sentinel://`), the seed
     * URLs of a Redis Cluster as an array, or an ioredis `Redis` / `Cluster` of your own (used as
     * it is when it never resends on its own, duplicated with those settings otherwise). Rejects
     * with `ConnectionError`, `TlsError` or `BadArgumentError`.
     */
    static connect(url: string | string[] | Redis | Cluster, options?: ClientOptions | null): Promise<Client>;
    /**
     * Closes the client: every later call through it, its primitives or their handles rejects
     * with `ClientError` and sends nothing (calls in flight finish). Closing twice is fine. A
     * connection handed in by the caller stays open (it is the caller's).
     */
    close(): Promise<void>;
    [Symbol.asyncDispose](): Promise<void>;
    /** Whether `close()` was called. */
    get closed(): boolean;
    /** What this client's batching did so far. */
    batchStats(): BatchStats;
    /** Whether this client talks to a Redis Cluster. */
    get isCluster(): boolean;
    /** The per-request timeout, ms. */
    get timeoutMs(): number;
    /** The ioredis connection the client runs on (the caller's own, or the package's). */
    get redis(): Redis | Cluster;
}
/** `client` as a live Client: a TypeError for anything else, a ClientError once it is closed. */
export declare function live(client: unknown): Client;
