import type { Cluster, Redis } from 'ioredis';
import { Batcher, type BatchConfig } from './batch.js';
import { type ScriptArg, type ScriptDef, type ScriptRunner } from './scripts.js';
/** How often and how long a failed call is tried again. */
export interface RetryPolicy {
    maxAttempts: number;
    deadlineMs: number;
    baseBackoffMs: number;
    maxBackoffMs: number;
}
/** The library's default: 4 attempts within 3 s, backoff from 5 ms up to 250 ms. */
export declare const DEFAULT_RETRY: RetryPolicy;
/** One call's own settings. */
export interface CallOptions {
    /** Resending after an unknown outcome cannot repeat the effect (default: the script's class). */
    safe?: boolean | undefined;
    /** What an unknown outcome tells the caller about resending (default: `safe`): a call the
     * client may resend itself (its own random token) may still be unsafe for the caller to. */
    retrySafe?: boolean | undefined;
    signal?: AbortSignal | null | undefined;
    /** Bulk replies as Buffers, byte for byte (payloads, stored responses), not UTF-8 text. */
    binary?: boolean | undefined;
}
/** How scripts reach the server: EVALSHA of the script, or FCALL of the loaded library. */
export type Delivery = 'eval' | 'functions';
/** Sends script calls over one ioredis connection (or cluster), with the package's retry rules. */
export declare class Runner implements ScriptRunner {
    readonly redis: Redis | Cluster;
    readonly retry: RetryPolicy;
    readonly delivery: Delivery;
    readonly owned: boolean;
    closed: boolean;
    /** Natural batching of batchable scripts' decisions (none when the client turned it off). */
    readonly batcher: Batcher | undefined;
    constructor(redis: Redis | Cluster, retry: RetryPolicy, delivery: Delivery, owned: boolean, batching?: BatchConfig);
    run(def: ScriptDef, keys: string[], args: ScriptArg[]): Promise<unknown>;
    /**
     * `def` with `keys` and `args`, tried as the retry policy and the call's safety allow. The
     * first attempt is one promise chain (no async frames): the common case costs one command.
     */
    call(def: ScriptDef, keys: string[], args: ScriptArg[], options?: CallOptions): Promise<unknown>;
    /** A primitive's own idempotent command (`GET`, `PEXPIRE … NX`, `ZADD GT CH`, `SET … NX GET`). */
    command(name: string, args: (string | number | Buffer)[], options?: CallOptions): Promise<unknown>;
    private exec;
    /** Calls in flight: while there are any, the connection keeps the process alive. */
    private inflight;
    private settled;
    /**
     * Whether the package's own sockets keep Node's event loop alive: while a call is in flight,
     * as Node's own pending I/O would; an idle client does not hold a process open (a caller's own
     * connection is left as the caller set it).
     */
    keepAlive(on: boolean): void;
    /** After a failed attempt: the next ones, while the failure and the call's safety allow. */
    private again;
    /** Refuses a call on a closed client or an aborted signal: nothing is sent. */
    gate(signal?: AbortSignal): void;
    /** One attempt: the call, and after NOSCRIPT the body loaded and the call sent once more. */
    once(def: ScriptDef, keys: string[], args: ScriptArg[], binary?: boolean): Promise<unknown>;
    /**
     * The call, and for a write with `replicas` set a `WAIT` pipelined right behind it on the same
     * connection (so it covers the write): fewer acknowledgements than asked is NotReplicatedError
     * (the write ran and stands on the primary).
     */
    private replicated;
    /** Replicas every write waits for (`WAIT`), if the client asked for any. */
    replicas: {
        count: number;
        timeoutMs: number;
    } | undefined;
    /** The Function libraries this runner can load, by name (the built-in one, users' sets). */
    readonly libraries: Map<string, string>;
    /**
     * Makes sure `def` is known to the server(s): `SCRIPT LOAD` of its body, or with FCALL delivery
     * `FUNCTION LOAD` of its library (on every primary of a cluster). A library already loaded
     * under its name is left alone (its name carries its version: replacing it is the ops CLI's
     * decision).
     */
    load(def: ScriptDef): Promise<void>;
    /** Sends a script call (EVALSHA, or FCALL of the loaded library). */
    private send;
    /** Hands a command to ioredis: what it refuses while not connected was never written. */
    private sendCommand;
}
