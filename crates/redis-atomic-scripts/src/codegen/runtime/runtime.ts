// The runtime part of every generated TypeScript script layer (copied into each generated file, so
// a file has no import): the types a runner implements and the reply cursor the decoders share.
// Needs an ES2020 target (bigint, String.fromCodePoint); no Node types (bytes are Uint8Array,
// which a Buffer is).

/** A raw RESP value as a client hands it over: arrays, bulk strings (text or bytes), integers, nil. */
export type RawReply = null | number | bigint | string | Uint8Array | readonly RawReply[]

/** One script: what a runner sends (`EVALSHA sha1` with `body` on NOSCRIPT, or `FCALL functionName`). */
export interface ScriptDef {
  readonly name: string
  readonly library: string
  readonly sha1: string
  readonly functionName: string
  readonly body: string
  readonly keys: readonly string[]
  readonly args: readonly string[]
  /** `no-writes`: runs by EVALSHA_RO / FCALL_RO. */
  readonly readOnly: boolean
  /** Resending after an unknown outcome cannot repeat the effect. */
  readonly retrySafe: boolean
  readonly batchable: boolean
  /** A batchable script's batch entry point (several waiting decisions in one call). */
  readonly batch?: ScriptDef
}

/** A script argument as sent. */
export type ScriptArg = string | number | Uint8Array

/** What runs a script and hands back its raw reply (the ioredis runtime implements it). */
export interface ScriptRunner {
  run(def: ScriptDef, keys: string[], args: ScriptArg[]): Promise<unknown>
}

/** A reply none of the script's declared shapes: error code `bad_reply`. */
export class BadReplyError extends Error {
  readonly code = 'bad_reply' as const
  constructor(readonly script: string, readonly detail: string) {
    super(`${script}: bad reply: ${detail}`)
    this.name = 'BadReplyError'
  }
}

/** Reads a reply's items in header order; every malformed item is a BadReplyError. */
class Cursor {
  private next = 1
  private readonly items: readonly unknown[]
  readonly status: string

  constructor(readonly script: string, raw: unknown) {
    if (!Array.isArray(raw)) throw new BadReplyError(script, 'not an array')
    this.items = raw
    if (raw.length === 0) throw new BadReplyError(script, 'empty reply')
    const status: unknown = raw[0]
    const word = typeof status === 'string' ? status
      : status instanceof Uint8Array ? utf8(status, true) : undefined
    if (word === undefined) throw new BadReplyError(script, 'the status is not a UTF-8 string')
    this.status = word
  }

  unknown(): BadReplyError {
    return new BadReplyError(this.script, `unknown status \`${this.status.slice(0, 64)}\``)
  }

  private take(): unknown {
    const i = this.next
    if (i >= this.items.length) throw new BadReplyError(this.script, `\`${this.status}\` reply lacks item ${i}`)
    this.next += 1
    return this.items[i]
  }

  int(): number {
    const i = this.next
    const v = this.take()
    let n: number | undefined
    if (typeof v === 'number') n = v
    else if (typeof v === 'bigint') n = Number(v)
    else {
      const s = typeof v === 'string' ? v : v instanceof Uint8Array ? utf8(v, true) : undefined
      if (s !== undefined && /^[+-]?[0-9]+$/.test(s)) n = Number(s)
    }
    if (n === undefined || !Number.isSafeInteger(n)) throw new BadReplyError(this.script, `item ${i} is not an integer`)
    return n
  }

  uint(): number {
    const i = this.next
    const n = this.int()
    if (n < 0) throw new BadReplyError(this.script, `item ${i} is negative`)
    return n
  }

  bool(): boolean {
    const i = this.next
    const n = this.int()
    if (n !== 0 && n !== 1) throw new BadReplyError(this.script, `item ${i} is ${n}, not 0 or 1`)
    return n === 1
  }

  bytes(): Uint8Array {
    const i = this.next
    const v = this.take()
    if (typeof v === 'string') return utf8Encode(v)
    if (v instanceof Uint8Array) return v
    throw new BadReplyError(this.script, `item ${i} is not a string`)
  }

  str(): string {
    const i = this.next
    const s = utf8(this.bytes(), true)
    if (s === undefined) throw new BadReplyError(this.script, `item ${i} not UTF-8`)
    return s
  }

  text(): string {
    return utf8(this.bytes(), false) ?? ''
  }

  word<W extends string>(words: readonly W[]): W {
    const i = this.next
    const s = utf8(this.bytes(), true)
    const w = words.find((x) => x === s)
    if (w === undefined) throw new BadReplyError(this.script, `item ${i} is none of ${words.join(', ')}`)
    return w
  }

  opt<T>(read: () => T): T | undefined {
    return this.next < this.items.length ? read() : undefined
  }

  group<T>(width: number, count: number | undefined, read: () => T): T[] {
    const rest = this.items.length - this.next
    if (rest % width !== 0) throw new BadReplyError(this.script, `${rest} items do not make groups of ${width}`)
    const groups = rest / width
    if (count !== undefined && count !== groups) {
      throw new BadReplyError(this.script, `${groups} groups, but the reply counts ${count}`)
    }
    const out: T[] = []
    for (let g = 0; g < groups; g++) out.push(read())
    return out
  }

  finish(): void {
    if (this.next < this.items.length) {
      throw new BadReplyError(this.script, `\`${this.status}\` reply has more than ${this.next} items`)
    }
  }
}

/** UTF-8 → string; invalid sequences are `undefined` (fatal) or U+FFFD each (maximal subparts). */
function utf8(b: Uint8Array, fatal: boolean): string | undefined {
  let out = ''
  let i = 0
  while (i < b.length) {
    const c = b[i] ?? 0
    if (c < 0x80) {
      out += String.fromCharCode(c)
      i += 1
      continue
    }
    let need = 0
    let cp = 0
    let lo = 0x80
    let hi = 0xbf
    if (c >= 0xc2 && c <= 0xdf) [need, cp] = [1, c & 0x1f]
    else if (c >= 0xe0 && c <= 0xef) [need, cp, lo, hi] = [2, c & 0x0f, c === 0xe0 ? 0xa0 : 0x80, c === 0xed ? 0x9f : 0xbf]
    else if (c >= 0xf0 && c <= 0xf4) [need, cp, lo, hi] = [3, c & 0x07, c === 0xf0 ? 0x90 : 0x80, c === 0xf4 ? 0x8f : 0xbf]
    let j = i + 1
    let ok = need > 0
    while (ok && j <= i + need) {
      const d = b[j]
      if (d === undefined || d < lo || d > hi) ok = false
      else [cp, lo, hi, j] = [(cp << 6) | (d & 0x3f), 0x80, 0xbf, j + 1]
    }
    if (!ok) {
      if (fatal) return undefined
      // The broken sequence is one U+FFFD; decoding resumes at the byte that broke it.
      out += '\ufffd'
      i = j
      continue
    }
    out += String.fromCodePoint(cp)
    i = j
  }
  return out
}

/** string → UTF-8 (a lone surrogate as U+FFFD). */
function utf8Encode(s: string): Uint8Array {
  const out: number[] = []
  for (const ch of s) {
    let cp = ch.codePointAt(0) ?? 0xfffd
    if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd
    if (cp < 0x80) out.push(cp)
    else if (cp < 0x800) out.push(0xc0 | (cp >> 6), 0x80 | (cp & 0x3f))
    else if (cp < 0x10000) out.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f))
    else out.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f))
  }
  return Uint8Array.from(out)
}
