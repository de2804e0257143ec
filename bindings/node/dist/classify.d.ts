import { RedisAtomicError } from './errors.js';
/** A server's error reply, `CODE message`, as its error class (nothing recomputed later). */
export declare function serverError(code: string, message: string): RedisAtomicError;
/** A reply error's text split into its code and message. */
export declare function splitReply(text: string): [string, string];
/** Whether `e` is a server's error reply (ioredis's ReplyError). */
export declare function isReply(e: unknown): e is Error;
/**
 * `raw` (what ioredis rejected with) as this package's error. `written`: whether ioredis had taken
 * the command for a live connection (a command refused before is never written).
 */
export declare function classify(raw: unknown, written: boolean): RedisAtomicError;
