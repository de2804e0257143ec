// The `replies` vectors through the generated TypeScript decoders (tools/codegen-check.sh).
// Expected field names are the header's (units appended); the bindings spell them camelCase, and
// a field named `outcome` as `outcomeValue` (codegen/foreign.rs). Error replies (`{"error"}`) are
// the runtime's classification, not a decoder's: skipped here, counted.
import { readFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'

const [modPath, vectorsPath] = process.argv.slice(2)
const { DECODERS, BadReplyError } = await import(pathToFileURL(modPath).href)
const cases = JSON.parse(readFileSync(vectorsPath, 'utf8')).replies
const camel = (k) => (k === 'outcome' ? 'outcomeValue' : k.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase()))
const raw = (v) => Array.isArray(v) ? v.map(raw)
  : v !== null && typeof v === 'object' ? Uint8Array.from(Buffer.from(v.hex, 'hex')) : v
const norm = (v) => v instanceof Uint8Array ? { hex: Buffer.from(v).toString('hex') }
  : Array.isArray(v) ? v.map(norm)
  : v !== null && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, norm(x)])) : v
const expected = (v, bytes) => Array.isArray(v) ? v.map((x) => expected(x))
  : v !== null && typeof v === 'object' && !('hex' in v) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [camel(k), expected(x)])) : v
let failed = 0, ran = 0, skipped = 0
for (const c of cases) {
  if (c.raw !== null && typeof c.raw === 'object' && !Array.isArray(c.raw) && 'error' in c.raw) { skipped++; continue }
  ran++
  let got
  try {
    const r = DECODERS[c.script](raw(c.raw))
    got = { status: r.outcome, fields: norm(Object.fromEntries(Object.entries(r).filter(([k]) => k !== 'outcome'))) }
  } catch (e) {
    got = { error: e instanceof BadReplyError ? e.code : String(e) }
  }
  const want = c.error ? { error: c.error } : { status: c.status, fields: expected(c.fields) }
  // bytes fields are compared as bytes: a plain expected string becomes its UTF-8 hex when the face holds bytes
  const fix = (w, g) => typeof w === 'string' && g && typeof g === 'object' && 'hex' in g ? { hex: Buffer.from(w).toString('hex') }
    : Array.isArray(w) ? w.map((x, i) => fix(x, g?.[i]))
    : w !== null && typeof w === 'object' ? Object.fromEntries(Object.entries(w).map(([k, x]) => [k, fix(x, g?.[k])])) : w
  const w = fix(want, got)
  if (JSON.stringify(w) !== JSON.stringify(got, Object.keys(got).length ? undefined : undefined) && !deepEq(w, got)) {
    failed++
    console.error(`FAIL ${c.id}: expected ${JSON.stringify(w)}, got ${JSON.stringify(got)}`)
  }
}
function deepEq(a, b) {
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEq(x, b[i]))
  if (a !== null && typeof a === 'object') {
    if (b === null || typeof b !== 'object') return false
    const ka = Object.keys(a).sort(), kb = Object.keys(b).sort()
    return deepEq(ka, kb) && ka.every((k) => deepEq(a[k], b[k]))
  }
  return a === b
}
console.log(`codegen-check ts: ${ran} reply vectors, ${failed} failed, ${skipped} error replies left to the runtime`)
if (failed > 0 || ran === 0) process.exit(1)
