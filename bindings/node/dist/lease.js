"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.Lease = void 0;
exports.lost = lost;
exports.ownerToken = ownerToken;
exports.fenceOf = fenceOf;
// What every lease handle shares (LockGuard, Permit, Claim, Job): the token and fence that prove
// the lease, its length and local end, the ended flag, `extend` through the primitive's own
// fenced script, and the watchdog. A handle's end verb (release, complete, fail, ack, nack) is
// its own; it calls `end()` first, so a second end is a HandleEndedError and sends nothing.
const errors_js_1 = require("./errors.js");
/** The one `Lost`, with the old discriminating field of the verb that answered it. */
function lost(verb) {
    switch (verb) {
        case 'released': return { lost: true, released: false };
        case 'extended': return { lost: true, extended: false };
        case 'acked': return { lost: true, acked: false };
        case 'stored': return { lost: true, stored: false };
        case 'nacked': return { lost: true, status: 'lost' };
    }
}
/** A caller's owner token, checked: 1..=256 bytes, no control characters. */
function ownerToken(given) {
    if (typeof given !== 'string')
        throw (0, errors_js_1.typeError)('token must be a string');
    const len = Buffer.byteLength(given);
    if (len === 0 || len > 256)
        throw (0, errors_js_1.badArgument)(`owner token must be 1..=256 bytes, got ${len}`);
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u001f\u007f]/.test(given))
        throw (0, errors_js_1.badArgument)('owner token must not contain control characters');
    return given;
}
/** A fence given back by a caller: a positive integer. */
function fenceOf(fence) {
    if (typeof fence !== 'number')
        throw (0, errors_js_1.typeError)('fence must be a number');
    if (!Number.isSafeInteger(fence) || fence < 1)
        throw (0, errors_js_1.badArgument)(`fence must be a positive integer, got ${fence}`);
    return String(fence);
}
/** A live lease: `fence` goes to every write it protects. */
class Lease {
    token;
    fence;
    #ended = false;
    #ttlMs;
    #until;
    #watch;
    /** @internal `sent`: `performance.now()` from before the request that took the lease. */
    constructor(token, fence, ttlMs, sent) {
        this.token = token;
        this.fence = fence;
        this.#ttlMs = ttlMs;
        this.#until = sent + ttlMs;
    }
    get ttlMs() { return this.#ttlMs; }
    get expiresInMs() { return Math.max(0, this.#until - performance.now()); }
    get ended() { return this.#ended; }
    /** Sets the lease to end `ttlMs` from the server's now (absolute, never added). */
    async extend(ttlMs) {
        this.#live('extend');
        if (this.#watch)
            throw (0, errors_js_1.badArgument)('a watched lease is extended by its watchdog: unwatch() first');
        return this.#renew(ttlMs);
    }
    async #renew(ttlMs) {
        const sent = performance.now();
        const r = await this.renew(ttlMs);
        if ('extended' in r && r.extended) {
            this.#ttlMs = r.ttlMs;
            this.#until = sent + r.ttlMs;
        }
        return r;
    }
    /** Ends the handle (its end verb calls this before sending): a second end throws. */
    end(verb) {
        this.#live(verb);
        this.#ended = true;
        this.#stop();
    }
    /** Renews the lease in the background until the end verb or `unwatch()`; the signal fires
     * (with a LeaseLostError) if the lease is lost. */
    watch(options) {
        this.#live('watch');
        if (options !== undefined && options !== null && typeof options !== 'object')
            throw (0, errors_js_1.typeError)('options must be an object');
        if (this.#watch)
            throw (0, errors_js_1.badArgument)('the lease is already watched');
        const renewFraction = options?.renewFraction ?? 1 / 3;
        const margin = options?.marginFraction ?? 0.05;
        if (typeof renewFraction !== 'number' || typeof margin !== 'number')
            throw (0, errors_js_1.typeError)('watch fractions must be numbers');
        if (!(renewFraction > 0 && renewFraction < 1 && margin >= 0 && margin < renewFraction)) {
            throw (0, errors_js_1.badArgument)(`watch fractions must satisfy 0 <= margin < renew < 1, got margin ${margin} renew ${renewFraction}`);
        }
        const controller = new AbortController();
        const every = Math.max(1, Math.floor(this.#ttlMs * renewFraction));
        const fail = (reason) => {
            this.#stop();
            controller.abort(new errors_js_1.LeaseLostError(`the lease on ${this.subject} was lost (${reason})`, { reason, fence: this.fence }));
        };
        const timer = setInterval(() => {
            this.#renew(this.#ttlMs).then((r) => { if (!('extended' in r && r.extended))
                fail('not_held'); }, () => { if (this.expiresInMs <= this.#ttlMs * margin)
                fail('unconfirmed'); });
        }, every);
        timer.unref();
        this.#watch = { timer, controller };
        return controller.signal;
    }
    /** Stops the renewals; the handle is held (unwatched) again. */
    async unwatch() {
        this.#live('unwatch');
        this.#stop();
    }
    #stop() {
        if (this.#watch)
            clearInterval(this.#watch.timer);
        this.#watch = undefined;
    }
    /** Throws the closed client's ClientError, which comes before a handle judges itself. */
    clientLive() { }
    #live(verb) {
        this.clientLive();
        if (this.#ended)
            throw new errors_js_1.HandleEndedError(`${verb}() after the handle ended (its end verb was already called)`, { nothingRan: true, retrySafe: true });
    }
}
exports.Lease = Lease;
