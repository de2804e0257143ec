"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.RateLimiter = void 0;
exports.algorithms = algorithms;
exports.algorithmOf = algorithmOf;
// Rate limits: the library's RateLimiter (crates/redis-atomic/src/primitives/ratelimit) over the
// generated script layer. One limit without a request id runs the limit's own script (one key,
// the lean common case); several limits, or a request id to record, run `rl_policy`. Every
// decision is made by the script on server time; a decision without a request id is not
// retry-safe (a resend would charge twice), one with a request id is (a repeat replays it).
const client_js_1 = require("./client.js");
const errors_js_1 = require("./errors.js");
const keys_js_1 = require("./keys.js");
const decoded_js_1 = require("./decoded.js");
const SCHEMA = 1;
const MAX_KEY_LEN = 1024;
const MAX_REQUEST_ID_LEN = 256;
const MAX_REQUEST_TTL_MS = 86_400_000;
const MAX_LIMIT = 2 ** 40;
const MAX_LOG_LIMIT = 100_000;
const EXACT = 2 ** 52;
const ALGORITHMS = ['fixed-window', 'anchored-window', 'sliding-log', 'sliding-window', 'token-bucket', 'gcra'];
const CODE = {
    'fixed-window': 'fw', 'anchored-window': 'aw', 'sliding-log': 'sl', 'sliding-window': 'sw', 'token-bucket': 'tb', gcra: 'gcra',
};
/** Each limit's own script and its reply's decoder (the five share one shape). */
const SINGLE = {
    'fixed-window': { def: decoded_js_1.s.RL_FIXED_WINDOW, decode: decoded_js_1.s.decodeRlFixedWindow },
    'sliding-log': { def: decoded_js_1.s.RL_SLIDING_LOG, decode: decoded_js_1.s.decodeRlSlidingLog },
    'sliding-window': { def: decoded_js_1.s.RL_SLIDING_WINDOW, decode: decoded_js_1.s.decodeRlSlidingWindow },
    'token-bucket': { def: decoded_js_1.s.RL_TOKEN_BUCKET, decode: decoded_js_1.s.decodeRlTokenBucket },
    gcra: { def: decoded_js_1.s.RL_GCRA, decode: decoded_js_1.s.decodeRlGcra },
};
/** The algorithms' names (canonical spelling). */
function algorithms() {
    return [...ALGORITHMS];
}
/** An algorithm's name in either spelling (kebab or snake) as its canonical one. */
function algorithmOf(name) {
    const kebab = typeof name === 'string' ? name.replace(/_/g, '-') : '';
    const a = ALGORITHMS.find((x) => x === kebab);
    if (a === undefined)
        throw (0, errors_js_1.badArgument)(`unknown algorithm ${JSON.stringify(name)}: one of ${ALGORITHMS.join(', ')}`);
    return a;
}
function limitOf(l) {
    if (typeof l !== 'object' || l === null)
        throw (0, errors_js_1.typeError)('each limit must be an object');
    const algorithm = algorithmOf(l.algorithm);
    const max = algorithm === 'sliding-log' ? MAX_LOG_LIMIT : MAX_LIMIT;
    if (typeof l.limit !== 'number')
        throw (0, errors_js_1.typeError)('limit must be a number');
    if (typeof l.periodMs !== 'number')
        throw (0, errors_js_1.typeError)('periodMs must be a number of ms');
    if (!Number.isInteger(l.limit) || l.limit < 1 || l.limit > max)
        throw (0, errors_js_1.badArgument)(`${algorithm} limit must be in 1..=${max}, got ${l.limit}`);
    if (typeof l.periodMs !== 'number' || !(l.periodMs >= 1 && l.periodMs <= 366 * 86_400_000)) {
        throw (0, errors_js_1.badArgument)(`period must be between 1 ms and 366 days, got ${l.periodMs} ms`);
    }
    const periodUs = Math.round(l.periodMs * 1000);
    let burst = l.limit;
    if (l.burst !== undefined) {
        if (algorithm !== 'token-bucket' && algorithm !== 'gcra')
            throw (0, errors_js_1.badArgument)(`${algorithm} has no burst: its capacity is its limit`);
        if (!Number.isInteger(l.burst) || l.burst < 1 || l.burst > MAX_LIMIT)
            throw (0, errors_js_1.badArgument)(`burst must be in 1..=${MAX_LIMIT}, got ${l.burst}`);
        burst = l.burst;
    }
    const name = l.name ?? algorithm;
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name))
        throw (0, errors_js_1.badArgument)(`limit name must be 1..=64 bytes of [A-Za-z0-9_.-], got ${JSON.stringify(name)}`);
    const interval = Math.ceil(periodUs / l.limit);
    const product = algorithm === 'sliding-window' ? l.limit * periodUs : algorithm === 'token-bucket' || algorithm === 'gcra' ? burst * interval : 0;
    if (product > EXACT)
        throw (0, errors_js_1.badArgument)(`${algorithm} ${l.limit}/${l.periodMs} ms (burst ${burst}) needs more than 52 bits of µs arithmetic`);
    return { name, algorithm, limit: l.limit, periodUs, burst, spec: [CODE[algorithm], String(l.limit), String(periodUs), String(burst)] };
}
/** Decisions of one policy (one or more limits) per identity. */
class RateLimiter {
    #client;
    #namespace;
    #limits;
    #specs;
    #scope;
    #requestTtlMs;
    #maxCost;
    #single;
    constructor(client, options) {
        if (typeof options !== 'object' || options === null)
            throw (0, errors_js_1.typeError)('options must be an object');
        if (!Array.isArray(options.limits))
            throw (0, errors_js_1.typeError)('limits must be an array');
        this.#client = (0, client_js_1.live)(client);
        this.#namespace = (0, keys_js_1.namespaceOf)(options.namespace);
        if (options.limits.length === 0)
            throw (0, errors_js_1.badArgument)('a policy needs at least one limit');
        this.#limits = options.limits.map(limitOf);
        const names = this.#limits.map((l) => `${l.name}:${CODE[l.algorithm]}`);
        if (new Set(this.#limits.map((l) => l.name)).size !== this.#limits.length)
            throw (0, errors_js_1.badArgument)('limit names must be distinct');
        this.#specs = this.#limits.map((l) => ({ algorithm: l.algorithm, limit: l.limit, periodMs: l.periodUs / 1000, burst: l.burst, name: l.name }));
        this.#scope = digestParts(names);
        const longest = Math.max(...this.#limits.map((l) => l.periodUs / 1000));
        this.#requestTtlMs = options.requestTtlMs ?? Math.min(Math.ceil(longest), MAX_REQUEST_TTL_MS);
        if (!(this.#requestTtlMs >= 1 && this.#requestTtlMs <= MAX_REQUEST_TTL_MS)) {
            throw (0, errors_js_1.badArgument)(`request ttl must be between 1 ms and 24 h, got ${this.#requestTtlMs} ms`);
        }
        this.#maxCost = Math.min(...this.#limits.map((l) => l.burst));
        const only = this.#limits.length === 1 ? this.#limits[0] : undefined;
        if (only === undefined)
            this.#single = undefined;
        else if (only.algorithm === 'anchored-window')
            this.#single = { def: decoded_js_1.s.RL_ANCHORED_WINDOW, args: [String(only.limit), String(Math.ceil(only.periodUs / 1000))], decode: decoded_js_1.s.decodeRlAnchoredWindow };
        else
            this.#single = { def: SINGLE[only.algorithm].def, args: [String(only.limit), String(only.periodUs), String(only.burst), ''], decode: SINGLE[only.algorithm].decode };
    }
    /** The policy's limits. */
    get limits() {
        return this.#specs.map((l) => ({ ...l }));
    }
    /** How long a request id is remembered, ms. */
    get requestTtlMs() {
        return this.#requestTtlMs;
    }
    /** Takes `cost` (default 1) units from every limit of `key`'s identity, or none. */
    async consume(identity, options) {
        if (typeof identity !== 'string')
            throw (0, errors_js_1.typeError)('key must be a string');
        const cost = options?.cost ?? 1;
        if (!Number.isSafeInteger(cost) || cost < 1)
            throw (0, errors_js_1.badArgument)(`cost must be an integer in 1..=2^53-1, got ${cost}`);
        if (cost > this.#maxCost)
            throw new errors_js_1.CostExceedsBurstError(`cost ${cost} exceeds the burst ${this.#maxCost}`, { cost, burst: this.#maxCost, nothingRan: true, retrySafe: true });
        const requestId = options?.requestId;
        const tag = (0, keys_js_1.digest)(identity, MAX_KEY_LEN, 'rate-limit key');
        const runner = this.#client.runner;
        const single = this.#single;
        if (single !== undefined && requestId === undefined) {
            const k = this.#limitKey(tag, 0);
            const raw = await runner.call(single.def, [k], [cost, ...single.args], options?.signal ? { signal: options.signal } : undefined);
            return this.#one(single.decode(raw));
        }
        const request = requestId === undefined ? '' : (0, keys_js_1.digest)(requestId, MAX_REQUEST_ID_LEN, 'request id');
        const first = (0, keys_js_1.key)(this.#namespace, 'rl', SCHEMA, tag, ['req', request === '' ? '-' : this.#scope, ...(request === '' ? [] : [request])]);
        const keys = [first, ...this.#limits.map((_, i) => this.#limitKey(tag, i))];
        const args = [String(cost), request, String(this.#requestTtlMs * 1000), '', ...this.#limits.flatMap((l) => l.spec)];
        const raw = await runner.call(decoded_js_1.s.RL_POLICY, keys, args, { safe: request !== '', signal: options?.signal });
        return this.#policy(decoded_js_1.s.decodeRlPolicy(raw));
    }
    /** The keys a consume for `identity` (with `requestId`, if any) uses. */
    keys(identity, requestId) {
        const tag = (0, keys_js_1.digest)(identity, MAX_KEY_LEN, 'rate-limit key');
        const limits = this.#limits.map((_, i) => this.#limitKey(tag, i));
        if (requestId === undefined || requestId === null)
            return { limits };
        const request = (0, keys_js_1.digest)(requestId, MAX_REQUEST_ID_LEN, 'request id');
        return { limits, request: (0, keys_js_1.key)(this.#namespace, 'rl', SCHEMA, tag, ['req', this.#scope, request]) };
    }
    /** A limit's state key; `tag` is a digest (hex), so only the parts checked once are joined. */
    #limitKey(tag, i) {
        const l = this.#limits[i];
        return `${this.#namespace}:rl:v${SCHEMA}:{${tag}}:${l.name}:${CODE[l.algorithm]}`;
    }
    #one(r) {
        const name = this.#limits[0].name;
        if (r.outcome === 'allowed') {
            const resetAfterMs = r.resetUs / 1000;
            return { allowed: true, remaining: r.remaining, resetAfterMs, replayed: false, limits: [{ name, remaining: r.remaining, resetAfterMs, retryAfterMs: 0 }] };
        }
        const retryAfterMs = r.retryUs / 1000;
        const resetAfterMs = r.resetUs / 1000;
        return { allowed: false, retryAfterMs, resetAfterMs, replayed: false, limits: [{ name, remaining: r.remaining, resetAfterMs, retryAfterMs }] };
    }
    #policy(r) {
        const limits = r.limits.map((l, i) => ({ name: this.#limits[i].name, remaining: l.remaining, resetAfterMs: l.resetUs / 1000, retryAfterMs: l.retryUs / 1000 }));
        if (r.outcome === 'limited')
            return { allowed: false, retryAfterMs: r.retryUs / 1000, resetAfterMs: r.resetUs / 1000, replayed: false, limits };
        return { allowed: true, remaining: r.remaining, resetAfterMs: r.resetUs / 1000, replayed: r.outcome === 'replayed', limits };
    }
}
exports.RateLimiter = RateLimiter;
/** 128 bits of SHA-256 in hex of `parts` joined by `|` (the scope of a request record). */
function digestParts(parts) {
    return (0, keys_js_1.digest)(parts.join('|'), Number.MAX_SAFE_INTEGER, 'scope');
}
