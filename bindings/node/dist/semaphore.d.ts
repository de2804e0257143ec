import { type Client } from './client.js';
import { Lease } from './lease.js';
import { type Extended, type Lost, type Released } from './locks.js';
export interface SemaphoreOptions {
    namespace: string;
    name: string;
    capacity: number;
}
export interface PermitOptions {
    token?: string;
    signal?: AbortSignal;
}
export interface SemaphoreKeys {
    permits: string;
    holders: string;
    fence: string;
}
export interface Full {
    acquired: false;
    retryAfterMs: number;
}
export interface SemaphoreState {
    live: number;
    nextExpiryMs: number;
    lastFence: number;
}
/** One named semaphore of a fixed capacity. */
export declare class Semaphore {
    #private;
    constructor(client: Client, options: SemaphoreOptions);
    get capacity(): number;
    get keys(): SemaphoreKeys;
    /** Takes a permit for `ttlMs` if one is free. */
    acquire(ttlMs: number, options?: PermitOptions | null): Promise<Permit | Full>;
    /** Gives back the permit `token` holds with `fence`. */
    release(token: string, fence: number): Promise<Released | Lost>;
    /** Sets the permit `token` holds with `fence` to end `ttlMs` from the server's now. */
    extend(token: string, fence: number, ttlMs: number): Promise<Extended | Lost>;
    /** Counts live permits without changing anything. */
    inspect(): Promise<SemaphoreState>;
}
/** A held permit: its fence goes to the writes it protects; `release()` when done. */
export declare class Permit extends Lease {
    #private;
    /** @internal */
    constructor(semaphore: Semaphore, token: string, fence: number, ttlMs: number, sent: number);
    get acquired(): true;
    protected get subject(): string;
    protected renew(ttlMs: number): Promise<Extended | Lost>;
    /** Gives the permit back; consumes the handle. */
    release(): Promise<Released | Lost>;
}
