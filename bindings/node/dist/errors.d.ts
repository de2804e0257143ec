/** The facts every error carries, and the fields some classes add. */
export interface ErrorProps {
    cause?: unknown;
    nothingRan?: boolean;
    transient?: boolean;
    timedOut?: boolean;
    retrySafe?: boolean;
    [field: string]: unknown;
}
/** What every error of this package says about a retry: the library error's own facts. */
export declare class RedisAtomicError extends Error {
    static readonly code: string;
    /** Stable, snake_case, the same in every face: `not_sent`, `rejected`, `outcome_unknown`, … */
    readonly code: string;
    /** Nothing ran on the server: resending cannot repeat an effect. */
    readonly nothingRan: boolean;
    /** A prompt resend of the same call may succeed (connection refused, BUSY, LOADING, …). */
    readonly transient: boolean;
    /** The client gave up waiting (the per-request timeout) in some attempt. */
    readonly timedOut: boolean;
    /** Resending the same call (same request id or token) cannot repeat its effect. */
    readonly retrySafe: boolean;
    constructor(message?: string, props?: ErrorProps);
}
/** The request never reached a server; nothing ran. Safe to retry. */
export declare class NotSentError extends RedisAtomicError {
    static readonly code = "not_sent";
    readonly code: 'not_sent';
}
/** A server refused the request before running it (BUSY, READONLY, OOM, …); nothing ran. */
export declare class RejectedError extends RedisAtomicError {
    static readonly code = "rejected";
    readonly code: 'rejected';
    /** The server's error code (`BUSY`, `READONLY`, `OOM`, …). */
    readonly serverCode: string;
}
/** The request may or may not have run (timeout, connection lost after sending). */
export declare class OutcomeUnknownError extends RedisAtomicError {
    static readonly code: string;
    readonly code: 'outcome_unknown' | 'aborted';
    /** Attempts made, the last of which had this outcome. */
    readonly attempts: number;
}
/** The call's AbortSignal fired. Like OutcomeUnknown, the call may still have run
 * (`nothingRan` is true only when the signal had fired before the call). `name` is `AbortError`. */
export declare class AbortedError extends OutcomeUnknownError {
    static readonly code = "aborted";
    static readonly errorName = "AbortError";
    readonly code: 'aborted';
}
/** A key holds a value of another type (or another primitive's data); nothing changed. */
export declare class WrongTypeError extends RedisAtomicError {
    static readonly code = "wrong_type";
    readonly code: 'wrong_type';
}
/** An argument was refused, by this package before sending or by the script. */
export declare class BadArgumentError extends RedisAtomicError {
    static readonly code = "bad_argument";
    readonly code: 'bad_argument';
}
/** A request costs more than the limits could ever admit at once; nothing was sent. */
export declare class CostExceedsBurstError extends RedisAtomicError {
    static readonly code = "cost_exceeds_burst";
    readonly code: 'cost_exceeds_burst';
    readonly cost: number;
    readonly burst: number;
}
/** A script replied in a shape its binding does not understand (version skew?). */
export declare class BadReplyError extends RedisAtomicError {
    static readonly code = "bad_reply";
    readonly code: 'bad_reply';
    readonly script: string;
}
/** The keys of one call span hash slots; nothing was sent (or the server refused it). */
export declare class CrossSlotError extends RedisAtomicError {
    static readonly code = "cross_slot";
    readonly code: 'cross_slot';
    /** Each key's slot, in order (empty when the server refused the call). */
    readonly slots: number[];
}
/** Any other server error (a script's runtime error, ACL NOPERM, …). */
export declare class ServerError extends RedisAtomicError {
    static readonly code = "server_error";
    readonly code: 'server_error';
    readonly serverCode: string;
}
/** Could not connect or configure a connection; nothing ran. */
export declare class ConnectionError extends RedisAtomicError {
    static readonly code = "connection";
    readonly code: 'connection';
}
/** TLS could not be set up (unreadable CA or key, failed handshake); a retry cannot help. */
export declare class TlsError extends RedisAtomicError {
    static readonly code = "tls";
    readonly code: 'tls';
}
/** The write ran and stands on the primary, but fewer replicas than asked acknowledged it. */
export declare class NotReplicatedError extends RedisAtomicError {
    static readonly code = "not_replicated";
    readonly code: 'not_replicated';
    readonly acked: number;
    readonly wanted: number;
}
/** The client failed on its own side before sending anything (a closed client, a misused
 * handle). */
export declare class ClientError extends RedisAtomicError {
    static readonly code: string;
    readonly code: 'client' | 'handle_ended';
}
/** A lease handle whose end verb (release, complete, fail, ack, nack) was already called: the
 * handle is used up and nothing was sent. Repeat an end by parts (token and fence). */
export declare class HandleEndedError extends ClientError {
    static readonly code = "handle_ended";
    readonly code: 'handle_ended';
}
/** The reason a watched lease's `lost` AbortSignal fires with: stop the work the lease protects. */
export declare class LeaseLostError extends RedisAtomicError {
    static readonly code = "lease_lost";
    readonly code: 'lease_lost';
    /** `not_held`: the server said this token and fence no longer hold the lease; `unconfirmed`:
     * no renewal was confirmed before the proven lease ended (server unreachable or stalled). */
    readonly reason: 'not_held' | 'unconfirmed';
    /** The lost lease's fence. */
    readonly fence: number;
}
/** A refusal made before anything was sent: nothing ran, a retry cannot help. */
export declare function badArgument(message: string): BadArgumentError;
/** A wrong JavaScript type, as Node's own functions report it. */
export declare function typeError(message: string): TypeError;
