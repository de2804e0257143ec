import { type Client } from './client.js';
/** The algorithms, canonical spelling. */
export type Algorithm = 'fixed-window' | 'anchored-window' | 'sliding-log' | 'sliding-window' | 'token-bucket' | 'gcra';
/** One limit of a policy. */
export interface LimitSpec {
    algorithm: Algorithm | 'fixed_window' | 'anchored_window' | 'sliding_log' | 'sliding_window' | 'token_bucket';
    limit: number;
    periodMs: number;
    burst?: number;
    name?: string;
}
/** What `new RateLimiter` takes. */
export interface RateLimiterOptions {
    namespace: string;
    limits: LimitSpec[];
    requestTtlMs?: number;
}
/** One consume's settings. */
export interface ConsumeOptions {
    cost?: number;
    requestId?: string;
    signal?: AbortSignal;
}
/** One limit's state after a decision. */
export interface LimitStatus {
    name: string;
    remaining: number;
    resetAfterMs: number;
    retryAfterMs: number;
}
/** Admitted. */
export interface Allowed {
    allowed: true;
    remaining: number;
    resetAfterMs: number;
    replayed: boolean;
    limits: LimitStatus[];
}
/** Refused: try again after `retryAfterMs`. */
export interface Limited {
    allowed: false;
    retryAfterMs: number;
    resetAfterMs: number;
    replayed: boolean;
    limits: LimitStatus[];
}
/** The keys a consume uses. */
export interface RateLimitKeys {
    limits: string[];
    request?: string;
}
/** The algorithms' names (canonical spelling). */
export declare function algorithms(): Algorithm[];
/** An algorithm's name in either spelling (kebab or snake) as its canonical one. */
export declare function algorithmOf(name: unknown): Algorithm;
/** Decisions of one policy (one or more limits) per identity. */
export declare class RateLimiter {
    #private;
    constructor(client: Client, options: RateLimiterOptions);
    /** The policy's limits. */
    get limits(): LimitSpec[];
    /** How long a request id is remembered, ms. */
    get requestTtlMs(): number;
    /** Takes `cost` (default 1) units from every limit of `key`'s identity, or none. */
    consume(identity: string, options?: ConsumeOptions | null): Promise<Allowed | Limited>;
    /** The keys a consume for `identity` (with `requestId`, if any) uses. */
    keys(identity: string, requestId?: string | null): RateLimitKeys;
}
