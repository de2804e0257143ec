import { type Client } from './client.js';
import { Lease } from './lease.js';
import { type Extended, type Lost } from './locks.js';
import { type ResponseInit, type StoredResponse } from './response.js';
export type { Header, HeaderInit, ResponseInit, StoredResponse } from './response.js';
export interface IdempotencyOptions {
    namespace: string;
    ttlMs?: number;
    resultTtlMs?: number;
    maxResponseBytes?: number;
}
export interface BeginOptions {
    token?: string;
    signal?: AbortSignal;
}
export interface IdempotencyKeys {
    record: string;
}
export interface InProgress {
    status: 'inProgress';
    retryAfterMs: number;
}
export interface Replay {
    status: 'replay';
    outcome: 'completed' | 'failed';
    response: StoredResponse;
}
export interface Mismatch {
    status: 'mismatch';
}
export interface Stored {
    stored: true;
}
type Bytes = string | Buffer;
/** The library's Fingerprint::of: SHA-256 over each part's u64 BE length and bytes, 128 bits hex. */
export declare function fingerprint(parts: readonly Buffer[]): string;
/** Idempotency records of one namespace, keyed per call by (scope, key). */
export declare class Idempotency {
    #private;
    constructor(client: Client, options: IdempotencyOptions);
    /** Claims (`scope`, `key`) for `request`, or answers a duplicate. */
    begin(scope: string, key: Bytes, request: Bytes | Bytes[], options?: BeginOptions | null): Promise<Claim | InProgress | Replay | Mismatch>;
    /** Sets the lease of the claim `token` holds with `fence` to end `ttlMs` from the server's now. */
    extend(scope: string, key: Bytes, token: string, fence: number, ttlMs: number): Promise<Extended | Lost>;
    /** Stores `response` as the result of the claim `token` holds with `fence`. */
    complete(scope: string, key: Bytes, token: string, fence: number, response: ResponseInit): Promise<Stored | Lost>;
    /** Ends the claim with a failure: without a response the key is freed; with one, it is stored. */
    fail(scope: string, key: Bytes, token: string, fence: number, response?: ResponseInit | null): Promise<Stored | Lost>;
    /** @internal `response` encoded, within the size limit (checked before a handle is ended). */
    encode(response: ResponseInit): Buffer;
    /** @internal A claim's end: `completed`, `failed` (both with a payload) or `retry` (none). */
    finish(scope: string, key: Buffer, token: string, fence: number, word: string, payload: Buffer | undefined): Promise<Stored | Lost>;
    /** The keys of (`scope`, `key`). */
    keys(scope: string, key: Bytes): IdempotencyKeys;
}
/** A live claim: run the request, then `complete(response)` or `fail(response?)`. */
export declare class Claim extends Lease {
    #private;
    readonly scope: string;
    readonly takeover: boolean;
    /** @internal */
    constructor(store: Idempotency, scope: string, key: Buffer, token: string, fence: number, takeover: boolean, ttlMs: number, sent: number);
    get status(): 'claimed';
    get key(): Buffer;
    protected get subject(): string;
    protected renew(ttlMs: number): Promise<Extended | Lost>;
    /** Stores `response` for replay; consumes the handle. */
    complete(response: ResponseInit): Promise<Stored | Lost>;
    /** Ends the claim with a failure; consumes the handle. */
    fail(response?: ResponseInit | null): Promise<Stored | Lost>;
}
