//! The queue's benchmark: one queue per path shared by all tasks (many workers, one queue), each
//! task cycling enqueue of a fresh 128-byte job | claim of 1 | ack of the job it claimed. Every
//! task enqueues before it claims, so a claim never finds the queue empty; it may lease another
//! task's job, which is what workers do. Both paths succeed on every decision or the run fails.
//! A record is a queue holding one due job (its due, meta and payload keys): queue keys have no
//! TTL, so `cleanup` deletes them.

use super::{expect_status, BenchCtx, Workload};
use futures::future::BoxFuture;
use redis::aio::MultiplexedConnection;
use redis::Value;
use redis_atomic::lease::OwnerToken;
use redis_atomic::queue::{Ack, Claim, Enqueue, Job, Queue, QueueConfig, QueueKeys, RunAt};
use redis_atomic::script::registry::{QUEUE_ACK, QUEUE_CLAIM, QUEUE_ENQUEUE};
use std::sync::Mutex;
use std::time::Duration;

const PAYLOAD: [u8; 128] = [b'j'; 128];
const VISIBILITY: Duration = Duration::from_secs(30);

/// Every key of a queue (for `UNLINK`).
fn all_keys(k: &QueueKeys) -> [&str; 7] {
    [
        &k.due,
        &k.inflight,
        &k.dead,
        &k.done,
        &k.meta,
        &k.payload,
        &k.errors,
    ]
}

/// A raw lease: job id and fence, as the claim reply gave them.
type RawLease = (Vec<u8>, Vec<u8>);

struct QueueBench {
    ctx: BenchCtx,
    lib: Queue,
    /// The library path's worker.
    worker: OwnerToken,
    /// The raw path's queue: only its keys are used.
    raw: Queue,
    config: QueueConfig,
    /// Each library task's leased job between its claim and its ack.
    leased: Vec<Mutex<Option<Job>>>,
    /// Each raw task's leased job id and fence.
    raw_leased: Vec<Mutex<Option<RawLease>>>,
}

pub(super) fn setup(ctx: BenchCtx) -> BoxFuture<'static, anyhow::Result<Box<dyn Workload>>> {
    Box::pin(async move {
        let config = QueueConfig::default();
        let queue = |name| Queue::new(ctx.client.clone(), &ctx.keyspace, name, config.clone());
        let bench = QueueBench {
            lib: queue("lib")?,
            worker: OwnerToken::new("lib")?,
            raw: queue("raw")?,
            config,
            leased: (0..ctx.tasks).map(|_| Mutex::new(None)).collect(),
            raw_leased: (0..ctx.tasks).map(|_| Mutex::new(None)).collect(),
            ctx,
        };
        Ok(Box::new(bench) as Box<dyn Workload>)
    })
}

fn job_id(task: usize, i: u64) -> String {
    format!("job-{task}-{}", i / 3)
}

fn take<T>(slot: &Mutex<Option<T>>) -> anyhow::Result<T> {
    let taken = slot.lock().unwrap_or_else(|p| p.into_inner()).take();
    taken.ok_or_else(|| anyhow::anyhow!("no leased job to ack"))
}

fn put<T>(slot: &Mutex<Option<T>>, value: T) {
    *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(value);
}

/// `(job id, fence)` of a raw `claimed` reply holding one job:
/// `{'claimed', now_ms, 1, job_id, fence, deliveries, payload}`.
fn claimed_job(reply: &Value) -> Option<RawLease> {
    let Value::Array(items) = reply else {
        return None;
    };
    match (items.get(2), items.get(3), items.get(4)) {
        (Some(Value::Int(1)), Some(Value::BulkString(id)), Some(fence)) => {
            let fence = match fence {
                Value::Int(f) => f.to_string().into_bytes(),
                Value::BulkString(f) => f.clone(),
                _ => return None,
            };
            Some((id.clone(), fence))
        }
        _ => None,
    }
}

