// One client's run for tools/peer-bench.py: rate-limiter-flexible over one ioredis connection
// (ioredis pipelines every in-flight command on it), or this repository's own Node package
// (`--limiter redis-atomic --package bindings/node`: its anchored window — a window opened by
// the identity's first request, RateLimiterRedis's own semantics (`SET NX EX` on the first hit)
// — over one pooled connection; `redis-atomic-fw`: its clock-aligned fixed window; both with
// natural batching, on by default, or `...-unbatched` without), `--concurrency` async workers each awaiting one `consume(identity, 1)` at a time,
// for `--seconds` after an unmeasured `--warmup`. Limits are never reached (10^9 points per
// 60 s), so every decision is an admission, as in `redis-atomic bench`; a refusal or an error
// fails the run. `--limiter redis-atomic-lock` / `redlock`: lock cycles instead (the package's
// `Locks.acquire` then `release()`, or node-redlock's `acquire` with no retries then
// `release()`, over one ioredis connection, 10 s leases), each worker cycling over
// `--identities` resources of its own, so no acquisition is refused. Prints one JSON line on
// stdout: decisions (or cycles), seconds, the rate, the share of one core the server used
// meanwhile (INFO cpu, over a separate ioredis connection), the client process's CPU per
// decision in µs (user + system, every thread: a measure a loaded machine disturbs less than
// decisions/s), versions, and for the package its `client.batchStats()` (warm-up included).
//
//   node bench.mjs --port 6379 --limiter redis --seconds 5 --concurrency 16 --identities 100000

import * as crypto from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import Redis from 'ioredis';
import { RateLimiterRedis, RateLimiterRedisNonAtomic } from 'rate-limiter-flexible';
import Redlock from 'redlock';

const require = createRequire(import.meta.url);
const LIMITERS = {
  // Fixed window: one Lua script (SET NX EX, INCRBY, PTTL) by EVALSHA; charges refused hits.
  redis: RateLimiterRedis,
  // The same fixed window as a MULTI/EXEC transaction of plain commands, no Lua.
  'redis-nonatomic': RateLimiterRedisNonAtomic,
  // The redis-atomic Node package (TypeScript on ioredis, its compiled dist/), from --package.
  'redis-atomic': 'anchored-window',
  'redis-atomic-fw': 'fixed-window',
  // The same two with natural batching off: one script call per decision.
  'redis-atomic-unbatched': 'anchored-window',
  'redis-atomic-fw-unbatched': 'fixed-window',
  // Lock cycles: the package's Locks, or node-redlock on the same one connection.
  'redis-atomic-lock': 'lock',
  redlock: 'lock',
  // The ceiling of any package on ioredis: no package code, calls of 8 (or 4) decisions, each
  // call's keys formed as the package forms a limiter's, its arguments laid out as the plain
  // batch lays them out (or, `-shared`, once), against a server script that decides nothing
  // (it answers one canned admission per key); --concurrency decisions in flight in all.
  'ceiling-2x8': [8, 'plain'],
  'ceiling-4x4': [4, 'plain'],
  'ceiling-shared-2x8': [8, 'shared'],
  'ceiling-shared-4x4': [4, 'shared'],
};
const TTL_MS = 10_000;

const { values: a } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string' },
    limiter: { type: 'string', default: 'redis' },
    seconds: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '0.25' },
    concurrency: { type: 'string', default: '16' },
    identities: { type: 'string', default: '100000' },
    package: { type: 'string' },
  },
});
const native = a.limiter.startsWith('redis-atomic');
const locking = LIMITERS[a.limiter] === 'lock';
if (!(a.limiter in LIMITERS) || !a.port || (native && !a.package)) {
  console.error(`usage: bench.mjs --port P --limiter ${Object.keys(LIMITERS).join('|')} [--package DIR]`);
  process.exit(2);
}
const seconds = Number(a.seconds);
const warmup = Number(a.warmup);
const concurrency = Number(a.concurrency);
const identities = Number(a.identities);

