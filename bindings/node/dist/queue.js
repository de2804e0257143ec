"use strict";
var __createBinding = (this && this.__createBinding) || (Object.create ? (function(o, m, k, k2) {
    if (k2 === undefined) k2 = k;
    var desc = Object.getOwnPropertyDescriptor(m, k);
    if (!desc || ("get" in desc ? !m.__esModule : desc.writable || desc.configurable)) {
      desc = { enumerable: true, get: function() { return m[k]; } };
    }
    Object.defineProperty(o, k2, desc);
}) : (function(o, m, k, k2) {
    if (k2 === undefined) k2 = k;
    o[k2] = m[k];
}));
var __setModuleDefault = (this && this.__setModuleDefault) || (Object.create ? (function(o, v) {
    Object.defineProperty(o, "default", { enumerable: true, value: v });
}) : function(o, v) {
    o["default"] = v;
});
var __importStar = (this && this.__importStar) || (function () {
    var ownKeys = function(o) {
        ownKeys = Object.getOwnPropertyNames || function (o) {
            var ar = [];
            for (var k in o) if (Object.prototype.hasOwnProperty.call(o, k)) ar[ar.length] = k;
            return ar;
        };
        return ownKeys(o);
    };
    return function (mod) {
        if (mod && mod.__esModule) return mod;
        var result = {};
        if (mod != null) for (var k = ownKeys(mod), i = 0; i < k.length; i++) if (k[i] !== "default") __createBinding(result, mod, k[i]);
        __setModuleDefault(result, mod);
        return result;
    };
})();
Object.defineProperty(exports, "__esModule", { value: true });
exports.Job = exports.Queue = void 0;
exports.jobIdOf = jobIdOf;
// The job queue: the library's Queue (crates/redis-atomic/src/primitives/queue). Every key of a
// queue lives under its `{name}` tag (one slot): due (job → due time), inflight (leased job →
// lease end), dead, done (acked ids for the dedup window), meta, payload, errors, and the
// claim-id records of `claimWithId`. A claim leases due jobs to a worker (its token) with a fence
// per lease; ack and nack take the worker and fence, so a superseded lease changes nothing.
// Retry: enqueue (the job id), ack, nack, extend and `claimWithId` (the claim id) are retry-safe;
// a plain `claim` is not (a resend would lease more jobs), and the package never resends it.
// Administration (stats, inspect, dead letters, reap) is in queue-admin.ts.
const client_js_1 = require("./client.js");
const errors_js_1 = require("./errors.js");
const keys_js_1 = require("./keys.js");
const lease_js_1 = require("./lease.js");
const admin = __importStar(require("./queue-admin.js"));
const decoded_js_1 = require("./decoded.js");
const SCHEMA = 1;
const DAY_MS = 86_400_000;
const YEAR_MS = 365 * DAY_MS;
const MAX_BATCH = 1000;
/** `v` (default `fallback`) as an integer in `min..=max`. */
function intIn(what, v, fallback, min, max) {
    if (v === undefined || v === null)
        return fallback;
    if (typeof v !== 'number')
        throw (0, errors_js_1.typeError)(`${what} must be a number`);
    if (!Number.isInteger(v) || v < min || v > max)
        throw (0, errors_js_1.badArgument)(`${what} must be an integer in ${min}..=${max}, got ${v}`);
    return v;
}
/** A job id, checked (1..=256 bytes). */
function jobIdOf(id) {
    if (typeof id !== 'string')
        throw (0, errors_js_1.typeError)('jobId must be a string');
    const len = Buffer.byteLength(id);
    if (len === 0 || len > 256)
        throw (0, errors_js_1.badArgument)(`job id must be 1..=256 bytes, got ${len}`);
    return id;
}
function configOf(o) {
    return {
        maxPayloadBytes: intIn('maxPayloadBytes', o.maxPayloadBytes, 64 << 10, 0, 1 << 20),
        maxDeliveries: intIn('maxDeliveries', o.maxDeliveries, 5, 1, 0xffffffff),
        dedupWindowMs: intIn('dedupWindowMs', o.dedupWindowMs, DAY_MS, 0, YEAR_MS),
        maxDeadLetters: intIn('maxDeadLetters', o.maxDeadLetters, 10_000, 1, 1_000_000_000),
        deadLetterRetentionMs: intIn('deadLetterRetentionMs', o.deadLetterRetentionMs, 7 * DAY_MS, 1, YEAR_MS),
        claimIdTtlMs: intIn('claimIdTtlMs', o.claimIdTtlMs, 3_600_000, 1000, DAY_MS),
    };
}
/** One queue: producers enqueue, workers claim jobs and ack or nack them. */
class Queue {
    /** @internal */
    client;
    /** @internal */
    config;
    #keys;
    constructor(client, options) {
        if (typeof options !== 'object' || options === null)
            throw (0, errors_js_1.typeError)('options must be an object');
        if (typeof options.name !== 'string')
            throw (0, errors_js_1.typeError)('name must be a string');
        const base = (0, keys_js_1.key)((0, keys_js_1.namespaceOf)(options.namespace), 'queue', SCHEMA, options.name);
        this.client = (0, client_js_1.live)(client);
        this.config = configOf(options);
        const k = (part) => `${base}:${part}`;
        this.#keys = {
            due: k('due'), inflight: k('inflight'), dead: k('dead'), done: k('done'), meta: k('meta'),
            payload: k('payload'), errors: k('errors'), claims: k('claim'),
        };
    }
    get keys() { return { ...this.#keys }; }
    /** The key of `claimId`'s record. */
    claimKey(claimId) {
        if (typeof claimId !== 'string')
            throw (0, errors_js_1.typeError)('claimId must be a string');
        return `${this.#keys.claims}:${(0, keys_js_1.digest)(claimId, 256, 'claim id')}`;
    }
    /** Adds job `jobId` with `payload` (a job id that exists is not added again). */
    async enqueue(jobId, payload, options) {
        jobIdOf(jobId);
        if (typeof payload !== 'string' && !Buffer.isBuffer(payload))
            throw (0, errors_js_1.typeError)('payload must be a string or a Buffer');
        const size = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
        if (size > this.config.maxPayloadBytes)
            throw (0, errors_js_1.badArgument)(`payload is ${size} bytes, over the ${this.config.maxPayloadBytes}-byte limit`);
        const delayMs = intIn('delayMs', options?.delayMs, 0, 0, YEAR_MS);
        const runAt = options?.runAt;
        let atMs = 0;
        if (runAt !== undefined && runAt !== null) {
            if (options?.delayMs !== undefined && options.delayMs !== null)
                throw (0, errors_js_1.badArgument)('give delayMs or runAt, not both');
            const ms = runAt instanceof Date ? runAt.getTime() : runAt;
            if (typeof ms !== 'number' || !Number.isFinite(ms))
                throw (0, errors_js_1.badArgument)('runAt must be a Date or ms since the epoch');
            if (ms > 253_402_300_799_999)
                throw (0, errors_js_1.badArgument)('runAt beyond the year 9999');
            atMs = Math.max(Math.floor(ms), 1);
        }
        const k = this.#keys;
        const r = decoded_js_1.s.decodeQueueEnqueue(await this.client.runner.call(decoded_js_1.s.QUEUE_ENQUEUE, [k.due, k.meta, k.payload], [jobId, payload, delayMs, atMs]));
        return r.outcome === 'enqueued' ? { enqueued: true, dueInMs: r.dueInMs } : { enqueued: false, status: r.status };
    }
    /** Leases up to `maxJobs` due jobs to `worker` for `ttlMs` (not retry-safe: see `claimWithId`). */
    async claim(worker, ttlMs, options) {
        const args = this.#claimArgs(worker, ttlMs, options);
        const k = this.#keys;
        const sent = performance.now();
        const raw = await this.client.runner.call(decoded_js_1.s.QUEUE_CLAIM, [k.due, k.inflight, k.dead, k.meta, k.payload, k.errors], args, { signal: options?.signal, binary: true });
        const r = decoded_js_1.s.decodeQueueClaim(raw);
        if (r.outcome !== 'claimed')
            return r.outcome === 'empty' ? { status: 'empty', retryAfterMs: r.retryAfterMs } : { status: 'idle' };
        return { status: 'claimed', jobs: r.jobs.map((j) => new Job(this, j.id, worker, j.fence, j.deliveries, j.payload, r.nowMs, ttlMs, sent)) };
    }
    /** `claim`, retry-safe with `claimId`: a resend returns the first claim's live leases. */
    async claimWithId(worker, ttlMs, claimId, options) {
        const args = this.#claimArgs(worker, ttlMs, options);
        const record = this.claimKey(claimId);
        const k = this.#keys;
        const sent = performance.now();
        const raw = await this.client.runner.call(decoded_js_1.s.QUEUE_CLAIM_ID, [k.due, k.inflight, k.dead, k.meta, k.payload, k.errors, record], [...args, this.config.claimIdTtlMs], { signal: options?.signal, binary: true });
        const r = decoded_js_1.s.decodeQueueClaimId(raw);
        if (r.outcome !== 'claimed')
            return r.outcome === 'empty' ? { status: 'empty', retryAfterMs: r.retryAfterMs } : { status: 'idle' };
        return {
            status: 'claimed',
            jobs: r.jobs.map((j) => {
                const claimedAt = Math.max(0, r.nowMs + j.ttlMs - ttlMs);
                return new Job(this, j.id, worker, j.fence, j.deliveries, j.payload, claimedAt, j.ttlMs, sent);
            }),
        };
    }
    #claimArgs(worker, ttlMs, options) {
        if (typeof worker !== 'string')
            throw (0, errors_js_1.typeError)('worker must be a string');
        const len = Buffer.byteLength(worker);
        if (len === 0 || len > 128)
            throw (0, errors_js_1.badArgument)(`worker must be 1..=128 bytes, got ${len}`);
        (0, lease_js_1.ownerToken)(worker);
        const maxJobs = intIn('maxJobs', options?.maxJobs, 1, 1, MAX_BATCH);
        const ttl = intIn('ttlMs', ttlMs ?? Number.NaN, 0, 1, DAY_MS);
        const c = this.config;
        return [worker, ttl, maxJobs, c.maxDeliveries, c.maxDeadLetters, c.deadLetterRetentionMs];
    }
    /** Sets the lease of `jobId` (leased to `worker` with `fence`) to end `ttlMs` from the server's now. */
    async extend(jobId, worker, fence, ttlMs) {
        const args = [jobIdOf(jobId), (0, lease_js_1.ownerToken)(worker), (0, lease_js_1.fenceOf)(fence), intIn('ttlMs', ttlMs ?? Number.NaN, 0, 1, DAY_MS)];
        const r = decoded_js_1.s.decodeQueueExtend(await this.client.runner.call(decoded_js_1.s.QUEUE_EXTEND, [this.#keys.inflight, this.#keys.meta], args));
        return r.outcome === 'extended' ? { extended: true, fence: r.fence, ttlMs: r.ttlMs } : (0, lease_js_1.lost)('extended');
    }
    /** Completes `jobId` if it is leased to `worker` with `fence`. */
    async ack(jobId, worker, fence) {
        const k = this.#keys;
        const args = [jobIdOf(jobId), (0, lease_js_1.ownerToken)(worker), (0, lease_js_1.fenceOf)(fence), this.config.dedupWindowMs];
        const r = decoded_js_1.s.decodeQueueAck(await this.client.runner.call(decoded_js_1.s.QUEUE_ACK, [k.inflight, k.meta, k.payload, k.errors, k.done], args));
        return r.outcome === 'acked' ? { acked: true } : (0, lease_js_1.lost)('acked');
    }
    /** Gives `jobId` back if it is leased to `worker` with `fence`: due again, or a dead letter. */
    async nack(jobId, worker, fence, retryAfterMs, error) {
        const k = this.#keys;
        const after = intIn('retryAfterMs', retryAfterMs, 0, 0, YEAR_MS);
        if (error !== undefined && error !== null && typeof error !== 'string')
            throw (0, errors_js_1.typeError)('error must be a string');
        const c = this.config;
        const args = [jobIdOf(jobId), (0, lease_js_1.ownerToken)(worker), (0, lease_js_1.fenceOf)(fence), after, c.maxDeliveries, cut(error ?? '', 4096), c.maxDeadLetters, c.deadLetterRetentionMs];
        const r = decoded_js_1.s.decodeQueueNack(await this.client.runner.call(decoded_js_1.s.QUEUE_NACK, [k.inflight, k.due, k.dead, k.meta, k.payload, k.errors], args));
        switch (r.outcome) {
            case 'retrying': return { status: 'retrying', retryAfterMs: r.retryAfterMs };
            case 'dead': return { status: 'dead' };
            case 'lost': return (0, lease_js_1.lost)('nacked');
        }
    }
    /** Counts of jobs by state. */
    async stats() { return admin.stats(this.client, this.#keys); }
    /** One job's state. */
    async inspect(jobId) { return admin.inspect(this.client, this.#keys, jobIdOf(jobId)); }
    /** A page of dead letters, oldest first. */
    async deadLetters(page) {
        if (page !== undefined && page !== null && typeof page !== 'object')
            throw (0, errors_js_1.typeError)('page must be an object');
        const start = intIn('start', page?.start, 0, 0, 0xffffffff);
        return admin.deadLetters(this.client, this.#keys, start, intIn('count', page?.count, 100, 1, MAX_BATCH));
    }
    /** Moves dead letter `jobId` back to the queue, due after `delayMs`, its deliveries reset. */
    async requeueDead(jobId, delayMs) {
        return admin.requeueDead(this.client, this.#keys, jobIdOf(jobId), intIn('delayMs', delayMs, 0, 0, YEAR_MS));
    }
    /** Deletes dead letters (oldest first), each with its record, payload and last error. */
    async purgeDeadLetters(options) {
        const olderThanMs = intIn('olderThanMs', options?.olderThanMs, 0, 0, YEAR_MS);
        return admin.purge(this.client, this.#keys, olderThanMs, intIn('limit', options?.limit, MAX_BATCH, 1, MAX_BATCH));
    }
    /** Returns at most `limit` expired leases to the queue (or the dead letters). */
    async reap(limit) {
        return admin.reap(this.client, this.#keys, this.config, intIn('limit', limit, 100, 1, MAX_BATCH));
    }
}
exports.Queue = Queue;
/** `text` cut to at most `max` bytes of UTF-8, on a character boundary. */
function cut(text, max) {
    const b = Buffer.from(text);
    if (b.length <= max)
        return text;
    let end = max;
    while (end > 0 && (b[end] & 0xc0) === 0x80)
        end--;
    return b.toString('utf8', 0, end);
}
/** A leased job; `ack()` or `nack()` it. */
class Job extends lease_js_1.Lease {
    id;
    deliveries;
    claimedAtMs;
    #queue;
    #payload;
    /** @internal */
    constructor(queue, id, worker, fence, deliveries, payload, claimedAtMs, ttlMs, sent) {
        super(worker, fence, ttlMs, sent);
        this.id = id;
        this.deliveries = deliveries;
        this.claimedAtMs = claimedAtMs;
        this.#queue = queue;
        this.#payload = Buffer.from(payload);
    }
    get payload() { return Buffer.from(this.#payload); }
    get worker() { return this.token; }
    get subject() { return `job ${this.id}`; }
    renew(ttlMs) {
        return this.#queue.extend(this.id, this.token, this.fence, ttlMs);
    }
    /** Completes the job if this is still its lease; consumes the handle. */
    async ack() {
        this.end('ack');
        return this.#queue.ack(this.id, this.token, this.fence);
    }
    /** Gives the job back (or dead-letters it) if this is still its lease; consumes the handle. */
    async nack(retryAfterMs, error) {
        intIn('retryAfterMs', retryAfterMs, 0, 0, YEAR_MS);
        this.end('nack');
        return this.#queue.nack(this.id, this.token, this.fence, retryAfterMs, error);
    }
}
exports.Job = Job;
