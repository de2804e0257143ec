"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.serverError = serverError;
exports.splitReply = splitReply;
exports.isReply = isReply;
exports.classify = classify;
// What a failed call means for a retry, decided once where the failure is seen: a server's error
// reply by its code (as the Rust library's `Error::from_code`), an ioredis failure by whether the
// command could have been written. The package runs ioredis without its offline queue, so a
// command ioredis refuses while not connected was never written (NotSent); every other failure
// after the command was handed over may have run (OutcomeUnknown).
const errors_js_1 = require("./errors.js");
/** Codes of refusals that may clear by themselves soon (a prompt resend may succeed). */
const TRANSIENT = new Set([
    'NOSCRIPT', 'BUSY', 'LOADING', 'READONLY', 'NOREPLICAS', 'MOVED', 'ASK', 'TRYAGAIN', 'CLUSTERDOWN',
    'MASTERDOWN',
]);
/** Codes of refusals before running that will not clear by themselves soon. */
const REFUSED = new Set(['OOM', 'MISCONF', 'NOTBUSY']);
/** A server's error reply, `CODE message`, as its error class (nothing recomputed later). */
function serverError(code, message) {
    const text = `${code} ${message}`.trim();
    if (TRANSIENT.has(code) || REFUSED.has(code)) {
        return new errors_js_1.RejectedError(text, { serverCode: code, nothingRan: true, retrySafe: true, transient: TRANSIENT.has(code) });
    }
    if (code === 'WRONGTYPE')
        return new errors_js_1.WrongTypeError(message);
    if (code === 'CROSSSLOT')
        return new errors_js_1.CrossSlotError(text, { slots: [], nothingRan: true, retrySafe: true });
    if (code === 'ERR' && message.startsWith('redis-atomic:')) {
        return new errors_js_1.BadArgumentError(message.slice('redis-atomic:'.length).trim(), { nothingRan: true, retrySafe: true });
    }
    return new errors_js_1.ServerError(text, { serverCode: code });
}
/** A reply error's text split into its code and message. */
function splitReply(text) {
    const space = text.indexOf(' ');
    return space < 0 ? [text, ''] : [text.slice(0, space), text.slice(space + 1)];
}
/** The ioredis message of a command it refused because the connection was not writable. */
const UNWRITTEN = /^Stream isn't writeable/;
/** Whether `e` is a server's error reply (ioredis's ReplyError). */
function isReply(e) {
    return e instanceof Error && e.name === 'ReplyError';
}
/**
 * `raw` (what ioredis rejected with) as this package's error. `written`: whether ioredis had taken
 * the command for a live connection (a command refused before is never written).
 */
function classify(raw, written) {
    if (raw instanceof errors_js_1.RedisAtomicError)
        return raw;
    if (isReply(raw)) {
        const [code, message] = splitReply(raw.message);
        return serverError(code, message);
    }
    const message = raw instanceof Error ? raw.message : String(raw);
    if (!written || UNWRITTEN.test(message)) {
        return new errors_js_1.NotSentError(message, { cause: raw, nothingRan: true, transient: true, retrySafe: true });
    }
    const timedOut = /timed out/i.test(message);
    return new errors_js_1.OutcomeUnknownError(message, { cause: raw, attempts: 1, timedOut });
}
