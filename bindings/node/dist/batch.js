"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.Batcher = exports.DEFAULT_BATCHING = void 0;
// Natural batching, as the Rust client does it (crates/redis-atomic/src/client/batch): decisions of
// batchable scripts (`--- batch: yes`) that queue up for the same batch entry point on the same
// node (on a cluster: the same slot) leave together as one call of that entry point, generated
// from the same script bodies (`BATCH_DEFAULT`, ... in scripts.ts), which answers one reply per
// decision, each what the decision's own call would have answered at its place in the order.
//
// Per lane, per turn: a decision gathers with the others made in the same turn of the event loop
// (until the turn's microtasks are done: the replies ioredis parses from one read resolve their
// callers in one such turn, and those callers' next decisions arrive in it). Then, while fewer
// than `inFlight` calls of the lane are in flight, the gathered decisions leave: as one call of
// the entry point (at most `maxDecisions` and `maxBytes` each), one alone as its own call, or,
// fewer than `minBatch`, as separate calls; what finds `inFlight` calls in flight waits, and
// leaves with the turn in which a call of the lane finishes. A lane with nothing in flight sends
// a large group as two calls, so the server runs one while the client reads the other's
// replies; the two groups then keep alternating. Nothing waits for a timer: a decision for an
// idle lane leaves as soon as the code that made it yields (awaits or returns), not at once.
//
// Why per turn and not, as Rust and Go do, at once while a slot is free: on one Node thread the
// client's own CPU is usually the limit, and a call's fixed work (ioredis's Command and timeout
// timer, a socket write, the reply's promise) is much of a decision's; taking free slots one
// decision at a time sent the first decisions of every turn alone (docs/performance.md, "Node").
//
// Everything else stays per decision: each decision is one attempt of its own retry loop
// (runner.ts), so a batch whose reply is lost fails each decision with an unknown outcome and each
// decision's own retry class decides whether it is sent again; an error element of the reply (a
// bad argument, WRONGTYPE) is that decision's error alone.
const classify_js_1 = require("./classify.js");
const keys_js_1 = require("./keys.js");
/** The Rust client's bounds. */
exports.DEFAULT_BATCHING = { inFlight: 4, maxDecisions: 64, maxBytes: 256 * 1024, minBatch: 3 };
const RESOLVED = Promise.resolve();
/** Most keys plus arguments of one decision inside a batch (the entry point's bound). */
const MAX_DECISION_ITEMS = 4096;
/** The lanes of one client and their counts. */
class Batcher {
    config;
    cluster;
    send;
    counts = { decisions: 0, alone: 0, batches: 0, batched: 0, separate: 0 };
    #lanes = new Map();
    constructor(config, cluster, send) {
        this.config = config;
        this.cluster = cluster;
        this.send = send;
    }
    /** One attempt of a batchable decision: alone, or with the others waiting in its lane. */
    attempt(def, keys, args) {
        const batch = def.batch;
        const id = this.cluster && keys.length > 0 ? `${batch.name}:${(0, keys_js_1.slot)(keys[0])}` : batch.name;
        let lane = this.#lanes.get(id);
        if (lane === undefined) {
            lane = { batch, busy: 0, waiting: [], gathering: false };
            this.#lanes.set(id, lane);
        }
        this.counts.decisions++;
        if (keys.length + args.length > MAX_DECISION_ITEMS) {
            this.counts.alone++;
            return this.#call(lane, this.send(def, keys, args));
        }
        const waiting = lane;
        this.#gather(waiting);
        return new Promise((resolve, reject) => {
            waiting.waiting.push({ def, keys, args, bytes: size(keys, args), resolve, reject });
        });
    }
    /** Queues `lane`'s flush at the end of this turn's microtasks, unless one is queued already. */
    #gather(lane) {
        if (lane.gathering)
            return;
        lane.gathering = true;
        // A resolved promise's reaction, not queueMicrotask (which wraps each in an AsyncResource).
        void RESOLVED.then(() => {
            lane.gathering = false;
            this.#drain(lane);
        });
    }
    /** `p` as one call of `lane`: when it ends, what waits leaves with this turn's newcomers. */
    #call(lane, p) {
        lane.busy++;
        const done = () => {
            lane.busy--;
            if (lane.waiting.length > 0)
                this.#gather(lane);
        };
        p.then(done, done);
        return p;
    }
    /**
     * What waits in `lane` leaves, in groups (each at most `maxDecisions` and `maxBytes`), while
     * fewer than `inFlight` calls of the lane are in flight. A lane with nothing in flight sends a
     * large group as two calls, so the server runs one while the client reads the other's replies
     * (one call of everything alternates with idle time on both sides); the two then keep
     * alternating, each turn's returning decisions leaving as one call.
     */
    #drain(lane) {
        const { inFlight, minBatch } = this.config;
        while (lane.waiting.length > 0 && lane.busy < inFlight) {
            const w = lane.waiting.length;
            const half = lane.busy === 0 && inFlight > 1 && w >= 2 * minBatch;
            const group = this.#take(lane, half ? Math.ceil(w / 2) : w);
            if (group.length < minBatch) {
                if (group.length === 1)
                    this.counts.alone++;
                else
                    this.counts.separate += group.length;
                for (const e of group)
                    this.#call(lane, this.send(e.def, e.keys, e.args)).then(e.resolve, e.reject);
                continue;
            }
            this.counts.batches++;
            this.counts.batched += group.length;
            this.#call(lane, this.#batch(lane.batch, group));
        }
    }
    /** The next group from the front of `lane`'s queue: at most `most`, `maxDecisions`, `maxBytes`. */
    #take(lane, most) {
        const limit = Math.min(most, this.config.maxDecisions);
        let bytes = 0;
        let n = 0;
        while (n < lane.waiting.length && n < limit) {
            const b = lane.waiting[n].bytes;
            if (n > 0 && bytes + b > this.config.maxBytes)
                break;
            bytes += b;
            n++;
        }
        if (n === lane.waiting.length) {
            const group = lane.waiting;
            lane.waiting = [];
            return group;
        }
        return lane.waiting.splice(0, n);
    }
    /** One call of the entry point for `group`; each decision settles with its own element. */
    async #batch(batch, group) {
        const { keys, args } = layout(group);
        let reply;
        try {
            reply = await this.send(batch, keys, args);
        }
        catch (e) {
            for (const d of group)
                d.reject(e);
            return;
        }
        if (!Array.isArray(reply) || reply.length !== group.length) {
            const e = (0, classify_js_1.classify)(new Error(`${batch.name}: bad reply: ${group.length} decisions, ${Array.isArray(reply) ? reply.length : 'no'} replies`), true);
            for (const d of group)
                d.reject(e);
            return;
        }
        group.forEach((d, i) => {
            const r = reply[i];
            if (r instanceof Error)
                d.reject((0, classify_js_1.classify)(r, true));
            else
                d.resolve(r);
        });
    }
}
exports.Batcher = Batcher;
/** A decision's share of a batch's size: its keys' and arguments' bytes (strings by length). */
function size(keys, args) {
    let n = 0;
    for (const k of keys)
        n += k.length;
    for (const a of args)
        n += typeof a === 'number' ? 8 : a.length;
    return n;
}
/**
 * The batch call's keys and arguments: every decision's keys in order; the arguments as runs of
 * one script each, `<name> <count>`, then each decision's arguments (preceded by `<key count>
 * <argument count>` for a script whose header lists are variadic).
 */
function layout(group) {
    const keys = [];
    const args = [];
    let countAt = -1;
    let current;
    for (const d of group) {
        if (d.def !== current) {
            current = d.def;
            args.push(d.def.name, 0);
            countAt = args.length - 1;
        }
        args[countAt] = args[countAt] + 1;
        if (variadic(d.def))
            args.push(d.keys.length, d.args.length);
        for (const k of d.keys)
            keys.push(k);
        for (const a of d.args)
            args.push(a);
    }
    return { keys, args };
}
function variadic(def) {
    return def.keys.some((k) => k.endsWith('...')) || def.args.some((a) => a.endsWith('...'));
}
