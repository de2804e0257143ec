"use strict";
var __createBinding = (this && this.__createBinding) || (Object.create ? (function(o, m, k, k2) {
    if (k2 === undefined) k2 = k;
    var desc = Object.getOwnPropertyDescriptor(m, k);
    if (!desc || ("get" in desc ? !m.__esModule : desc.writable || desc.configurable)) {
      desc = { enumerable: true, get: function() { return m[k]; } };
    }
    Object.defineProperty(o, k2, desc);
}) : (function(o, m, k, k2) {
    if (k2 === undefined) k2 = k;
    o[k2] = m[k];
}));
var __setModuleDefault = (this && this.__setModuleDefault) || (Object.create ? (function(o, v) {
    Object.defineProperty(o, "default", { enumerable: true, value: v });
}) : function(o, v) {
    o["default"] = v;
});
var __importStar = (this && this.__importStar) || (function () {
    var ownKeys = function(o) {
        ownKeys = Object.getOwnPropertyNames || function (o) {
            var ar = [];
            for (var k in o) if (Object.prototype.hasOwnProperty.call(o, k)) ar[ar.length] = k;
            return ar;
        };
        return ownKeys(o);
    };
    return function (mod) {
        if (mod && mod.__esModule) return mod;
        var result = {};
        if (mod != null) for (var k = ownKeys(mod), i = 0; i < k.length; i++) if (k[i] !== "default") __createBinding(result, mod, k[i]);
        __setModuleDefault(result, mod);
        return result;
    };
})();
Object.defineProperty(exports, "__esModule", { value: true });
exports.stats = stats;
exports.inspect = inspect;
exports.deadLetters = deadLetters;
exports.requeueDead = requeueDead;
exports.purge = purge;
exports.reap = reap;
const s = __importStar(require("./scripts.js"));
/** Counts of jobs by state. */
async function stats(client, k) {
    const r = s.decodeQueueStats(await client.runner.call(s.QUEUE_STATS, [k.due, k.inflight, k.dead, k.done], []));
    return { ready: r.ready, scheduled: r.scheduled, running: r.running, expired: r.expired, dead: r.dead, acked: r.acked };
}
/** One job's state. */
async function inspect(client, k, jobId) {
    const r = s.decodeQueueInspect(await client.runner.call(s.QUEUE_INSPECT, [k.due, k.inflight, k.meta, k.errors], [jobId]));
    switch (r.outcome) {
        case 'queued': return { state: 'queued', dueInMs: r.dueInMs, deliveries: r.deliveries, lastFence: r.lastFence };
        case 'running': return { state: 'running', fence: r.fence, deliveries: r.deliveries, ttlMs: r.ttlMs, worker: r.worker };
        case 'dead': return { state: 'dead', deliveries: r.deliveries, error: r.error };
        case 'acked': return { state: 'acked', fence: r.fence };
        case 'unknown': return { state: 'unknown' };
    }
}
/** A page of dead letters, oldest first. */
async function deadLetters(client, k, start, count) {
    const r = s.decodeQueueDeadList(await client.runner.call(s.QUEUE_DEAD_LIST, [k.dead, k.meta, k.errors], [start, count]));
    return { total: r.total, letters: r.letters.map((l) => ({ id: l.id, deadAtMs: l.deadAtMs, deliveries: l.deliveries, error: l.error })) };
}
/** Moves dead letter `jobId` back to the queue, due after `delayMs`, its deliveries reset. */
async function requeueDead(client, k, jobId, delayMs) {
    const r = s.decodeQueueDeadRequeue(await client.runner.call(s.QUEUE_DEAD_REQUEUE, [k.dead, k.due, k.meta, k.errors], [jobId, delayMs]));
    return { requeued: r.outcome === 'requeued' };
}
/** Deletes dead letters (oldest first), each with its record, payload and last error. */
async function purge(client, k, olderThanMs, limit) {
    const r = s.decodeQueueDeadPurge(await client.runner.call(s.QUEUE_DEAD_PURGE, [k.dead, k.meta, k.payload, k.errors], [olderThanMs, limit]));
    return { purged: r.purged, remaining: r.remaining };
}
/** Returns at most `limit` expired leases to the queue (or the dead letters). */
async function reap(client, k, c, limit) {
    const args = [limit, c.maxDeliveries, c.maxDeadLetters, c.deadLetterRetentionMs];
    const r = s.decodeQueueReap(await client.runner.call(s.QUEUE_REAP, [k.inflight, k.due, k.dead, k.meta, k.payload, k.errors], args));
    return { requeued: r.requeued, dead: r.dead };
}
