// A small `redis-atomic serve` client in Node (built-in fetch, Node 18+).
//
// Takes a lock, does "work" fenced by it, releases it; enqueues a job, claims and acks it.
//
//   redis-atomic serve &          # prints http://127.0.0.1:7379
//   node serve_client.mjs http://127.0.0.1:7379 [TOKEN]
const base = process.argv[2] ?? "http://127.0.0.1:7379";
const token = process.argv[3];

async function post(path, body) {
  const headers = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  const r = await fetch(base + path, { method: "POST", headers, body: JSON.stringify(body) });
  const json = await r.json();
  // 409/429 are answers; problem+json bodies are errors.
  if (r.headers.get("content-type") === "application/problem+json") throw new Error(`${path}: ${json.detail}`);
  return { status: r.status, body: json };
}

const lock = await post("/v1/locks/node-example/acquire", { ttl_ms: 10000 });
if (lock.status === 409) throw new Error(`held; retry in ${lock.body.retry_after_ms} ms`);
console.log(`locked with fence ${lock.body.fence}`); // pass the fence to every write it protects
const released = await post("/v1/locks/node-example/release", { token: lock.body.token, fence: lock.body.fence });
if (released.status !== 200) throw new Error("release failed");

await post("/v1/queues/node-example/jobs", { id: "email-1", payload: "hello" });
const claimed = await post("/v1/queues/node-example/claim", { worker: "node", visibility_ms: 30000 });
for (const job of claimed.body.jobs) {
  console.log(`working on ${job.id}: ${job.payload}`);
  const acked = await post(`/v1/queues/node-example/jobs/${job.id}/ack`, { worker: "node", fence: job.fence });
  if (acked.status !== 200) throw new Error("ack failed");
}
console.log("ok");
