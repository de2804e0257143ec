//! The queue drained with claim batches of N (`queue-drain-1`, `-10`, `-100`): what batching
//! the claim buys. Before each phase, unmeasured, the path's queue is filled with about as many
//! 128-byte jobs as the phase will take; then each task claims up to N jobs and acks each one.
//! Every script call is one decision (a claim, or the ack of one job), so with full batches
//! jobs/s = decisions/s × N / (N + 1) and script calls per job = 1 + 1/N. A task whose claim
//! finds the queue empty stops: the phase ends early rather than count empty claims (the next
//! fill is sized from the rate measured). A record is the `queue` entry's.

use super::queue::{self, raw_ack, raw_claim, PAYLOAD, VISIBILITY};
use super::workload::{BenchCtx, Conn, Decided, Path, PerTask, Record, Stop, Workload};
use futures::{StreamExt as _, TryStreamExt as _};
use redis_atomic::queue::{Ack, Claim, Enqueue, Job, Queue, RunAt};
use redis_atomic::script::registry::{QueueClaimJobsItem, QueueClaimReply};
use std::sync::atomic::{AtomicU64, Ordering};

/// Enqueues in flight while filling.
const FILL_CONCURRENCY: usize = 32;

struct Drain {
    ctx: BenchCtx,
    batch: usize,
    lib: Queue,
    raw: Queue,
    /// Job ids: unique per workload (a new one every round) and fill.
    nonce: u32,
    filled: AtomicU64,
    /// Each library task's leased jobs, acked one per call.
    held: PerTask<Vec<Job>>,
    /// Each raw task's leased jobs.
    raw_held: PerTask<Vec<QueueClaimJobsItem>>,
    /// Tasks whose last claim found the queue empty (reset by each fill).
    drained: PerTask<bool>,
}

pub(super) fn setup(ctx: BenchCtx, batch: usize) -> anyhow::Result<Box<dyn Workload>> {
    Ok(Box::new(Drain {
        lib: queue::queue(&ctx, Path::Library.name())?,
        raw: queue::queue(&ctx, Path::Raw.name())?,
        batch,
        nonce: rand::random(),
        filled: AtomicU64::new(0),
        held: PerTask::new(ctx.tasks),
        raw_held: PerTask::new(ctx.tasks),
        drained: PerTask::new(ctx.tasks),
        ctx,
    }))
}

impl Drain {
    fn queue(&self, path: Path) -> &Queue {
        if path == Path::Raw {
            &self.raw
        } else {
            &self.lib
        }
    }

    /// Tops `path`'s queue up to `jobs` ready jobs.
    async fn fill(&self, path: Path, jobs: u64) -> anyhow::Result<()> {
        let queue = self.queue(path);
        let missing = jobs.saturating_sub(queue.stats().await?.ready);
        let first = self.filled.fetch_add(missing, Ordering::Relaxed);
        futures::stream::iter(first..first + missing)
            .map(|n| async move {
                let id = format!("fill-{:08x}-{n}", self.nonce);
                let got = queue.enqueue(&id, &PAYLOAD, RunAt::Now).await?;
                expect!(got, Enqueue::Enqueued { .. });
                anyhow::Ok(())
            })
            .buffer_unordered(FILL_CONCURRENCY)
            .try_collect::<()>()
            .await
    }
}

impl Workload for Drain {
    fn stop(&self, task: usize, _next: u64) -> Stop {
        if !self.held.lock(task).is_empty() || !self.raw_held.lock(task).is_empty() {
            Stop::No
        } else if *self.drained.lock(task) {
            Stop::Now
        } else {
            Stop::AtDeadline
        }
    }

    fn prepare(&self, path: Path, decisions: u64) -> Decided<'_> {
        Box::pin(async move {
            let batch = self.batch as u64;
            let jobs = (decisions * batch / (batch + 1)).max(self.ctx.tasks as u64 * batch);
            self.fill(path, jobs).await?;
            for task in 0..self.ctx.tasks {
                *self.drained.lock(task) = false;
            }
            Ok(())
        })
    }

    fn library(&self, task: usize, _i: u64) -> Decided<'_> {
        Box::pin(async move {
            let job = self.held.lock(task).pop();
            if let Some(job) = job {
                expect!(job.ack().await?, Ack::Acked);
                return Ok(());
            }
            let got = self
                .lib
                .claim(&self.ctx.token, VISIBILITY, self.batch)
                .await?;
            match got {
                Claim::Claimed(jobs) => *self.held.lock(task) = jobs,
                Claim::Empty { .. } | Claim::Idle => *self.drained.lock(task) = true,
                other => anyhow::bail!("claim: {other:?}"),
            }
            Ok(())
        })
    }

    fn raw<'a>(&'a self, conn: &'a mut Conn, task: usize, _i: u64) -> Decided<'a> {
        Box::pin(async move {
            let job = self.raw_held.lock(task).pop();
            if let Some(job) = job {
                let worker = self.ctx.token.as_str();
                return raw_ack(conn, &self.raw, worker, &job.id, job.fence).await;
            }
            let token = self.ctx.token.as_str();
            match raw_claim(conn, &self.raw, token, self.batch).await? {
                QueueClaimReply::Claimed { jobs, .. } => *self.raw_held.lock(task) = jobs,
                QueueClaimReply::Empty { .. } | QueueClaimReply::Idle => {
                    *self.drained.lock(task) = true
                }
            }
            Ok(())
        })
    }

    fn record(&self) -> Record<'_> {
        Box::pin(queue::record(&self.ctx))
    }
}
