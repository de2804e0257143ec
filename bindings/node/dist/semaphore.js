"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.Permit = exports.Semaphore = void 0;
// Semaphores with leases: the library's Semaphore (crates/redis-atomic/src/primitives/semaphore)
// over the generated script layer. At most `capacity` live permits at any instant of the server's
// clock, each with a fence greater than every fence issued before it. Keys: `<ns>:sem:v1:{name}`
// (holders by lease end), `…:holders` (each holder's fence), `…:fence` (the last fence issued).
// An acquire with a random token is not retry-safe (the caller never saw the token: a resend
// would take a second permit); with the caller's token it is. Release and extend are safe.
const client_js_1 = require("./client.js");
const errors_js_1 = require("./errors.js");
const keys_js_1 = require("./keys.js");
const lease_js_1 = require("./lease.js");
const locks_js_1 = require("./locks.js");
const decoded_js_1 = require("./decoded.js");
const SCHEMA = 1;
const MAX_CAPACITY = 100_000;
/** One named semaphore of a fixed capacity. */
class Semaphore {
    #client;
    #keys;
    #capacity;
    constructor(client, options) {
        if (typeof options !== 'object' || options === null)
            throw (0, errors_js_1.typeError)('options must be an object');
        const { capacity } = options;
        if (typeof capacity !== 'number')
            throw (0, errors_js_1.typeError)('capacity must be a number');
        if (!Number.isInteger(capacity) || capacity < 1 || capacity > MAX_CAPACITY) {
            throw (0, errors_js_1.badArgument)(`capacity must be in 1..=${MAX_CAPACITY}, got ${capacity}`);
        }
        if (typeof options.name !== 'string')
            throw (0, errors_js_1.typeError)('name must be a string');
        const permits = (0, keys_js_1.key)((0, keys_js_1.namespaceOf)(options.namespace), 'sem', SCHEMA, options.name);
        this.#client = (0, client_js_1.live)(client);
        this.#capacity = capacity;
        this.#keys = { permits, holders: `${permits}:holders`, fence: `${permits}:fence` };
    }
    get capacity() { return this.#capacity; }
    get keys() { return { ...this.#keys }; }
    /** Takes a permit for `ttlMs` if one is free. */
    async acquire(ttlMs, options) {
        const ttl = (0, locks_js_1.ttlOf)(ttlMs);
        const token = options?.token === undefined || options.token === null ? (0, locks_js_1.randomToken)() : (0, lease_js_1.ownerToken)(options.token);
        const k = this.#keys;
        const sent = performance.now();
        const raw = await this.#client.runner.call(decoded_js_1.s.SEM_ACQUIRE, [k.permits, k.holders, k.fence], [token, this.#capacity, ttl], { safe: options?.token !== undefined && options.token !== null, signal: options?.signal });
        const r = decoded_js_1.s.decodeSemAcquire(raw);
        if (r.outcome === 'full')
            return { acquired: false, retryAfterMs: r.retryAfterMs };
        return new Permit(this, token, r.fence, r.ttlMs, sent);
    }
    /** Gives back the permit `token` holds with `fence`. */
    async release(token, fence) {
        const args = [(0, lease_js_1.ownerToken)(token), (0, lease_js_1.fenceOf)(fence)];
        const r = decoded_js_1.s.decodeSemRelease(await this.#client.runner.call(decoded_js_1.s.SEM_RELEASE, [this.#keys.permits, this.#keys.holders], args));
        return r.outcome === 'released' ? { released: true, fence: r.fence } : (0, lease_js_1.lost)('released');
    }
    /** Sets the permit `token` holds with `fence` to end `ttlMs` from the server's now. */
    async extend(token, fence, ttlMs) {
        const args = [(0, lease_js_1.ownerToken)(token), (0, lease_js_1.fenceOf)(fence), (0, locks_js_1.ttlOf)(ttlMs)];
        const r = decoded_js_1.s.decodeSemExtend(await this.#client.runner.call(decoded_js_1.s.SEM_EXTEND, [this.#keys.permits, this.#keys.holders], args));
        return r.outcome === 'extended' ? { extended: true, fence: r.fence, ttlMs: r.ttlMs } : (0, lease_js_1.lost)('extended');
    }
    /** Counts live permits without changing anything. */
    async inspect() {
        const r = decoded_js_1.s.decodeSemInspect(await this.#client.runner.call(decoded_js_1.s.SEM_INSPECT, [this.#keys.permits, this.#keys.fence], []));
        return { live: Math.min(r.live, MAX_CAPACITY), nextExpiryMs: r.nextExpiryMs, lastFence: r.lastFence };
    }
}
exports.Semaphore = Semaphore;
/** A held permit: its fence goes to the writes it protects; `release()` when done. */
class Permit extends lease_js_1.Lease {
    #semaphore;
    /** @internal */
    constructor(semaphore, token, fence, ttlMs, sent) {
        super(token, fence, ttlMs, sent);
        this.#semaphore = semaphore;
    }
    get acquired() { return true; }
    get subject() { return 'a permit'; }
    renew(ttlMs) {
        return this.#semaphore.extend(this.token, this.fence, ttlMs);
    }
    /** Gives the permit back; consumes the handle. */
    async release() {
        this.end('release');
        return this.#semaphore.release(this.token, this.fence);
    }
}
exports.Permit = Permit;