impl QueueBench {
    async fn lib_step(&self, task: usize, i: u64) -> anyhow::Result<()> {
        let slot = &self.leased[task];
        match i % 3 {
            0 => {
                let got = self
                    .lib
                    .enqueue(&job_id(task, i), &PAYLOAD, RunAt::Now)
                    .await?;
                anyhow::ensure!(matches!(got, Enqueue::Enqueued { .. }), "enqueue: {got:?}");
            }
            1 => {
                let claimed = self.lib.claim(&self.worker, VISIBILITY, 1).await?;
                let Claim::Claimed(mut jobs) = claimed else {
                    anyhow::bail!("claim found the queue empty");
                };
                let job = jobs
                    .pop()
                    .ok_or_else(|| anyhow::anyhow!("claimed no job"))?;
                put(slot, job);
            }
            _ => {
                let got = take(slot)?.ack().await?;
                anyhow::ensure!(matches!(got, Ack::Acked), "ack: {got:?}");
            }
        }
        Ok(())
    }

    async fn raw_step(
        &self,
        conn: &mut MultiplexedConnection,
        task: usize,
        i: u64,
    ) -> anyhow::Result<()> {
        let k = self.raw.keys();
        let slot = &self.raw_leased[task];
        let mut cmd = redis::cmd("EVALSHA");
        match i % 3 {
            0 => {
                cmd.arg(QUEUE_ENQUEUE.sha1).arg(3);
                cmd.arg(&k.due).arg(&k.meta).arg(&k.payload);
                cmd.arg(job_id(task, i)).arg(&PAYLOAD[..]).arg(0).arg(0);
                expect_status(cmd.query_async(conn).await?, "enqueued")
            }
            1 => {
                cmd.arg(QUEUE_CLAIM.sha1).arg(6);
                cmd.arg(&k.due).arg(&k.inflight).arg(&k.dead);
                cmd.arg(&k.meta).arg(&k.payload).arg(&k.errors);
                let max_deliveries = self.config.max_deliveries.get();
                cmd.arg("raw").arg(VISIBILITY.as_millis() as u64).arg(1);
                cmd.arg(max_deliveries);
                let reply: Value = cmd.query_async(conn).await?;
                let job = claimed_job(&reply);
                expect_status(reply, "claimed")?;
                put(slot, job.ok_or_else(|| anyhow::anyhow!("claimed no job"))?);
                Ok(())
            }
            _ => {
                let (id, fence) = take(slot)?;
                let keep = self.config.dedup_window.as_millis() as u64;
                cmd.arg(QUEUE_ACK.sha1).arg(5);
                cmd.arg(&k.inflight).arg(&k.meta).arg(&k.payload);
                cmd.arg(&k.errors).arg(&k.done);
                cmd.arg(id).arg(fence).arg(keep);
                expect_status(cmd.query_async(conn).await?, "acked")
            }
        }
    }
}

impl Workload for QueueBench {
    fn cycle(&self) -> u64 {
        3
    }

    fn library(&self, task: usize, i: u64) -> BoxFuture<'_, anyhow::Result<()>> {
        Box::pin(self.lib_step(task, i))
    }

    fn raw<'a>(
        &'a self,
        conn: &'a mut MultiplexedConnection,
        task: usize,
        i: u64,
    ) -> BoxFuture<'a, anyhow::Result<()>> {
        Box::pin(self.raw_step(conn, task, i))
    }

    fn record(&self) -> BoxFuture<'_, anyhow::Result<Vec<String>>> {
        Box::pin(async move {
            let ks = &self.ctx.keyspace;
            let queue = Queue::new(self.ctx.client.clone(), ks, "emails", self.config.clone())?;
            let got = queue
                .enqueue("job-4b1c-9f0e-7a2d", &PAYLOAD, RunAt::Now)
                .await?;
            anyhow::ensure!(matches!(got, Enqueue::Enqueued { .. }), "enqueue: {got:?}");
            let k = queue.keys();
            Ok(vec![k.due.clone(), k.meta.clone(), k.payload.clone()])
        })
    }

    fn cleanup(&self, _tasks: usize) -> BoxFuture<'_, anyhow::Result<()>> {
        Box::pin(async move {
            let ks = &self.ctx.keyspace;
            let emails = Queue::new(self.ctx.client.clone(), ks, "emails", self.config.clone())?;
            let mut del = redis::cmd("UNLINK");
            for queue in [&self.lib, &self.raw, &emails] {
                del.arg(&all_keys(queue.keys())[..]);
            }
            self.ctx.client.command(&del).await?;
            Ok(())
        })
    }
}
