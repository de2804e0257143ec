//! The queue's benchmark: one queue per path shared by all tasks (many workers, one queue), each
//! task cycling enqueue of a fresh 128-byte job | claim of 1 | ack of the job it claimed. Every
//! task enqueues before it claims, so a claim never finds the queue empty; it may lease another
//! task's job, which is what workers do. A record is a queue holding one due job (its due, meta
//! and payload keys); `queue-drain-N` ([`super::drain`]) shares it.

use super::workload::{evalsha, ms, BenchCtx, Conn, Decided, Path, PerTask, Record, Workload};
use redis_atomic::queue::{Ack, Claim, Enqueue, Job, Queue, QueueConfig, RunAt};
use redis_atomic::script::registry::{
    QueueAckReply, QueueClaimJobsItem, QueueClaimReply, QueueEnqueueReply, QUEUE_ACK, QUEUE_CLAIM,
    QUEUE_ENQUEUE,
};
use redis_atomic::{Arg, Fence};
use std::time::Duration;

pub(super) const PAYLOAD: [u8; 128] = [b'j'; 128];
pub(super) const VISIBILITY: Duration = Duration::from_secs(30);

struct QueueBench {
    ctx: BenchCtx,
    lib: Queue,
    raw: Queue,
    worker: redis_atomic::OwnerToken,
    /// Each library task's leased job between its claim and its ack.
    leased: PerTask<Option<Job>>,
    /// Each raw task's leased job.
    raw_leased: PerTask<Option<QueueClaimJobsItem>>,
}

/// The queue `name` (a path's name, or the record's) under the entry's keyspace.
pub(super) fn queue(ctx: &BenchCtx, name: &str) -> anyhow::Result<Queue> {
    let (ks, config) = (&ctx.keyspace, QueueConfig::default());
    Ok(Queue::new(ctx.client.clone(), ks, name, config)?)
}

pub(super) fn setup(ctx: BenchCtx) -> anyhow::Result<Box<dyn Workload>> {
    Ok(Box::new(QueueBench {
        lib: queue(&ctx, Path::Library.name())?,
        raw: queue(&ctx, Path::Raw.name())?,
        worker: ctx.token.clone(),
        leased: PerTask::new(ctx.tasks),
        raw_leased: PerTask::new(ctx.tasks),
        ctx,
    }))
}

/// The job a claim of one leased (it never finds the queue empty: see the module doc).
fn one<T>(job: Option<T>) -> anyhow::Result<T> {
    job.ok_or_else(|| anyhow::anyhow!("claimed no job"))
}

fn job_id(task: usize, i: u64) -> String {
    format!("job-{task}-{}", i / 3)
}

/// Raw claim of up to `batch` jobs of `queue` for `worker`: what [`Queue::claim`] sends.
pub(super) async fn raw_claim(
    conn: &mut Conn,
    queue: &Queue,
    worker: &str,
    batch: usize,
) -> anyhow::Result<QueueClaimReply> {
    let k = queue.keys();
    let keys = [
        k.due.as_str(),
        &k.inflight,
        &k.dead,
        &k.meta,
        &k.payload,
        &k.errors,
    ];
    let config = queue.config();
    let args = [
        worker.into(),
        ms(VISIBILITY),
        Arg::Int(i64::try_from(batch)?),
        Arg::Int(i64::from(config.max_deliveries.get())),
        Arg::Int(i64::from(config.max_dead_letters.get())),
        ms(config.dead_letter_retention),
    ];
    evalsha(conn, &QUEUE_CLAIM, keys, args).await
}

/// Raw ack of job `id` leased to `worker` with `fence`: what [`Queue::ack`] sends.
pub(super) async fn raw_ack(
    conn: &mut Conn,
    queue: &Queue,
    worker: &str,
    id: &str,
    fence: Fence,
) -> anyhow::Result<()> {
    let k = queue.keys();
    let keys = [k.inflight.as_str(), &k.meta, &k.payload, &k.errors, &k.done];
    let args = [
        id.into(),
        worker.into(),
        Arg::Int(i64::try_from(fence.0)?),
        ms(queue.config().dedup_window),
    ];
    let got = evalsha(conn, &QUEUE_ACK, keys, args).await?;
    expect!(got, QueueAckReply::Acked);
    Ok(())
}

/// One record: a queue `emails` holding one due job; its due, meta and payload keys.
pub(super) async fn record(ctx: &BenchCtx) -> anyhow::Result<Vec<String>> {
    let queue = queue(ctx, "emails")?;
    let got = queue
        .enqueue("job-4b1c-9f0e-7a2d", &PAYLOAD, RunAt::Now)
        .await?;
    expect!(got, Enqueue::Enqueued { .. });
    let k = queue.keys();
    Ok(vec![k.due.clone(), k.meta.clone(), k.payload.clone()])
}

impl Workload for QueueBench {
    fn cycle(&self) -> u64 {
        3
    }

    fn library(&self, task: usize, i: u64) -> Decided<'_> {
        Box::pin(async move {
            match i % 3 {
                0 => {
                    let got = self
                        .lib
                        .enqueue(&job_id(task, i), &PAYLOAD, RunAt::Now)
                        .await?;
                    expect!(got, Enqueue::Enqueued { .. });
                }
                1 => {
                    let got = self.lib.claim(&self.worker, VISIBILITY, 1).await?;
                    let job = expect!(got, Claim::Claimed(mut jobs) => jobs.pop());
                    self.leased.put(task, one(job)?);
                }
                _ => expect!(self.leased.take(task)?.ack().await?, Ack::Acked),
            }
            Ok(())
        })
    }

    fn raw<'a>(&'a self, conn: &'a mut Conn, task: usize, i: u64) -> Decided<'a> {
        Box::pin(async move {
            match i % 3 {
                0 => {
                    let k = self.raw.keys();
                    let keys = [k.due.as_str(), &k.meta, &k.payload];
                    let id = job_id(task, i);
                    let args = [
                        id.as_str().into(),
                        PAYLOAD[..].into(),
                        Arg::Int(0),
                        Arg::Int(0),
                    ];
                    let got = evalsha(conn, &QUEUE_ENQUEUE, keys, args).await?;
                    expect!(got, QueueEnqueueReply::Enqueued { .. });
                }
                1 => {
                    let got = raw_claim(conn, &self.raw, self.worker.as_str(), 1).await?;
                    let job = expect!(got, QueueClaimReply::Claimed { mut jobs, .. } => jobs.pop());
                    self.raw_leased.put(task, one(job)?);
                }
                _ => {
                    let job = self.raw_leased.take(task)?;
                    raw_ack(conn, &self.raw, self.worker.as_str(), &job.id, job.fence).await?;
                }
            }
            Ok(())
        })
    }

    fn record(&self) -> Record<'_> {
        Box::pin(record(&self.ctx))
    }
}
