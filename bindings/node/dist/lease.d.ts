import type { Extended, Lost, WatchOptions } from './locks.js';
/** The verb whose success field a `Lost` also says `false` to (old code tests those fields). */
export type LostVerb = 'released' | 'extended' | 'acked' | 'stored' | 'nacked';
/** The one `Lost`, with the old discriminating field of the verb that answered it. */
export declare function lost(verb: LostVerb): Lost;
/** A caller's owner token, checked: 1..=256 bytes, no control characters. */
export declare function ownerToken(given: unknown): string;
/** A fence given back by a caller: a positive integer. */
export declare function fenceOf(fence: unknown): string;
/** A live lease: `fence` goes to every write it protects. */
export declare abstract class Lease {
    #private;
    readonly token: string;
    readonly fence: number;
    /** @internal `sent`: `performance.now()` from before the request that took the lease. */
    constructor(token: string, fence: number, ttlMs: number, sent: number);
    /** Sets the lease to end `ttlMs` from the server's now, by token and fence. */
    protected abstract renew(ttlMs: number): Promise<Extended | Lost>;
    /** What the lease is on, for messages. */
    protected abstract get subject(): string;
    get ttlMs(): number;
    get expiresInMs(): number;
    get ended(): boolean;
    /** Sets the lease to end `ttlMs` from the server's now (absolute, never added). */
    extend(ttlMs: number): Promise<Extended | Lost>;
    /** Ends the handle (its end verb calls this before sending): a second end throws. */
    protected end(verb: string): void;
    /** Renews the lease in the background until the end verb or `unwatch()`; the signal fires
     * (with a LeaseLostError) if the lease is lost. */
    watch(options?: WatchOptions | null): AbortSignal;
    /** Stops the renewals; the handle is held (unwatched) again. */
    unwatch(): Promise<void>;
    /** Throws the closed client's ClientError, which comes before a handle judges itself. */
    protected clientLive(): void;
}
