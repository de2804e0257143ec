"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.Runner = exports.DEFAULT_RETRY = void 0;
const classify_js_1 = require("./classify.js");
const errors_js_1 = require("./errors.js");
/** The library's default: 4 attempts within 3 s, backoff from 5 ms up to 250 ms. */
exports.DEFAULT_RETRY = { maxAttempts: 4, deadlineMs: 3000, baseBackoffMs: 5, maxBackoffMs: 250 };
/** Sends script calls over one ioredis connection (or cluster), with the package's retry rules. */
class Runner {
    redis;
    retry;
    delivery;
    closed = false;
    constructor(redis, retry, delivery) {
        this.redis = redis;
        this.retry = retry;
        this.delivery = delivery;
    }
    run(def, keys, args) {
        return this.call(def, keys, args);
    }
    /** `def` with `keys` and `args`, tried as the retry policy and the call's safety allow. */
    async call(def, keys, args, options) {
        const safe = options?.safe ?? def.retrySafe;
        const signal = options?.signal ?? undefined;
        const started = Date.now();
        let timedOut = false;
        for (let attempt = 1;; attempt++) {
            this.gate(signal);
            try {
                return await abortable(this.once(def, keys, args), signal);
            }
            catch (raw) {
                const e = raw instanceof errors_js_1.RedisAtomicError ? raw : (0, classify_js_1.classify)(raw, true);
                timedOut ||= e.timedOut;
                const unknown = e instanceof errors_js_1.OutcomeUnknownError && !(e instanceof errors_js_1.AbortedError);
                const again = (e.transient || (unknown && safe)) && attempt < this.retry.maxAttempts;
                const pause = backoff(this.retry, attempt);
                if (!again || Date.now() - started + pause > this.retry.deadlineMs || signal?.aborted) {
                    throw unknown ? new errors_js_1.OutcomeUnknownError(e.message, { cause: e.cause ?? e, attempts: attempt, timedOut, retrySafe: safe }) : e;
                }
                await new Promise((resolve) => setTimeout(resolve, pause));
            }
        }
    }
    /** Refuses a call on a closed client or an aborted signal: nothing is sent. */
    gate(signal) {
        if (this.closed)
            throw new errors_js_1.ClientError('the client is closed', { nothingRan: true, retrySafe: true });
        if (signal?.aborted) {
            throw new errors_js_1.AbortedError('the call was aborted before it was sent', { nothingRan: true, retrySafe: true, attempts: 0, cause: signal.reason });
        }
    }
    /** One attempt: the call, and after NOSCRIPT the body loaded and the call sent once more. */
    async once(def, keys, args) {
        try {
            return await this.send(def, keys, args);
        }
        catch (e) {
            if (!isNoScript(e))
                throw e;
        }
        await this.load(def);
        return this.send(def, keys, args);
    }
    /** Makes sure `def`'s body is known to the server its keys go to. */
    async load(def) {
        const written = this.redis.status === 'ready';
        try {
            await this.redis.script('LOAD', def.body);
        }
        catch (raw) {
            throw (0, classify_js_1.classify)(raw, written);
        }
    }
    /** Hands the command to ioredis: what it refuses while not connected was never written. */
    send(def, keys, args) {
        const written = this.redis.status === 'ready';
        const functions = this.delivery === 'functions';
        const command = functions ? (def.readOnly ? 'fcall_ro' : 'fcall') : 'evalsha';
        const rest = args;
        return this.redis
            .call(command, functions ? def.functionName : def.sha1, keys.length, ...keys, ...rest)
            .catch((raw) => {
            throw (0, classify_js_1.classify)(raw, written);
        });
    }
}
exports.Runner = Runner;
function isNoScript(e) {
    return (e instanceof errors_js_1.RejectedError && e.serverCode === 'NOSCRIPT') ||
        (e instanceof errors_js_1.ServerError && e.message.includes('Function not found'));
}
/** The pause before attempt `attempt + 1`: exponential from the base, capped, with jitter. */
function backoff(policy, attempt) {
    const ceiling = Math.min(policy.maxBackoffMs, policy.baseBackoffMs * 2 ** (attempt - 1));
    return Math.ceil(ceiling / 2 + Math.random() * (ceiling / 2));
}
/** `p`, or an AbortedError as soon as `signal` fires (the call may still run: outcome unknown). */
function abortable(p, signal) {
    if (!signal)
        return p;
    return new Promise((resolve, reject) => {
        const onAbort = () => reject(new errors_js_1.AbortedError('the call was aborted; it may have run', { attempts: 1, cause: signal.reason }));
        signal.addEventListener('abort', onAbort, { once: true });
        p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
}
