import { type Client } from './client.js';
import { Lease } from './lease.js';
export interface LocksOptions {
    namespace: string;
}
export interface AcquireOptions {
    token?: string;
    waitMs?: number;
    signal?: AbortSignal;
}
export interface LockKeys {
    lock: string;
    fence: string;
}
export interface Held {
    acquired: false;
    retryAfterMs: number;
}
export interface Released {
    released: true;
    fence: number;
}
export interface Extended {
    extended: true;
    fence: number;
    ttlMs: number;
}
export interface Lost {
    lost: true;
    released?: false;
    extended?: false;
    acked?: false;
    stored?: false;
    status?: 'lost';
}
export interface Locked {
    held: true;
    fence: number;
    ttlMs: number;
}
export interface Free {
    held: false;
    fence: number;
    ttlMs: 0;
}
export interface WatchOptions {
    renewFraction?: number;
    marginFraction?: number;
}
/** A fresh owner token: 128 random bits in hex. */
export declare function randomToken(): string;
/** A lease's length, checked: 1 ms ..= 7 days, whole ms. */
export declare function ttlOf(ttlMs: unknown): number;
/** Locks of one namespace. */
export declare class Locks {
    #private;
    constructor(client: Client, options: LocksOptions);
    /** Tries once (or for up to `waitMs`) to take `resource` for `ttlMs`. */
    acquire(resource: string, ttlMs: number, options?: AcquireOptions | null): Promise<LockGuard | Held>;
    /** Releases `resource` if `token` holds it with the lease `fence`. */
    release(resource: string, token: string, fence: number): Promise<Released | Lost>;
    /** Sets the lease `fence` of `token` to end `ttlMs` from the server's now. */
    extend(resource: string, token: string, fence: number, ttlMs: number): Promise<Extended | Lost>;
    /** The lock's state. */
    inspect(resource: string): Promise<Locked | Free>;
    /** @internal Throws the closed client's ClientError (before a handle judges itself). */
    live(): void;
    /** The keys of `resource`'s lock. */
    keys(resource: string): LockKeys;
}
/** A held lock: its fence goes to every write it protects; `release()` when done. */
export declare class LockGuard extends Lease {
    readonly locks: Locks;
    readonly resource: string;
    /** @internal */
    constructor(locks: Locks, resource: string, token: string, fence: number, ttlMs: number, sent: number);
    get acquired(): true;
    protected get subject(): string;
    protected clientLive(): void;
    protected renew(ttlMs: number): Promise<Extended | Lost>;
    /** Gives the lock back; consumes the handle. */
    release(): Promise<Released | Lost>;
}
