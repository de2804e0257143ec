// Natural batching, as the Rust client does it (crates/redis-atomic/src/client/batch): decisions of
// batchable scripts (`--- batch: yes`) that queue up for the same batch entry point on the same
// node (on a cluster: the same slot) leave together as one call of that entry point, generated
// from the same script bodies (`BATCH_DEFAULT`, ... in scripts.ts), which answers one reply per
// decision, each what the decision's own call would have answered at its place in the order.
//
// Per lane: a decision that finds fewer than `inFlight` calls of its lane in flight goes out at
// once, alone (no timer, no added latency at low load); otherwise it waits, and when a call of the
// lane finishes the waiting decisions leave together (at most `maxDecisions` and `maxBytes`), or,
// fewer than `minBatch` of them, as separate calls. Only decisions already waiting ride along.
//
// Everything else stays per decision: each decision is one attempt of its own retry loop
// (runner.ts), so a batch whose reply is lost fails each decision with an unknown outcome and each
// decision's own retry class decides whether it is sent again; an error element of the reply (a
// bad argument, WRONGTYPE) is that decision's error alone.
import { classify } from './classify.js'
import { slot } from './keys.js'
import type { ScriptArg, ScriptDef } from './scripts.js'

/** Natural batching's bounds. */
export interface BatchConfig {
  inFlight: number
  maxDecisions: number
  maxBytes: number
  minBatch: number
}

/** The Rust client's defaults. */
export const DEFAULT_BATCHING: BatchConfig = { inFlight: 4, maxDecisions: 64, maxBytes: 256 * 1024, minBatch: 3 }

/** Most keys plus arguments of one decision inside a batch (the entry point's bound). */
const MAX_DECISION_ITEMS = 4096

/** What the batcher did so far. */
export interface BatchCounts {
  decisions: number
  alone: number
  batches: number
  batched: number
  separate: number
}

/** How a batch's calls are sent: one script call, one attempt (NOSCRIPT handled). */
export type Send = (def: ScriptDef, keys: string[], args: ScriptArg[]) => Promise<unknown>

interface Entry {
  def: ScriptDef
  keys: string[]
  args: ScriptArg[]
  bytes: number
  resolve: (reply: unknown) => void
  reject: (e: unknown) => void
}

interface Lane {
  batch: ScriptDef
  busy: number
  waiting: Entry[]
}

/** The lanes of one client and their counts. */
export class Batcher {
  readonly counts: BatchCounts = { decisions: 0, alone: 0, batches: 0, batched: 0, separate: 0 }
  readonly #lanes = new Map<string, Lane>()

  constructor(readonly config: BatchConfig, readonly cluster: boolean, readonly send: Send) {}

  /** One attempt of a batchable decision: alone, or with the others waiting in its lane. */
  attempt(def: ScriptDef, keys: string[], args: ScriptArg[]): Promise<unknown> {
    const batch = def.batch as ScriptDef
    const id = this.cluster && keys.length > 0 ? `${batch.name}:${slot(keys[0] as string)}` : batch.name
    let lane = this.#lanes.get(id)
    if (lane === undefined) {
      lane = { batch, busy: 0, waiting: [] }
      this.#lanes.set(id, lane)
    }
    this.counts.decisions++
    if (lane.busy < this.config.inFlight || keys.length + args.length > MAX_DECISION_ITEMS) {
      this.counts.alone++
      return this.#call(lane, () => this.send(def, keys, args))
    }
    return new Promise((resolve, reject) => {
      (lane as Lane).waiting.push({ def, keys, args, bytes: size(keys, args), resolve, reject })
    })
  }

  /** `go()` as one call of `lane`: when it ends, the decisions waiting meanwhile leave. */
  #call<T>(lane: Lane, go: () => Promise<T>): Promise<T> {
    lane.busy++
    const p = go()
    const done = (): void => {
      lane.busy--
      this.#drain(lane)
    }
    p.then(done, done)
    return p
  }

  /** The decisions waiting in `lane` (as many as the bounds allow) leave together. */
  #drain(lane: Lane): void {
    if (lane.waiting.length === 0 || lane.busy >= this.config.inFlight) return
    let bytes = 0
    let n = 0
    while (n < lane.waiting.length && n < this.config.maxDecisions) {
      const b = (lane.waiting[n] as Entry).bytes
      if (n > 0 && bytes + b > this.config.maxBytes) break
      bytes += b
      n++
    }
    const group = lane.waiting.splice(0, n)
    if (group.length < this.config.minBatch) {
      this.counts.separate += group.length
      for (const e of group) this.#call(lane, () => this.send(e.def, e.keys, e.args)).then(e.resolve, e.reject)
      return
    }
    this.counts.batches++
    this.counts.batched += group.length
    this.#call(lane, () => this.#batch(lane.batch, group)).catch(() => {})
  }

  /** One call of the entry point for `group`; each decision settles with its own element. */
  async #batch(batch: ScriptDef, group: Entry[]): Promise<void> {
    const { keys, args } = layout(group)
    let reply: unknown
    try {
      reply = await this.send(batch, keys, args)
    } catch (e) {
      for (const d of group) d.reject(e)
      return
    }
    if (!Array.isArray(reply) || reply.length !== group.length) {
      const e = classify(new Error(`${batch.name}: bad reply: ${group.length} decisions, ${Array.isArray(reply) ? reply.length : 'no'} replies`), true)
      for (const d of group) d.reject(e)
      return
    }
    group.forEach((d, i) => {
      const r: unknown = reply[i]
      if (r instanceof Error) d.reject(classify(r, true))
      else d.resolve(r)
    })
  }
}

/** A decision's share of a batch's size: its keys' and arguments' bytes (strings by length). */
function size(keys: string[], args: ScriptArg[]): number {
  let n = 0
  for (const k of keys) n += k.length
  for (const a of args) n += typeof a === 'number' ? 8 : a.length
  return n
}

/**
 * The batch call's keys and arguments: every decision's keys in order; the arguments as runs of
 * one script each, `<name> <count>`, then each decision's arguments (preceded by `<key count>
 * <argument count>` for a script whose header lists are variadic).
 */
function layout(group: Entry[]): { keys: string[], args: ScriptArg[] } {
  const keys: string[] = []
  const args: ScriptArg[] = []
  let countAt = -1
  let current: ScriptDef | undefined
  for (const d of group) {
    if (d.def !== current) {
      current = d.def
      args.push(d.def.name, 0)
      countAt = args.length - 1
    }
    args[countAt] = (args[countAt] as number) + 1
    if (variadic(d.def)) args.push(d.keys.length, d.args.length)
    for (const k of d.keys) keys.push(k)
    for (const a of d.args) args.push(a)
  }
  return { keys, args }
}

function variadic(def: ScriptDef): boolean {
  return def.keys.some((k) => k.endsWith('...')) || def.args.some((a) => a.endsWith('...'))
}
