// Argument checks several primitives share (one message per mistake, whichever primitive saw it).
import { badArgument, typeError } from './errors.js'

/** A duration in whole ms within `min..=max`: TypeError for a non-number, BadArgumentError else. */
export function msOf(what: string, ms: unknown, max: number, min = 1): number {
  if (typeof ms !== 'number') throw typeError(`${what} must be a number of ms`)
  if (!Number.isInteger(ms) || ms < min || ms > max) throw badArgument(`${what} must be an integer number of ms in ${min}..=${max}, got ${ms}`)
  return ms
}

/** A string (as UTF-8) or a Buffer, as bytes. */
export function bytes(what: string, v: unknown): Buffer {
  if (typeof v === 'string') return Buffer.from(v)
  if (Buffer.isBuffer(v)) return v
  throw typeError(`${what} must be a string or a Buffer`)
}
