// What a failed call means for a retry, decided once where the failure is seen: a server's error
// reply by its code (as the Rust library's `Error::from_code`), an ioredis failure by whether the
// command could have been written. The package runs ioredis without its offline queue, so a
// command ioredis refuses while not connected was never written (NotSent); every other failure
// after the command was handed over may have run (OutcomeUnknown).
import {
  BadArgumentError, CrossSlotError, NotSentError, OutcomeUnknownError, RedisAtomicError, RejectedError,
  ServerError, WrongTypeError,
} from './errors.js'

/** Codes of refusals that may clear by themselves soon (a prompt resend may succeed). */
const TRANSIENT = new Set([
  'NOSCRIPT', 'BUSY', 'LOADING', 'READONLY', 'NOREPLICAS', 'MOVED', 'ASK', 'TRYAGAIN', 'CLUSTERDOWN',
  'MASTERDOWN',
])
/** Codes of refusals before running that will not clear by themselves soon. */
const REFUSED = new Set(['OOM', 'MISCONF', 'NOTBUSY'])

/** A server's error reply, `CODE message`, as its error class (nothing recomputed later). */
export function serverError(code: string, message: string): RedisAtomicError {
  const text = `${code} ${message}`.trim()
  if (TRANSIENT.has(code) || REFUSED.has(code)) {
    return new RejectedError(text, { serverCode: code, nothingRan: true, retrySafe: true, transient: TRANSIENT.has(code) })
  }
  if (code === 'WRONGTYPE') return new WrongTypeError(message)
  if (code === 'CROSSSLOT') return new CrossSlotError(text, { slots: [], nothingRan: true, retrySafe: true })
  if (code === 'ERR' && message.startsWith('redis-atomic:')) {
    return new BadArgumentError(message.slice('redis-atomic:'.length).trim(), { nothingRan: true, retrySafe: true })
  }
  return new ServerError(text, { serverCode: code })
}

/** A reply error's text split into its code and message. */
export function splitReply(text: string): [string, string] {
  const space = text.indexOf(' ')
  return space < 0 ? [text, ''] : [text.slice(0, space), text.slice(space + 1)]
}

/** The ioredis message of a command it refused because the connection was not writable. */
const UNWRITTEN = /^Stream isn't writeable/

/** Whether `e` is a server's error reply (ioredis's ReplyError). */
export function isReply(e: unknown): e is Error {
  return e instanceof Error && e.name === 'ReplyError'
}

/**
 * `raw` (what ioredis rejected with) as this package's error. `written`: whether ioredis had taken
 * the command for a live connection (a command refused before is never written).
 */
export function classify(raw: unknown, written: boolean): RedisAtomicError {
  if (raw instanceof RedisAtomicError) return raw
  if (isReply(raw)) {
    const [code, message] = splitReply(raw.message)
    return serverError(code, message)
  }
  const message = raw instanceof Error ? raw.message : String(raw)
  if (!written || UNWRITTEN.test(message)) {
    return new NotSentError(message, { cause: raw, nothingRan: true, transient: true, retrySafe: true })
  }
  const timedOut = /timed out/i.test(message)
  return new OutcomeUnknownError(message, { cause: raw, attempts: 1, timedOut })
}
