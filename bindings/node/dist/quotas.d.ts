import { type Client } from './client.js';
export interface QuotasOptions {
    namespace: string;
    requestTtlMs?: number;
}
export interface AddOptions {
    min?: number;
    max: number;
    ttlMs?: number;
    clamp?: boolean;
    requestId?: string;
    signal?: AbortSignal;
}
export interface Applied {
    applied: true;
    value: number;
}
export interface Refused {
    applied: false;
    value: number;
}
export interface Raised {
    raised: true;
    value: number;
}
export interface Kept {
    raised: false;
    value: number;
}
export interface QuotaKeys {
    value: string;
    request?: string;
}
export interface ScoredMember {
    score: number;
    member: string | Buffer;
}
/** Bounded counters of one namespace. */
export declare class Quotas {
    #private;
    constructor(client: Client, options: QuotasOptions);
    /** Adds `delta` if the result stays within `[min, max]` (or clamps it with `clamp: true`). */
    add(name: string, delta: number, options: AddOptions): Promise<Applied | Refused>;
    /** The counter's value (0 when absent). */
    get(name: string): Promise<number>;
    /** Sets the counter's TTL only if it has none. */
    expireOnce(name: string, ttlMs: number): Promise<boolean>;
    /** Moves the counter's TTL forward only. */
    extendTtl(name: string, ttlMs: number): Promise<boolean>;
    /** Raises the counter to `candidate` if that is larger (a monotonic max). */
    raise(name: string, candidate: number): Promise<Raised | Kept>;
    /** `ZADD GT CH`: each member's score only ever rises; answers how many changed. */
    addUnlessSmaller(set: string, entries: ScoredMember[]): Promise<number>;
    /** The keys of counter `name` (and of a request id's record). */
    keys(name: string, requestId?: string | null): QuotaKeys;
}
