// Foreign-client proof for `redis-atomic serve` queues, Node's built-in fetch only.
//
// Producers enqueue JOBS ids, each id twice and concurrently: exactly one enqueue per id may say
// `enqueued: true`. Workers claim over HTTP and ack by fence until every job is acked: each id
// must be acked exactly once (no 409 on ack: the visibility timeout is long), and an acked id
// enqueued again is not re-added.
//
// usage: node serve_queue.mjs URL [JOBS] [WORKERS]
const [url, jobsArg, workersArg] = process.argv.slice(2);
const JOBS = Number(jobsArg ?? 200);
const WORKERS = Number(workersArg ?? 8);
const QUEUE = `node-q-${process.pid}`;
const deadline = Date.now() + 120_000;
const problems = [];

async function post(path, body) {
  const r = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: r.status, body: await r.json() };
}

const added = new Map();
async function produce(copy) {
  for (let i = 0; i < JOBS; i++) {
    const id = `job-${i}`;
    const { status, body } = await post(`/v1/queues/${QUEUE}/jobs`, { id, payload: `payload ${i} ✓` });
    if (status === 201 && body.enqueued === true) added.set(id, (added.get(id) ?? 0) + 1);
    else if (!(status === 200 && body.enqueued === false)) problems.push(`enqueue ${status} ${JSON.stringify(body)}`);
  }
}

const acked = new Map();
async function work(w) {
  while (acked.size < JOBS && Date.now() < deadline && problems.length === 0) {
    const { status, body } = await post(`/v1/queues/${QUEUE}/claim`, { worker: `w${w}`, visibility_ms: 60_000, max_jobs: 5 });
    if (status !== 200) { problems.push(`claim ${status} ${JSON.stringify(body)}`); return; }
    if (body.jobs.length === 0) { await new Promise((r) => setTimeout(r, 5)); continue; }
    for (const job of body.jobs) {
      if (job.payload !== `payload ${job.id.slice(4)} ✓`) problems.push(`payload ${job.payload}`);
      const a = await post(`/v1/queues/${QUEUE}/jobs/${job.id}/ack`, { worker: `w${w}`, fence: job.fence });
      if (a.status === 200 && a.body.acked === true) acked.set(job.id, (acked.get(job.id) ?? 0) + 1);
      else problems.push(`ack ${a.status} ${JSON.stringify(a.body)}`);
    }
  }
}

await Promise.all([produce(0), produce(1), ...Array.from({ length: WORKERS }, (_, w) => work(w))]);
for (let i = 0; i < JOBS; i++) {
  const id = `job-${i}`;
  if (added.get(id) !== 1) problems.push(`${id} added ${added.get(id) ?? 0} times`);
  if (acked.get(id) !== 1) problems.push(`${id} acked ${acked.get(id) ?? 0} times`);
}
const again = await post(`/v1/queues/${QUEUE}/jobs`, { id: "job-0", payload: "again" });
if (again.status !== 200 || again.body.enqueued !== false) problems.push(`re-enqueue of an acked id: ${again.status}`);
if (problems.length) {
  console.error(`FAIL: ${problems.slice(0, 5).join("; ")}`);
  process.exit(1);
}
console.log(`ok: ${JOBS} jobs, each enqueued once and acked exactly once`);
