// The generated script layer as the primitives use it: every decoder's BadReplyError becomes the
// package's. The generated file stands alone (the same emitter writes a user's own folder, where
// it is the only error class), so its BadReplyError is a plain Error; a primitive handing it on
// would give its caller an error outside the package's classes (no `RedisAtomicError`, no
// `retrySafe`) for a corrupted or foreign reply. One wrapper per decoder, made once at load.
import * as generated from './scripts.js'
import { BadReplyError } from './errors.js'

type Layer = typeof generated

/** The generated layer, its `decode*` functions adopted; everything else as generated. */
export const s: Layer = adopt(generated)

function adopt(layer: Layer): Layer {
  const out: Record<string, unknown> = { ...layer }
  for (const [name, value] of Object.entries(layer)) {
    if (name.startsWith('decode') && typeof value === 'function') {
      out[name] = adopted(value as (raw: unknown) => unknown)
    }
  }
  return out as Layer
}

function adopted(decode: (raw: unknown) => unknown): (raw: unknown) => unknown {
  return (raw) => {
    try {
      return decode(raw)
    } catch (e) {
      if (e instanceof generated.BadReplyError) throw new BadReplyError(e.message, { script: e.script })
      throw e
    }
  }
}
