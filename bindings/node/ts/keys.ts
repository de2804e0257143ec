// Key names and hash slots, as the Rust library builds them (keys.rs): every key of one
// operation shares the `{tag}`, so one slot; user-chosen ids become a digest, so user bytes never
// reach key names. The conformance vectors check both against every face.
import * as crypto from 'node:crypto'
import { badArgument } from './errors.js'

/** Longest accepted tag or part, in bytes. */
export const MAX_TAG_LEN = 512

/** `namespace` checked: non-empty, at most MAX_TAG_LEN bytes, no `{`, `}` or `:`. */
export function namespaceOf(namespace: unknown): string {
  if (typeof namespace !== 'string') throw badArgument('namespace must be a string')
  checkPart('namespace', namespace)
  if (namespace.includes(':')) throw badArgument("namespace must not contain ':'")
  return namespace
}

/** `<namespace>:<primitive>:v<schema>:{<tag>}` followed by `:<part>` for each part. */
export function key(namespace: string, primitive: string, schema: number, tag: string, parts: readonly string[] = []): string {
  checkPart('tag', tag)
  let k = `${namespace}:${primitive}:v${schema}:{${tag}}`
  for (const part of parts) {
    checkPart('key part', part)
    k += `:${part}`
  }
  return k
}

/** 128 bits of SHA-256 in hex of `value`, after checking it is 1..=max bytes. */
export function digest(value: string, max: number, what: string): string {
  const len = Buffer.byteLength(value)
  if (len === 0 || len > max) throw badArgument(`${what} must be 1..=${max} bytes, got ${len}`)
  return sha256hex(value).slice(0, 32)
}

function checkPart(what: string, value: string): void {
  if (value === '') throw badArgument(`${what} must not be empty`)
  const len = Buffer.byteLength(value)
  if (len > MAX_TAG_LEN) throw badArgument(`${what} is ${len} bytes, more than ${MAX_TAG_LEN}`)
  if (/[{}]/.test(value)) throw badArgument(`${what} must not contain '{' or '}' (they decide the cluster hash slot)`)
}

/** The cluster hash slot of `key`: CRC16/XMODEM of its hash tag (or the whole key), mod 16384. */
export function slot(key: string | Uint8Array): number {
  let data = typeof key === 'string' ? Buffer.from(key) : Buffer.from(key)
  const open = data.indexOf(0x7b)
  if (open >= 0) {
    const close = data.indexOf(0x7d, open + 1)
    if (close > open + 1) data = data.subarray(open + 1, close)
  }
  let crc = 0
  for (const byte of data) {
    crc ^= byte << 8
    for (let i = 0; i < 8; i++) crc = (crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1) & 0xffff
  }
  return crc % 16384
}

/** SHA-256 in hex: `crypto.hash` where Node has it (one call, no Hash object), else createHash. */
const sha256hex: (value: string) => string = typeof (crypto as { hash?: unknown }).hash === 'function'
  ? (value) => (crypto as unknown as { hash: (a: string, v: string, e: string) => string }).hash('sha256', value, 'hex')
  : (value) => crypto.createHash('sha256').update(value).digest('hex')
