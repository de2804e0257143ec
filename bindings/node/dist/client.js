"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.Client = void 0;
exports.live = live;
// The Client: one ioredis connection (or cluster) the primitives share, the package's retry
// policy, and its closed flag. Made by `Client.connect` from a URL or from a user's instance.
const ioredis_1 = require("ioredis");
const batch_js_1 = require("./batch.js");
const connection_js_1 = require("./connection.js");
const errors_js_1 = require("./errors.js");
const runner_js_1 = require("./runner.js");
const DELIVERY = { eval: 'eval', evalsha: 'eval', functions: 'functions', fcall: 'functions' };
/**
 * A connection to Redis (one server, a Sentinel-named primary, or a Redis Cluster) that the
 * primitives share. Made by `Client.connect`; cheap to share; `close()` it when done.
 */
class Client {
    /** @internal */
    runner;
    #owned;
    #timeoutMs;
    constructor(runner, owned, timeoutMs) {
        this.runner = runner;
        this.#owned = owned;
        this.#timeoutMs = timeoutMs;
    }
    /**
     * Connects: one URL (`redis://`, `rediss://`, `redis+unix://`, `redis+sentinel://`), the seed
     * URLs of a Redis Cluster as an array, or an ioredis `Redis` / `Cluster` of your own (used as
     * it is when it never resends on its own, duplicated with those settings otherwise). Rejects
     * with `ConnectionError`, `TlsError` or `BadArgumentError`.
     */
    static async connect(url, options) {
        const o = options ?? {};
        if (typeof o !== 'object')
            throw (0, errors_js_1.typeError)('options must be an object');
        const timeoutMs = o.timeoutMs ?? 1000;
        if (typeof timeoutMs !== 'number' || !(timeoutMs > 0))
            throw (0, errors_js_1.badArgument)(`timeoutMs must be a positive number, got ${String(timeoutMs)}`);
        const delivery = DELIVERY[o.delivery ?? 'eval'];
        if (delivery === undefined)
            throw (0, errors_js_1.badArgument)(`delivery must be eval or functions, got ${String(o.delivery)}`);
        // One ioredis connection multiplexes every call (pipelined): a pool size is accepted, checked
        // as the contract says, and needs no second connection.
        if (o.poolSize !== undefined && (!Number.isInteger(o.poolSize) || o.poolSize < 1 || o.poolSize > 1024)) {
            throw (0, errors_js_1.badArgument)(`poolSize must be an integer in 1..=1024, got ${String(o.poolSize)}`);
        }
        const retry = { ...runner_js_1.DEFAULT_RETRY, ...o.retry };
        const batching = batchingOf(o.batching);
        const replicas = replicasOf(o.replicas);
        let redis;
        let owned = true;
        if (url instanceof ioredis_1.Redis || url instanceof ioredis_1.Cluster) {
            ({ redis, owned } = (0, connection_js_1.adopt)(url));
        }
        else if (typeof url === 'string' || Array.isArray(url)) {
            redis = (0, connection_js_1.open)(url, { timeoutMs, tls: o.tls, cluster: o.cluster });
        }
        else {
            throw (0, errors_js_1.typeError)('url must be a string, an array of seed URLs, or an ioredis Redis / Cluster');
        }
        if (replicas !== undefined && redis instanceof ioredis_1.Cluster) {
            // WAIT must follow the write on the connection of the key's node; this client sends it on
            // a standalone or Sentinel-named primary's connection only.
            throw (0, errors_js_1.badArgument)('replicas: WAIT after every write is available on one server or a Sentinel-named primary, not on a Cluster');
        }
        await (0, connection_js_1.connect)(redis, timeoutMs, o.signal);
        const runner = new runner_js_1.Runner(redis, retry, delivery, owned, batching);
        runner.replicas = replicas;
        runner.keepAlive(false);
        return new Client(runner, owned, timeoutMs);
    }
    /**
     * Closes the client: every later call through it, its primitives or their handles rejects
     * with `ClientError` and sends nothing (calls in flight finish). Closing twice is fine. A
     * connection handed in by the caller stays open (it is the caller's).
     */
    async close() {
        if (this.runner.closed)
            return;
        this.runner.closed = true;
        if (this.#owned)
            await this.runner.redis.quit().catch(() => this.runner.redis.disconnect());
    }
    async [Symbol.asyncDispose]() {
        await this.close();
    }
    /** Whether `close()` was called. */
    get closed() {
        return this.runner.closed;
    }
    /** What this client's batching did so far. */
    batchStats() {
        const c = this.runner.batcher?.counts;
        return c ? { ...c } : { decisions: 0, alone: 0, batches: 0, batched: 0, separate: 0 };
    }
    /** Whether this client talks to a Redis Cluster. */
    get isCluster() {
        return this.runner.redis instanceof ioredis_1.Cluster;
    }
    /** The per-request timeout, ms. */
    get timeoutMs() {
        return this.#timeoutMs;
    }
    /** The ioredis connection the client runs on (the caller's own, or the package's). */
    get redis() {
        return this.runner.redis;
    }
}
exports.Client = Client;
/** The `batching` option as the batcher's bounds (undefined: off). */
function batchingOf(o) {
    if (o === false)
        return undefined;
    if (o === undefined || o === true)
        return batch_js_1.DEFAULT_BATCHING;
    if (typeof o !== 'object' || o === null)
        throw (0, errors_js_1.typeError)('batching must be a boolean or an object');
    const c = { ...batch_js_1.DEFAULT_BATCHING };
    for (const k of ['inFlight', 'maxDecisions', 'maxBytes', 'minBatch']) {
        const v = o[k];
        if (v === undefined)
            continue;
        if (!Number.isInteger(v) || v < 1)
            throw (0, errors_js_1.badArgument)(`batching.${k} must be a positive integer, got ${String(v)}`);
        c[k] = v;
    }
    return c;
}
/** The `replicas` option, checked (undefined: none). */
function replicasOf(o) {
    if (o === undefined || o === null)
        return undefined;
    if (typeof o !== 'object')
        throw (0, errors_js_1.typeError)('replicas must be an object { count, timeoutMs }');
    if (!Number.isInteger(o.count) || o.count < 0)
        throw (0, errors_js_1.badArgument)(`replicas.count must be a whole number, got ${String(o.count)}`);
    if (!Number.isInteger(o.timeoutMs) || o.timeoutMs < 0)
        throw (0, errors_js_1.badArgument)(`replicas.timeoutMs must be a whole number of ms, got ${String(o.timeoutMs)}`);
    return o.count === 0 ? undefined : { count: o.count, timeoutMs: o.timeoutMs };
}
/** `client` as a live Client: a TypeError for anything else, a ClientError once it is closed. */
function live(client) {
    if (!(client instanceof Client))
        throw (0, errors_js_1.typeError)('client must be a Client (from Client.connect)');
    if (client.closed)
        throw new errors_js_1.ClientError('the client is closed', { nothingRan: true, retrySafe: true });
    return client;
}