const redis = new Redis({ host: a.host, port: Number(a.port), lazyConnect: true, maxRetriesPerRequest: 0 });
await redis.connect();
// Read from node_modules (redlock's `exports` leave out its package.json).
const version = (name) => JSON.parse(readFileSync(new URL(`node_modules/${name}/package.json`, import.meta.url))).version;
const packages = { ioredis: version('ioredis') };
// consume(identity): resolves on an admission (or one lock cycle), or for a ceiling series to
// the number of decisions its call carried; a refusal throws.
let consume;
// Workers: one per decision in flight, or for a ceiling series one per call in flight.
let workers = concurrency;
// The package's batching counts (decisions per call), for the output.
let batchStats = () => undefined;
if (native) {
  const ra = require(resolve(a.package, 'dist/index.js'));
  packages['redis-atomic'] = require(resolve(a.package, 'package.json')).version;
  // A 10 s timeout keeps a starved shared machine measuring rather than failing (the package's
  // default of 1 s is for services, not for this harness).
  const batching = !a.limiter.endsWith('-unbatched');
  const client = await ra.Client.connect(`redis://${a.host}:${a.port}`, { poolSize: 1, timeoutMs: 10_000, batching });
  batchStats = () => client.batchStats();
  if (locking) {
    const locks = new ra.Locks(client, { namespace: 'ra-node-lock' });
    consume = async (resource) => {
      const lock = await locks.acquire(resource, TTL_MS);
      if (!lock.acquired) throw new Error(`refused: ${JSON.stringify(lock)}`);
      const r = await lock.release();
      if (!r.released) throw new Error(`not released: ${JSON.stringify(r)}`);
    };
  } else {
    const limiter = new ra.RateLimiter(client, {
      namespace: 'ra-node',
      limits: [{ algorithm: LIMITERS[a.limiter], limit: 1e9, periodMs: 60_000 }],
    });
    consume = async (id) => {
      const d = await limiter.consume(id);
      if (!d.allowed) throw new Error(`refused: ${JSON.stringify(d)}`);
    };
  }
} else if (a.limiter.startsWith('ceiling')) {
  const [size, layout] = LIMITERS[a.limiter];
  workers = Math.max(1, Math.round(concurrency / size));
  const sha = await redis.call('SCRIPT', 'LOAD',
    "local o = {} for i = 1, #KEYS do o[i] = {'allowed', 999999999, 60000000} end return o");
  // The tag as the package computes it (bindings/node/ts/keys.ts): one `crypto.hash` call where
  // Node has it, else a Hash object; a slower digest here would understate the ceiling.
  const tag = typeof crypto.hash === 'function'
    ? (id) => crypto.hash('sha256', id, 'hex').slice(0, 32)
    : (id) => crypto.createHash('sha256').update(id).digest('hex').slice(0, 32);
  consume = async () => {
    const keys = [];
    for (let i = 0; i < size; i++) {
      keys.push(`ceiling:rl:v1:{${tag(`user-${Math.floor(Math.random() * identities)}`)}}:aw:aw`);
    }
    const args = ['rl_anchored_window', size];
    if (layout === 'shared') args.push(1, '1000000000', '60000');
    else for (let i = 0; i < size; i++) args.push(1, '1000000000', '60000');
    const replies = await redis.call('evalsha', sha, size, ...keys, ...args);
    if (!Array.isArray(replies) || replies.length !== size) throw new Error('bad reply');
    return size;
  };
} else if (locking) {
  packages.redlock = version('redlock');
  // No retries: a refusal throws (it never happens: every worker has resources of its own).
  const redlock = new Redlock([redis], { retryCount: 0 });
  consume = async (resource) => {
    const lock = await redlock.acquire([`redlock:${resource}`], TTL_MS);
    await lock.release();
  };
} else {
  packages['rate-limiter-flexible'] = version('rate-limiter-flexible');
  const limiter = new LIMITERS[a.limiter]({ storeClient: redis, points: 1e9, duration: 60, keyPrefix: `rlflx-${a.limiter}` });
  consume = async (id) => {
    const res = await limiter.consume(id, 1).catch((e) => {
      throw e instanceof Error ? e : new Error(`refused: ${JSON.stringify(e)}`);
    });
    if (res.remainingPoints < 0) throw new Error('negative remaining points');
  };
}

// Drives every worker until `until` (ms, performance.now()); returns the decisions made.
async function drive(until) {
  let decisions = 0;
  const worker = async (w) => {
    for (let i = 0; performance.now() < until; i++) {
      const n = await consume(locking ? `res-${w}-${i % identities}` : `user-${Math.floor(Math.random() * identities)}`);
      decisions += typeof n === 'number' ? n : 1;
    }
  };
  await Promise.all(Array.from({ length: workers }, (_, w) => worker(w)));
  return decisions;
}

// CPU seconds the server has used (INFO cpu, user + system).
async function serverCpu() {
  const info = await redis.info('cpu');
  const field = (name) => Number(info.match(new RegExp(`^${name}:([0-9.]+)`, 'm'))?.[1] ?? NaN);
  return field('used_cpu_user') + field('used_cpu_sys');
}

try {
  await drive(performance.now() + warmup * 1000);
  const cpu = await serverCpu();
  const clientCpu = process.cpuUsage();
  const started = performance.now();
  const decisions = await drive(started + seconds * 1000);
  const secs = (performance.now() - started) / 1000;
  const used = process.cpuUsage(clientCpu);
  const serverCpuShare = ((await serverCpu()) - cpu) / secs;
  console.log(JSON.stringify({
    decisions,
    secs,
    rate: decisions / secs,
    server_cpu: serverCpuShare,
    client_cpu_us: (used.user + used.system) / decisions,
    runtime: `node ${process.version}`,
    packages,
    batch_stats: batchStats(),
  }));
} catch (e) {
  console.error(`node bench: ${e.message ?? e}`);
  process.exitCode = 1;
} finally {
  redis.disconnect();
  // The package's own connection stays open until its client closes: exit rather than wait.
  if (native) process.exit();
}
