//! The queue's check: a producer enqueues jobs for the whole run while many workers claim them in
//! batches and ack them; now and then a worker stalls past its visibility timeout before acking,
//! so its jobs are claimed again and its late acks must be refused.
//!
//! Violations counted: a job whose accepted acks are not exactly one (after a bounded drain, so a
//! lost job counts too), and two leases of one job live at once (a claim, on the server's clock,
//! before the previous lease's deadline, when that lease was not nacked). With `--sabotage` the
//! workers fetch and remove in two steps (ZRANGEBYSCORE, then ZREM), the bug the queue exists to
//! prevent: jobs are processed twice.
//!
//! Under faults: an enqueue with an unknown outcome is repeated (enqueue is idempotent per id); a
//! claim with an unknown outcome is dropped (its jobs come back after the visibility timeout); an
//! ack with an unknown outcome may stand for the job's one accepted ack. When a fault may lose
//! acknowledged writes (primary kill), only what survives it is checked: fences never repeat.

use super::{CheckCtx, CheckReport};
use futures::future::BoxFuture;
use redis_atomic::lease::OwnerToken;
use redis_atomic::queue::{Ack, Claim, Queue, QueueConfig, RunAt};
use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const INVARIANT: &str = "each job acked once, never two live leases";
const VIS: Duration = Duration::from_millis(200);

/// Per job: accepted acks, acks with an unknown outcome, and (fence, server ms) of each claim.
type JobLog = (u64, u64, Vec<(u64, u64)>);

#[derive(Default)]
struct Shared {
    jobs: Mutex<HashMap<String, JobLog>>,
    ops: AtomicU64,
    stop: AtomicBool,
}

impl Shared {
    fn log(&self, id: &str, f: impl FnOnce(&mut JobLog)) {
        f(self
            .jobs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(id.to_string())
            .or_default());
    }

    fn op(&self, ctx: &CheckCtx) {
        self.ops.fetch_add(1, Ordering::Relaxed);
        ctx.progress.inc(1);
    }
}

pub(super) fn run(ctx: CheckCtx) -> BoxFuture<'static, anyhow::Result<CheckReport>> {
    Box::pin(async move {
        let config =
            QueueConfig::default().max_deliveries(NonZeroU32::new(1000).unwrap_or(NonZeroU32::MIN));
        let queue = Queue::new(ctx.client.clone(), &ctx.keyspace, "verify", config)?;
        let shared = Arc::new(Shared::default());
        let mut workers = Vec::new();
        for n in 0..ctx.concurrency {
            let (ctx, queue, shared) = (ctx.clone(), queue.clone(), shared.clone());
            let name = OwnerToken::new(format!("w{n}"))?;
            workers.push(tokio::spawn(async move {
                worker(ctx, queue, shared, name).await
            }));
        }
        let produced = produce(&ctx, &queue, &shared).await?;
        ctx.settled().await;
        let drained = Instant::now() + Duration::from_secs(5) + VIS * 4;
        while Instant::now() < drained {
            match queue.stats().await {
                Ok(s) if s.ready + s.scheduled + s.running == 0 => break,
                Ok(_) | Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        }
        shared.stop.store(true, Ordering::SeqCst);
        for w in workers {
            w.await??;
        }
        let jobs = shared.jobs.lock().unwrap_or_else(|p| p.into_inner());
        let lossy = ctx.fault.is_some_and(|f| f.loses_acknowledged_writes());
        let mut violations = 0;
        for n in 0..produced {
            let id = format!("j{n}");
            let Some((acks, unknown, claims)) = jobs.get(&id) else {
                if !lossy {
                    tracing::warn!(job = id, "queue: enqueued, never claimed (lost)");
                    violations += 1;
                }
                continue;
            };
            let bad = if lossy {
                repeated_fences(claims)
            } else {
                u64::from(*acks > 1 || (*acks == 0 && *unknown == 0)) + overlaps(claims)
            };
            if bad > 0 {
                tracing::warn!(job = id, acks, unknown, ?claims, "queue: violation");
            }
            violations += bad;
        }
        Ok(CheckReport::new(
            "queue",
            INVARIANT,
            shared.ops.load(Ordering::SeqCst),
            violations,
        ))
    })
}

