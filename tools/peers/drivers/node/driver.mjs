// A peer driver for `redis-atomic verify --driver` (docs/verify.md, "Drivers"), in Node over
// ioredis with its defaults (it reconnects and resends unanswered commands on its own):
//
//   node driver.mjs redlock  node-redlock, row `mutex` (it has no fences). Its README: "The
//                            purpose of redlock is to provide exclusivity guarantees on a
//                            resource over a duration of time". Configured as its README
//                            suggests for a non-blocking attempt: "for many tasks it's
//                            sufficient to attempt a lock with `retryCount=0`, and treat a
//                            failure as the resource being "locked""; one Redis node.
//   node driver.mjs rlf      rate-limiter-flexible's RateLimiterRedis, row `ratelimit-win`
//                            (`points`: "Maximum number of points that can be consumed over
//                            duration"; the duration starts at a key's first consume: a window).
//                            Its default configuration (no insurance limiter, no blocking).
//   node driver.mjs bullmq   BullMQ, row `queue-alo` (bullmq.mjs beside this file).
import { createInterface } from "node:readline";
import Redis from "ioredis";
import Redlock, { ResourceLockedError } from "redlock";
import { RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import { BullPeer } from "./bullmq.mjs";

const peer = process.argv[2];
const ROWS = { redlock: ["mutex"], rlf: ["ratelimit-win"], bullmq: ["queue-alo"] }[peer];
if (!ROWS) {
  console.error("usage: node driver.mjs redlock|rlf|bullmq");
  process.exit(2);
}
console.log = console.error; // stdout is the protocol's: a library's log line goes to stderr
const bull = new BullPeer();

let redis = null;
let ns = "";
let redlock = null;
let limiter = null;
const locks = new Map(); // token → the Lock redlock returned

async function hello(msg) {
  if (msg.cluster) return { driver: peer, rows: [], unsupported: "standalone only" };
  if (peer === "bullmq") {
    await bull.hello(msg);
    return { driver: peer, rows: ROWS };
  }
  if (redis) redis.disconnect();
await bull.close();
  redis = new Redis(msg.url);
  redis.on("error", () => {}); // reported per call; an unhandled 'error' event would end the process
  ns = msg.namespace;
  redlock = new Redlock([redis], { retryCount: 0 });
  limiter = null;
  locks.clear();
  return { driver: peer, rows: ROWS };
}

/// Whether every vote against was another holder's lock (held), not an error (unknown).
function onlyHeld(e) {
  return (e.attempts ?? []).every((stats) =>
    [...(stats.votesAgainst?.values() ?? [])].every((err) => err instanceof ResourceLockedError));
}

async function run(op, a) {
  if (op.startsWith("queue.")) return bull.run(op, a);
  if (op === "lock.acquire") {
    try {
      const lock = await redlock.acquire([`${ns}:${a.resource}`], a.ttl_ms);
      locks.set(a.token, lock);
      return { outcome: "acquired", handle: a.token };
    } catch (e) {
      return onlyHeld(e) ? { outcome: "held" } : { error: "outcome_unknown" };
    }
  }
  if (op === "lock.release") {
    const lock = locks.get(a.handle);
    locks.delete(a.handle);
    try {
      await lock.release();
      return { outcome: "released" };
    } catch (e) {
      return onlyHeld(e) ? { outcome: "lost" } : { error: "outcome_unknown" };
    }
  }
  if (op === "ratelimit.consume") {
    limiter ??= new RateLimiterRedis({
      storeClient: redis, keyPrefix: ns, points: a.limit, duration: a.period_ms / 1000,
    });
    try {
      await limiter.consume(a.name, 1);
      return { outcome: "allowed" };
    } catch (e) {
      return e instanceof RateLimiterRes ? { outcome: "limited" } : { error: "outcome_unknown" };
    }
  }
  return { error: "bad_argument" };
}

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  const msg = JSON.parse(line);
  const answer = msg.op === "hello" ? await hello(msg) : await run(msg.op, msg.args ?? {});
  process.stdout.write(JSON.stringify(answer) + "\n");
}
if (redis) redis.disconnect();
await bull.close();
