"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.Claim = exports.Idempotency = void 0;
exports.fingerprint = fingerprint;
// Idempotency keys: the library's Idempotency (crates/redis-atomic/src/primitives/idempotency).
// One record per (scope, key) at `<ns>:idem:v1:{<digest>}` — the digest is SHA-256 of (scope,
// key), so user-supplied keys never pick the slot — holding state, fence, owner token, the
// request's fingerprint, lease end and the stored response (response.ts, the library's encoding).
// `begin` claims the key (a lease with a fence), answers a live claim's `inProgress`, a finished
// request's `replay`, or a different request's `mismatch`. A begin with a random token is not
// retry-safe (the caller never saw the token); with the caller's token it is. Extend and the
// ends (token and fence) are.
const args_js_1 = require("./args.js");
const node_crypto_1 = require("node:crypto");
const client_js_1 = require("./client.js");
const errors_js_1 = require("./errors.js");
const keys_js_1 = require("./keys.js");
const lease_js_1 = require("./lease.js");
const locks_js_1 = require("./locks.js");
const response_js_1 = require("./response.js");
const decoded_js_1 = require("./decoded.js");
const SCHEMA = 1;
const MAX_KEY_LEN = 512;
const MAX_TTL_MS = 86_400_000;
const MAX_RESULT_TTL_MS = 30 * 86_400_000;
/** The library's Fingerprint::of: SHA-256 over each part's u64 BE length and bytes, 128 bits hex. */
function fingerprint(parts) {
    const h = (0, node_crypto_1.createHash)('sha256');
    for (const p of parts) {
        const len = Buffer.alloc(8);
        len.writeBigUInt64BE(BigInt(p.length));
        h.update(len).update(p);
    }
    return h.digest('hex').slice(0, 32);
}
/** Idempotency records of one namespace, keyed per call by (scope, key). */
class Idempotency {
    #client;
    #namespace;
    #ttlMs;
    #resultTtlMs;
    #maxResponseBytes;
    constructor(client, options) {
        if (typeof options !== 'object' || options === null)
            throw (0, errors_js_1.typeError)('options must be an object');
        this.#client = (0, client_js_1.live)(client);
        this.#namespace = (0, keys_js_1.namespaceOf)(options.namespace);
        this.#ttlMs = (0, args_js_1.msOf)('ttlMs', options.ttlMs ?? 30_000, MAX_TTL_MS);
        this.#resultTtlMs = (0, args_js_1.msOf)('resultTtlMs', options.resultTtlMs ?? 86_400_000, MAX_RESULT_TTL_MS);
        const max = options.maxResponseBytes ?? 1 << 20;
        if (typeof max !== 'number')
            throw (0, errors_js_1.typeError)('maxResponseBytes must be a number');
        if (!Number.isSafeInteger(max) || max < 1)
            throw (0, errors_js_1.badArgument)(`max response bytes must be at least 1, got ${max}`);
        this.#maxResponseBytes = max;
    }
    /** Claims (`scope`, `key`) for `request`, or answers a duplicate. */
    async begin(scope, key, request, options) {
        const record = this.keys(scope, key).record;
        const parts = (Array.isArray(request) ? request : [request]).map((p) => (0, args_js_1.bytes)('request', p));
        const token = options?.token === undefined || options.token === null ? (0, locks_js_1.randomToken)() : (0, lease_js_1.ownerToken)(options.token);
        const safe = options?.token !== undefined && options.token !== null;
        const sent = performance.now();
        const raw = await this.#client.runner.call(decoded_js_1.s.IDEM_BEGIN, [record], [token, fingerprint(parts), this.#ttlMs, this.#resultTtlMs], { safe, signal: options?.signal, binary: true });
        const r = decoded_js_1.s.decodeIdemBegin(raw);
        switch (r.outcome) {
            case 'claimed': return new Claim(this, scope, (0, args_js_1.bytes)('key', key), token, r.fence, r.takeover, this.#ttlMs, sent);
            case 'in_progress': return { status: 'inProgress', retryAfterMs: r.retryAfterMs };
            case 'replay': return { status: 'replay', outcome: r.outcomeValue, response: (0, response_js_1.decodeResponse)(r.payload) };
            case 'mismatch': return { status: 'mismatch' };
        }
    }
    /** Sets the lease of the claim `token` holds with `fence` to end `ttlMs` from the server's now. */
    async extend(scope, key, token, fence, ttlMs) {
        const record = this.keys(scope, key).record;
        const args = [(0, lease_js_1.ownerToken)(token), (0, lease_js_1.fenceOf)(fence), (0, args_js_1.msOf)('ttlMs', ttlMs, MAX_TTL_MS)];
        const r = decoded_js_1.s.decodeIdemExtend(await this.#client.runner.call(decoded_js_1.s.IDEM_EXTEND, [record], args));
        return r.outcome === 'extended' ? { extended: true, fence: r.fence, ttlMs: r.ttlMs } : (0, lease_js_1.lost)('extended');
    }
    /** Stores `response` as the result of the claim `token` holds with `fence`. */
    async complete(scope, key, token, fence, response) {
        return this.finish(scope, (0, args_js_1.bytes)('key', key), token, fence, 'completed', this.encode(response));
    }
    /** Ends the claim with a failure: without a response the key is freed; with one, it is stored. */
    async fail(scope, key, token, fence, response) {
        const payload = response === undefined || response === null ? undefined : this.encode(response);
        return this.finish(scope, (0, args_js_1.bytes)('key', key), token, fence, payload === undefined ? 'retry' : 'failed', payload);
    }
    /** @internal `response` encoded, within the size limit (checked before a handle is ended). */
    encode(response) {
        const payload = (0, response_js_1.encodeResponse)(response);
        if (payload.length > this.#maxResponseBytes) {
            throw (0, errors_js_1.badArgument)(`response is ${payload.length} bytes encoded, over the ${this.#maxResponseBytes}-byte limit: store a reference`);
        }
        return payload;
    }
    /** @internal A claim's end: `completed`, `failed` (both with a payload) or `retry` (none). */
    async finish(scope, key, token, fence, word, payload) {
        const record = this.keys(scope, key).record;
        const args = [(0, lease_js_1.ownerToken)(token), (0, lease_js_1.fenceOf)(fence), word, payload ?? '', this.#resultTtlMs];
        const r = decoded_js_1.s.decodeIdemComplete(await this.#client.runner.call(decoded_js_1.s.IDEM_COMPLETE, [record], args));
        return r.outcome === 'stored' ? { stored: true } : (0, lease_js_1.lost)('stored');
    }
    /** The keys of (`scope`, `key`). */
    keys(scope, key) {
        if (typeof scope !== 'string')
            throw (0, errors_js_1.typeError)('scope must be a string');
        const k = (0, args_js_1.bytes)('key', key);
        for (const [what, len] of [['scope', Buffer.byteLength(scope)], ['idempotency key', k.length]]) {
            if (len === 0 || len > MAX_KEY_LEN)
                throw (0, errors_js_1.badArgument)(`${what} must be 1..=${MAX_KEY_LEN} bytes, got ${len}`);
        }
        return { record: (0, keys_js_1.key)(this.#namespace, 'idem', SCHEMA, fingerprint([Buffer.from(scope), k])) };
    }
}
exports.Idempotency = Idempotency;
/** A live claim: run the request, then `complete(response)` or `fail(response?)`. */
class Claim extends lease_js_1.Lease {
    scope;
    takeover;
    #store;
    #key;
    /** @internal */
    constructor(store, scope, key, token, fence, takeover, ttlMs, sent) {
        super(token, fence, ttlMs, sent);
        this.scope = scope;
        this.takeover = takeover;
        this.#store = store;
        this.#key = key;
    }
    get status() { return 'claimed'; }
    get key() { return Buffer.from(this.#key); }
    get subject() { return `the claim on ${this.scope}`; }
    renew(ttlMs) {
        return this.#store.extend(this.scope, this.#key, this.token, this.fence, ttlMs);
    }
    /** Stores `response` for replay; consumes the handle. */
    async complete(response) {
        const payload = this.#store.encode(response);
        this.end('complete');
        return this.#store.finish(this.scope, this.#key, this.token, this.fence, 'completed', payload);
    }
    /** Ends the claim with a failure; consumes the handle. */
    async fail(response) {
        const payload = response === undefined || response === null ? undefined : this.#store.encode(response);
        this.end('fail');
        return this.#store.finish(this.scope, this.#key, this.token, this.fence, payload === undefined ? 'retry' : 'failed', payload);
    }
}
exports.Claim = Claim;
