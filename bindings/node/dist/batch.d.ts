import type { ScriptArg, ScriptDef } from './scripts.js';
/** Natural batching's bounds. */
export interface BatchConfig {
    inFlight: number;
    maxDecisions: number;
    maxBytes: number;
    minBatch: number;
}
/** The Rust client's bounds. */
export declare const DEFAULT_BATCHING: BatchConfig;
/** What the batcher did so far. */
export interface BatchCounts {
    decisions: number;
    alone: number;
    batches: number;
    batched: number;
    separate: number;
}
/** How a batch's calls are sent: one script call, one attempt (NOSCRIPT handled). */
export type Send = (def: ScriptDef, keys: string[], args: ScriptArg[]) => Promise<unknown>;
/** The lanes of one client and their counts. */
export declare class Batcher {
    #private;
    readonly config: BatchConfig;
    readonly cluster: boolean;
    readonly send: Send;
    readonly counts: BatchCounts;
    constructor(config: BatchConfig, cluster: boolean, send: Send);
    /** One attempt of a batchable decision: alone, or with the others waiting in its lane. */
    attempt(def: ScriptDef, keys: string[], args: ScriptArg[]): Promise<unknown>;
}
