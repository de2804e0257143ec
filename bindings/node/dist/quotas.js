"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.Quotas = void 0;
// Quotas: bounded counters (the library's Quotas, crates/redis-atomic/src/primitives/quota.rs).
// A bounded add without a request id is not retry-safe (a resend would add twice); with one it
// is (a repeat returns the recorded answer). Reads, TTLs, `raise` and `addUnlessSmaller` are
// idempotent commands, resent within the retry policy.
const client_js_1 = require("./client.js");
const args_js_1 = require("./args.js");
const errors_js_1 = require("./errors.js");
const keys_js_1 = require("./keys.js");
const decoded_js_1 = require("./decoded.js");
const SCHEMA = 1;
const MAX_VALUE = Number.MAX_SAFE_INTEGER;
const MAX_TTL_MS = 366 * 86_400_000;
const MAX_BATCH = 1000;
const MAX_REQUEST_ID_LEN = 256;
function within(what, n) {
    if (typeof n !== 'number')
        throw (0, errors_js_1.typeError)(`${what} must be a number`);
    if (!Number.isInteger(n) || Math.abs(n) > MAX_VALUE)
        throw (0, errors_js_1.badArgument)(`${what} ${n} is not an integer within ±(2^53 - 1)`);
    return n;
}
/** Bounded counters of one namespace. */
class Quotas {
    #client;
    #namespace;
    #requestTtlMs;
    constructor(client, options) {
        if (typeof options !== 'object' || options === null)
            throw (0, errors_js_1.typeError)('options must be an object');
        this.#client = (0, client_js_1.live)(client);
        this.#namespace = (0, keys_js_1.namespaceOf)(options.namespace);
        this.#requestTtlMs = (0, args_js_1.msOf)('requestTtlMs', options.requestTtlMs ?? 3_600_000, 86_400_000, 1000);
    }
    /** Adds `delta` if the result stays within `[min, max]` (or clamps it with `clamp: true`). */
    async add(name, delta, options) {
        if (typeof options !== 'object' || options === null)
            throw (0, errors_js_1.typeError)('options must be an object');
        within('delta', delta);
        const min = within('min', options.min ?? 0);
        const max = within('max', options.max);
        if (min > max)
            throw (0, errors_js_1.badArgument)(`min ${min} is above max ${max}`);
        const ttl = options.ttlMs === undefined ? 0 : (0, args_js_1.msOf)('ttlMs', options.ttlMs, MAX_TTL_MS);
        const mode = options.clamp ? 'clamp' : 'refuse';
        const keys = this.keys(name, options.requestId);
        const signal = options.signal;
        if (keys.request === undefined) {
            const raw = await this.#client.runner.call(decoded_js_1.s.QUOTA_ADD, [keys.value], [delta, min, max, mode, ttl], { signal });
            const r = decoded_js_1.s.decodeQuotaAdd(raw);
            return r.outcome === 'applied' ? { applied: true, value: r.value } : { applied: false, value: r.value };
        }
        const raw = await this.#client.runner.call(decoded_js_1.s.QUOTA_ADD_ID, [keys.value, keys.request], [delta, min, max, mode, ttl, this.#requestTtlMs], { signal });
        const r = decoded_js_1.s.decodeQuotaAddId(raw);
        return r.outcome === 'applied' ? { applied: true, value: r.value } : { applied: false, value: r.value };
    }
    /** The counter's value (0 when absent). */
    async get(name) {
        const reply = await this.#client.runner.command('get', [this.keys(name).value]);
        if (reply === null)
            return 0;
        const n = Number(reply);
        if (!Number.isSafeInteger(n))
            throw (0, errors_js_1.badArgument)(`the counter ${name} does not hold an integer`);
        return n;
    }
    /** Sets the counter's TTL only if it has none. */
    async expireOnce(name, ttlMs) {
        return this.#pexpire(name, ttlMs, 'NX');
    }
    /** Moves the counter's TTL forward only. */
    async extendTtl(name, ttlMs) {
        return this.#pexpire(name, ttlMs, 'GT');
    }
    async #pexpire(name, ttlMs, option) {
        const ttl = (0, args_js_1.msOf)('ttlMs', ttlMs, MAX_TTL_MS);
        return (await this.#client.runner.command('pexpire', [this.keys(name).value, ttl, option])) === 1;
    }
    /** Raises the counter to `candidate` if that is larger (a monotonic max). */
    async raise(name, candidate) {
        within('candidate', candidate);
        const r = decoded_js_1.s.decodeQuotaMax(await this.#client.runner.call(decoded_js_1.s.QUOTA_MAX, [this.keys(name).value], [candidate]));
        return r.outcome === 'raised' ? { raised: true, value: r.value } : { raised: false, value: r.value };
    }
    /** `ZADD GT CH`: each member's score only ever rises; answers how many changed. */
    async addUnlessSmaller(set, entries) {
        if (!Array.isArray(entries))
            throw (0, errors_js_1.typeError)('entries must be an array');
        if (entries.length === 0 || entries.length > MAX_BATCH)
            throw (0, errors_js_1.badArgument)(`a batch has 1..=${MAX_BATCH} entries, got ${entries.length}`);
        const args = [this.keys(set).value, 'GT', 'CH'];
        for (const e of entries)
            args.push(within('score', e.score), e.member);
        return Number(await this.#client.runner.command('zadd', args));
    }
    /** The keys of counter `name` (and of a request id's record). */
    keys(name, requestId) {
        if (typeof name !== 'string')
            throw (0, errors_js_1.typeError)('name must be a string');
        const value = (0, keys_js_1.key)(this.#namespace, 'quota', SCHEMA, name);
        if (requestId === undefined || requestId === null)
            return { value };
        const r = (0, keys_js_1.digest)(requestId, MAX_REQUEST_ID_LEN, 'request id');
        return { value, request: (0, keys_js_1.key)(this.#namespace, 'quota', SCHEMA, name, ['req', r]) };
    }
}
exports.Quotas = Quotas;
