"use strict";
// The package's error classes: one per library error, each with the library's stable snake_case
// `code` (the vocabulary's, `redis_atomic::Error::code()`), under RedisAtomicError. Every fact a
// caller decides a retry by (`nothingRan`, `transient`, `timedOut`, `retrySafe`) is set where the
// error is made (classify.ts for what a server or a connection said), never recomputed later.
Object.defineProperty(exports, "__esModule", { value: true });
exports.LeaseLostError = exports.HandleEndedError = exports.ClientError = exports.NotReplicatedError = exports.TlsError = exports.ConnectionError = exports.ServerError = exports.CrossSlotError = exports.BadReplyError = exports.CostExceedsBurstError = exports.BadArgumentError = exports.WrongTypeError = exports.AbortedError = exports.OutcomeUnknownError = exports.RejectedError = exports.NotSentError = exports.RedisAtomicError = void 0;
exports.badArgument = badArgument;
exports.typeError = typeError;
/** What every error of this package says about a retry: the library error's own facts. */
class RedisAtomicError extends Error {
    static code = 'error';
    /** Stable, snake_case, the same in every face: `not_sent`, `rejected`, `outcome_unknown`, … */
    code;
    /** Nothing ran on the server: resending cannot repeat an effect. */
    nothingRan = false;
    /** A prompt resend of the same call may succeed (connection refused, BUSY, LOADING, …). */
    transient = false;
    /** The client gave up waiting (the per-request timeout) in some attempt. */
    timedOut = false;
    /** Resending the same call (same request id or token) cannot repeat its effect. */
    retrySafe = false;
    constructor(message, props) {
        super(message, props && 'cause' in props ? { cause: props.cause } : undefined);
        const cls = new.target;
        this.name = cls.errorName ?? cls.name;
        this.code = cls.code;
        if (props) {
            for (const [k, v] of Object.entries(props)) {
                if (k !== 'cause')
                    Object.defineProperty(this, k, { value: v, enumerable: true, writable: false });
            }
        }
    }
}
exports.RedisAtomicError = RedisAtomicError;
/** The request never reached a server; nothing ran. Safe to retry. */
class NotSentError extends RedisAtomicError {
    static code = 'not_sent';
}
exports.NotSentError = NotSentError;
/** A server refused the request before running it (BUSY, READONLY, OOM, …); nothing ran. */
class RejectedError extends RedisAtomicError {
    static code = 'rejected';
}
exports.RejectedError = RejectedError;
/** The request may or may not have run (timeout, connection lost after sending). */
class OutcomeUnknownError extends RedisAtomicError {
    static code = 'outcome_unknown';
}
exports.OutcomeUnknownError = OutcomeUnknownError;
/** The call's AbortSignal fired. Like OutcomeUnknown, the call may still have run
 * (`nothingRan` is true only when the signal had fired before the call). `name` is `AbortError`. */
class AbortedError extends OutcomeUnknownError {
    static code = 'aborted';
    static errorName = 'AbortError';
}
exports.AbortedError = AbortedError;
/** A key holds a value of another type (or another primitive's data); nothing changed. */
class WrongTypeError extends RedisAtomicError {
    static code = 'wrong_type';
}
exports.WrongTypeError = WrongTypeError;
/** An argument was refused, by this package before sending or by the script. */
class BadArgumentError extends RedisAtomicError {
    static code = 'bad_argument';
}
exports.BadArgumentError = BadArgumentError;
/** A request costs more than the limits could ever admit at once; nothing was sent. */
class CostExceedsBurstError extends RedisAtomicError {
    static code = 'cost_exceeds_burst';
}
exports.CostExceedsBurstError = CostExceedsBurstError;
/** A script replied in a shape its binding does not understand (version skew?). */
class BadReplyError extends RedisAtomicError {
    static code = 'bad_reply';
}
exports.BadReplyError = BadReplyError;
/** The keys of one call span hash slots; nothing was sent (or the server refused it). */
class CrossSlotError extends RedisAtomicError {
    static code = 'cross_slot';
}
exports.CrossSlotError = CrossSlotError;
/** Any other server error (a script's runtime error, ACL NOPERM, …). */
class ServerError extends RedisAtomicError {
    static code = 'server_error';
}
exports.ServerError = ServerError;
/** Could not connect or configure a connection; nothing ran. */
class ConnectionError extends RedisAtomicError {
    static code = 'connection';
}
exports.ConnectionError = ConnectionError;
/** TLS could not be set up (unreadable CA or key, failed handshake); a retry cannot help. */
class TlsError extends RedisAtomicError {
    static code = 'tls';
}
exports.TlsError = TlsError;
/** The write ran and stands on the primary, but fewer replicas than asked acknowledged it. */
class NotReplicatedError extends RedisAtomicError {
    static code = 'not_replicated';
}
exports.NotReplicatedError = NotReplicatedError;
/** The client failed on its own side before sending anything (a closed client, a misused
 * handle). */
class ClientError extends RedisAtomicError {
    static code = 'client';
}
exports.ClientError = ClientError;
/** A lease handle whose end verb (release, complete, fail, ack, nack) was already called: the
 * handle is used up and nothing was sent. Repeat an end by parts (token and fence). */
class HandleEndedError extends ClientError {
    static code = 'handle_ended';
}
exports.HandleEndedError = HandleEndedError;
/** The reason a watched lease's `lost` AbortSignal fires with: stop the work the lease protects. */
class LeaseLostError extends RedisAtomicError {
    static code = 'lease_lost';
}
exports.LeaseLostError = LeaseLostError;
/** A refusal made before anything was sent: nothing ran, a retry cannot help. */
function badArgument(message) {
    return new BadArgumentError(message, { nothingRan: true, retrySafe: true });
}
/** A wrong JavaScript type, as Node's own functions report it. */
function typeError(message) {
    return Object.assign(new TypeError(message), { code: 'ERR_INVALID_ARG_TYPE' });
}
