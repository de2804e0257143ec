"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.LockGuard = exports.Locks = void 0;
exports.randomToken = randomToken;
exports.ttlOf = ttlOf;
// Locks with fencing tokens: the library's Locks (crates/redis-atomic/src/primitives/lock) over
// the generated script layer. An acquire with a random token is not retry-safe (the caller never
// saw the token, so a resend would take a second lease); with the caller's token and no wait it
// is (the same token gets its own fence back). Release and extend are safe (token and fence).
const node_crypto_1 = require("node:crypto");
const client_js_1 = require("./client.js");
const errors_js_1 = require("./errors.js");
const lease_js_1 = require("./lease.js");
const keys_js_1 = require("./keys.js");
const decoded_js_1 = require("./decoded.js");
const SCHEMA = 1;
const MAX_TTL_MS = 604_800_000;
/** Random bytes for the next tokens, filled 256 tokens at a time (as Node pools randomUUID's):
 * the same CSPRNG output, one call into it per 256 acquisitions instead of one each. */
const POOL = Buffer.alloc(16 * 256);
let pooled = 0;
/** A fresh owner token: 128 random bits in hex. */
function randomToken() {
    if (pooled === 0) {
        (0, node_crypto_1.randomFillSync)(POOL);
        pooled = POOL.length;
    }
    pooled -= 16;
    return POOL.toString('hex', pooled, pooled + 16);
}
/** A lease's length, checked: 1 ms ..= 7 days, whole ms. */
function ttlOf(ttlMs) {
    if (typeof ttlMs !== 'number')
        throw (0, errors_js_1.typeError)('ttlMs must be a number');
    if (!Number.isInteger(ttlMs) || ttlMs < 1 || ttlMs > MAX_TTL_MS)
        throw (0, errors_js_1.badArgument)(`ttl must be an integer number of ms in 1..=${MAX_TTL_MS}, got ${ttlMs}`);
    return ttlMs;
}
/** Waits `ms`, or rejects with AbortedError when `signal` fires (a waiting acquire's token is
 * its own: whatever it sent may have run, and it cannot be resent). */
function pause(ms, signal) {
    return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
        }, ms);
        const onAbort = () => {
            clearTimeout(timer);
            reject(new errors_js_1.AbortedError('the wait was aborted; an earlier attempt may have run', { attempts: 1, cause: signal?.reason }));
        };
        signal?.addEventListener('abort', onAbort, { once: true });
    });
}
/** Locks of one namespace. */
class Locks {
    #client;
    #namespace;
    constructor(client, options) {
        if (typeof options !== 'object' || options === null)
            throw (0, errors_js_1.typeError)('options must be an object');
        this.#client = (0, client_js_1.live)(client);
        this.#namespace = (0, keys_js_1.namespaceOf)(options.namespace);
    }
    /** Tries once (or for up to `waitMs`) to take `resource` for `ttlMs`. */
    async acquire(resource, ttlMs, options) {
        if (typeof resource !== 'string')
            throw (0, errors_js_1.typeError)('resource must be a string');
        const ttl = ttlOf(ttlMs);
        const keys = this.keys(resource);
        const given = options?.token;
        if (given !== undefined && (typeof given !== 'string' || given === ''))
            throw (0, errors_js_1.badArgument)('token must be a non-empty string');
        const token = given ?? randomToken();
        const waitMs = options?.waitMs ?? 0;
        if (typeof waitMs !== 'number' || !(waitMs >= 0))
            throw (0, errors_js_1.badArgument)(`waitMs must be a number of ms, got ${String(waitMs)}`);
        if (given !== undefined && waitMs > 0)
            throw (0, errors_js_1.badArgument)('a wait uses a token of its own: give token or waitMs, not both');
        // Resending the same token cannot take a second lease (the client may); only the caller's own
        // token without a wait lets the caller resend.
        const retrySafe = given !== undefined && waitMs === 0;
        const signal = options?.signal;
        const started = Date.now();
        for (;;) {
            const sent = performance.now();
            const raw = await this.#client.runner.call(decoded_js_1.s.LOCK_ACQUIRE, [keys.lock, keys.fence], [token, String(ttl)], { safe: true, retrySafe, signal });
            const r = decoded_js_1.s.decodeLockAcquire(raw);
            if (r.outcome === 'acquired')
                return new LockGuard(this, resource, token, r.fence, r.ttlMs, sent);
            const left = started + waitMs - Date.now();
            if (left <= 0)
                return { acquired: false, retryAfterMs: r.retryAfterMs };
            await pause(Math.max(1, Math.min(r.retryAfterMs, left, 50 + Math.random() * 50)), signal);
        }
    }
    /** Releases `resource` if `token` holds it with the lease `fence`. */
    async release(resource, token, fence) {
        const keys = this.keys(resource);
        const r = decoded_js_1.s.decodeLockRelease(await this.#client.runner.call(decoded_js_1.s.LOCK_RELEASE, [keys.lock], [token, (0, lease_js_1.fenceOf)(fence)]));
        return r.outcome === 'released' ? { released: true, fence: r.fence } : (0, lease_js_1.lost)('released');
    }
    /** Sets the lease `fence` of `token` to end `ttlMs` from the server's now. */
    async extend(resource, token, fence, ttlMs) {
        const ttl = ttlOf(ttlMs);
        const keys = this.keys(resource);
        const r = decoded_js_1.s.decodeLockExtend(await this.#client.runner.call(decoded_js_1.s.LOCK_EXTEND, [keys.lock], [token, (0, lease_js_1.fenceOf)(fence), String(ttl)]));
        return r.outcome === 'extended' ? { extended: true, fence: r.fence, ttlMs: r.ttlMs } : (0, lease_js_1.lost)('extended');
    }
    /** The lock's state. */
    async inspect(resource) {
        const keys = this.keys(resource);
        const r = decoded_js_1.s.decodeLockInspect(await this.#client.runner.call(decoded_js_1.s.LOCK_INSPECT, [keys.lock, keys.fence], []));
        return r.outcome === 'held' ? { held: true, fence: r.fence, ttlMs: r.ttlMs } : { held: false, fence: r.lastFence, ttlMs: 0 };
    }
    /** @internal Throws the closed client's ClientError (before a handle judges itself). */
    live() {
        (0, client_js_1.live)(this.#client);
    }
    /** The keys of `resource`'s lock. */
    keys(resource) {
        if (typeof resource !== 'string')
            throw (0, errors_js_1.typeError)('resource must be a string');
        return { lock: (0, keys_js_1.key)(this.#namespace, 'lock', SCHEMA, resource), fence: (0, keys_js_1.key)(this.#namespace, 'lock', SCHEMA, resource, ['fence']) };
    }
}
exports.Locks = Locks;
/** A held lock: its fence goes to every write it protects; `release()` when done. */
class LockGuard extends lease_js_1.Lease {
    locks;
    resource;
    /** @internal */
    constructor(locks, resource, token, fence, ttlMs, sent) {
        super(token, fence, ttlMs, sent);
        this.locks = locks;
        this.resource = resource;
    }
    get acquired() { return true; }
    get subject() { return `the lock on ${this.resource}`; }
    clientLive() { this.locks.live(); }
    renew(ttlMs) {
        return this.locks.extend(this.resource, this.token, this.fence, ttlMs);
    }
    /** Gives the lock back; consumes the handle. */
    async release() {
        this.end('release');
        return this.locks.release(this.resource, this.token, this.fence);
    }
}
exports.LockGuard = LockGuard;
