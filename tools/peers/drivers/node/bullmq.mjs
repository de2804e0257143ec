// BullMQ as a peer of the driver protocol's `queue-alo` row (docs/verify.md, "The libraries
// people use instead"), processing jobs by hand as its guide "Manually processing jobs" shows: a
// Worker without a processor, `getNextJob(token)` to claim, `job.moveToCompleted(value, token)`
// to ack, and `startStalledCheckTimer()` ("if you want to process the jobs manually you need to
// call this method to start the stalled checker").
//
// What BullMQ documents, and all the row judges: "Exactly once queue semantics, i.e., attempts to
// deliver every message exactly one time, but it will deliver at least once in the worst case
// scenario" (What is BullMQ) — no job lost; and a stalled job: "When a worker is not able to
// notify the queue that it is still working on a given job, that job is moved back to the
// waiting list [...] We then said that the job has stalled" (Stalled) — processed again, which
// at least once allows. "The ownership of the lock is determined by the "token" that is sent
// when getting the job" (Manually processing jobs): a completion with a token that no longer
// holds the job's lock is refused, so a job is completed once.
//
// Configuration, as "Going to production" recommends: the Worker's connection keeps ioredis'
// offline queue and `maxRetriesPerRequest: null` (BullMQ's default for a Worker: it waits out a
// disconnection, resending what was unanswered); the Queue's fails fast (`enableOfflineQueue:
// false`). Scaled to the row: the lock ("visibility window") is the row's `visibility_ms` and
// the stalled checker runs as often; `maxStalledCount` is 1000 (as the row gives our queue 1000
// deliveries) so a job the row's zombies and faults stall is not failed for it.
import { ErrorCode, Queue, Worker } from "bullmq";

/** A completion BullMQ refused: the token no longer holds the job's lock. */
const REFUSED = new Set([
  ErrorCode.JobNotExist, ErrorCode.JobLockNotExist, ErrorCode.JobNotInState, ErrorCode.JobLockMismatch,
]);
/** Job states as the vocabulary's `queue.inspect` outcomes. */
const STATES = {
  completed: "acked", failed: "dead", active: "running", waiting: "queued", delayed: "queued",
  prioritized: "queued", "waiting-children": "queued", unknown: "unknown",
};

export class BullPeer {
  queue = null;
  worker = null;
  server = null;
  jobs = new Map(); // token → the Job getNextJob returned

  async hello(msg) {
    await this.close();
    const url = new URL(msg.url);
    this.server = { host: url.hostname, port: Number(url.port), prefix: msg.namespace };
  }

  async close() {
    if (this.worker) await this.worker.close(true);
    if (this.queue) await this.queue.close();
    this.worker = null;
    this.queue = null;
    this.jobs.clear();
  }

  connect(name, visibilityMs) {
    const { host, port, prefix } = this.server;
    if (this.queue === null) {
      this.queue = new Queue(name, { prefix, connection: { host, port, enableOfflineQueue: false } });
      this.queue.on("error", () => {}); // reported per call
    }
    if (this.worker === null && visibilityMs !== undefined) {
      this.worker = new Worker(name, null, {
        prefix, connection: { host, port, maxRetriesPerRequest: null }, autorun: false,
        lockDuration: visibilityMs, stalledInterval: visibilityMs, maxStalledCount: 1000,
      });
      this.worker.on("error", () => {}); // reported per call
      this.worker.startStalledCheckTimer();
    }
  }

  async run(op, a) {
    this.connect(a.queue, a.visibility_ms);
    switch (op) {
      case "queue.enqueue":
        return this.enqueue(a);
      case "queue.claim":
        return this.claim(a.claim_id);
      case "queue.ack":
        return this.ack(a.handle);
      case "queue.inspect":
        return { outcome: STATES[await this.queue.getJobState(a.job_id)] ?? "unknown" };
      default:
        return { error: "bad_argument" };
    }
  }

  /** `Queue.add` with the job id: an id that exists is not added again, so either answer means
   * the job is in the queue (`enqueued`). Refused while disconnected: nothing was sent. */
  async enqueue(a) {
    try {
      await this.queue.add("verify", { payload: a.payload }, { jobId: a.job_id });
      return { outcome: "enqueued" };
    } catch (e) {
      return { error: /enableOfflineQueue/.test(String(e?.message)) ? "connection" : "outcome_unknown" };
    }
  }

  /** `getNextJob` with the claim id as the token, not blocking when nothing waits. */
  async claim(token) {
    let job;
    try {
      job = await this.worker.getNextJob(token, { block: false });
    } catch {
      return { error: "outcome_unknown" }; // it may have moved a job to active
    }
    if (!job) return { outcome: "empty" };
    this.jobs.set(token, job);
    return { outcome: "claimed", job_id: job.id, handle: token };
  }

  async ack(token) {
    const job = this.jobs.get(token);
    this.jobs.delete(token);
    try {
      await job.moveToCompleted("done", token, false);
      return { outcome: "acked" };
    } catch (e) {
      return REFUSED.has(e?.code) ? { outcome: "lost" } : { error: "outcome_unknown" };
    }
  }
}