/// Pairs of consecutive leases (by fence) where the later began before the earlier's deadline.
fn overlaps(claims: &[(u64, u64)]) -> u64 {
    let mut sorted = claims.to_vec();
    sorted.sort_unstable();
    let vis = u64::try_from(VIS.as_millis()).unwrap_or(u64::MAX);
    sorted.windows(2).filter(|w| w[1].1 < w[0].1 + vis).count() as u64
}

/// Two claims of one job with the same fence.
fn repeated_fences(claims: &[(u64, u64)]) -> u64 {
    let mut fences: Vec<u64> = claims.iter().map(|c| c.0).collect();
    fences.sort_unstable();
    fences.windows(2).filter(|w| w[0] == w[1]).count() as u64
}

/// Enqueues 20 jobs every 10 ms for the run's duration; returns how many. An enqueue that fails
/// is repeated (idempotent per id, bounded) until it is acknowledged.
async fn produce(ctx: &CheckCtx, queue: &Queue, shared: &Shared) -> anyhow::Result<u64> {
    let deadline = Instant::now() + ctx.duration;
    let mut n = 0u64;
    while Instant::now() < deadline {
        for _ in 0..20 {
            let id = format!("j{n}");
            for attempt in 0.. {
                match queue.enqueue(&id, id.as_bytes(), RunAt::Now).await {
                    Ok(_) => break,
                    Err(e) if attempt >= 100 => return Err(e.into()),
                    Err(e) => ctx.absorb(e)?,
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            shared.op(ctx);
            n += 1;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Ok(n)
}

async fn worker(
    ctx: CheckCtx,
    queue: Queue,
    shared: Arc<Shared>,
    name: OwnerToken,
) -> anyhow::Result<()> {
    while !shared.stop.load(Ordering::SeqCst) {
        if ctx.sabotage {
            sabotaged_claim(&ctx, &queue, &shared).await?;
            continue;
        }
        shared.op(&ctx);
        let claimed = match queue.claim(&name, VIS, 10).await {
            Ok(c) => c,
            Err(e) => {
                ctx.absorb(e)?;
                tokio::time::sleep(Duration::from_millis(5)).await;
                continue;
            }
        };
        let Claim::Claimed(jobs) = claimed else {
            tokio::time::sleep(Duration::from_millis(5)).await;
            continue;
        };
        for j in &jobs {
            shared.log(j.id(), |l| l.2.push((j.fence().0, j.claimed_at_ms())));
        }
        if rand::random_range(0..100) == 0 {
            tokio::time::sleep(VIS * 2).await; // a stall past the lease: these acks must lose
        }
        for j in jobs {
            shared.op(&ctx);
            match j.ack().await {
                Ok(Ack::Acked) => shared.log(j.id(), |l| l.0 += 1),
                Ok(_) => {}
                Err(e) if e.nothing_ran() => ctx.absorb(e)?,
                Err(e) => {
                    ctx.absorb(e)?;
                    shared.log(j.id(), |l| l.1 += 1);
                }
            }
        }
    }
    Ok(())
}

/// Fetch, then remove, in two round trips, processing whatever was fetched.
async fn sabotaged_claim(ctx: &CheckCtx, queue: &Queue, shared: &Shared) -> anyhow::Result<()> {
    let due = &queue.keys().due;
    let fetch = redis::cmd("ZRANGEBYSCORE")
        .arg(due)
        .arg("-inf")
        .arg("+inf")
        .arg("LIMIT")
        .arg(0)
        .arg(10)
        .clone();
    let ids: Vec<String> = match ctx.client.command(&fetch).await {
        Ok(v) => redis::from_redis_value(v)?,
        Err(e) => return ctx.absorb(e),
    };
    if ids.is_empty() {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    for id in ids {
        if let Err(e) = ctx
            .client
            .command(redis::cmd("ZREM").arg(due).arg(&id))
            .await
        {
            ctx.absorb(e)?;
        }
        shared.op(ctx);
        shared.log(&id, |l| l.0 += 1);
    }
    Ok(())
}
