"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.stats = stats;
exports.inspect = inspect;
exports.deadLetters = deadLetters;
exports.requeueDead = requeueDead;
exports.purge = purge;
exports.reap = reap;
const decoded_js_1 = require("./decoded.js");
/** Counts of jobs by state. */
async function stats(client, k) {
    const r = decoded_js_1.s.decodeQueueStats(await client.runner.call(decoded_js_1.s.QUEUE_STATS, [k.due, k.inflight, k.dead, k.done], []));
    return { ready: r.ready, scheduled: r.scheduled, running: r.running, expired: r.expired, dead: r.dead, acked: r.acked };
}
/** One job's state. */
async function inspect(client, k, jobId) {
    const r = decoded_js_1.s.decodeQueueInspect(await client.runner.call(decoded_js_1.s.QUEUE_INSPECT, [k.due, k.inflight, k.meta, k.errors], [jobId]));
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
    const r = decoded_js_1.s.decodeQueueDeadList(await client.runner.call(decoded_js_1.s.QUEUE_DEAD_LIST, [k.dead, k.meta, k.errors], [start, count]));
    return { total: r.total, letters: r.letters.map((l) => ({ id: l.id, deadAtMs: l.deadAtMs, deliveries: l.deliveries, error: l.error })) };
}
/** Moves dead letter `jobId` back to the queue, due after `delayMs`, its deliveries reset. */
async function requeueDead(client, k, jobId, delayMs) {
    const r = decoded_js_1.s.decodeQueueDeadRequeue(await client.runner.call(decoded_js_1.s.QUEUE_DEAD_REQUEUE, [k.dead, k.due, k.meta, k.errors], [jobId, delayMs]));
    return { requeued: r.outcome === 'requeued' };
}
/** Deletes dead letters (oldest first), each with its record, payload and last error. */
async function purge(client, k, olderThanMs, limit) {
    const r = decoded_js_1.s.decodeQueueDeadPurge(await client.runner.call(decoded_js_1.s.QUEUE_DEAD_PURGE, [k.dead, k.meta, k.payload, k.errors], [olderThanMs, limit]));
    return { purged: r.purged, remaining: r.remaining };
}
/** Returns at most `limit` expired leases to the queue (or the dead letters). */
async function reap(client, k, c, limit) {
    const args = [limit, c.maxDeliveries, c.maxDeadLetters, c.deadLetterRetentionMs];
    const r = decoded_js_1.s.decodeQueueReap(await client.runner.call(decoded_js_1.s.QUEUE_REAP, [k.inflight, k.due, k.dead, k.meta, k.payload, k.errors], args));
    return { requeued: r.requeued, dead: r.dead };
}
