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
//! Errors are outcomes, never the end of the run: an enqueue that fails is repeated (enqueue is
//! idempotent per id) for as long as the check runs, however long a slot migration refuses it;
//! a job whose enqueue was never acknowledged is not counted as produced (it may exist: if so,
//! its acks are judged like any other's). Every
//! claim carries a claim id (`Queue::claim_with_id`), so a claim with an unknown outcome is resent
//! with the same id (at most three times) and gets back the leases it made, which are then
//! recorded and acked like any others (only a claim still unknown after that is dropped: its jobs
//! come back after the visibility timeout); an
//! ack with an unknown outcome may stand for the job's one accepted ack. When a fault may lose
//! acknowledged writes (primary kill), only what survives it is checked: fences never repeat nor go
//! back.
//!
//! Judged by the testkit: `check_acked_once` on every produced job's acks, `check_leases` on the
//! claims (each a lease of one job, from its claim on the server's clock for the visibility
//! timeout: capacity 1 per job, fences increasing).

use super::{decode, locked, unseen, CheckCtx, CheckResult, Findings};
use redis_atomic::lease::OwnerToken;
use redis_atomic::queue::{Ack, Claim, Queue, QueueConfig, RunAt};
use redis_atomic_testkit::{history, LeaseSpan};
use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub(crate) const INVARIANT: &str = "each job acked once, never two live leases";
const VIS: Duration = Duration::from_millis(200);

#[derive(Default)]
struct Shared {
    /// Per job, its acks: Some(true) accepted, Some(false) refused (stale) or surely not sent,
    /// None unknown.
    acks: Mutex<HashMap<String, Vec<Option<bool>>>>,
    /// Every claim of a job, on the server's clock: the lease runs from the claim for VIS.
    claims: Mutex<Vec<LeaseSpan>>,
    ops: AtomicU64,
    stop: AtomicBool,
}

impl Shared {
    fn ack(&self, id: &str, outcome: Option<bool>) {
        locked(&self.acks)
            .entry(id.to_string())
            .or_default()
            .push(outcome);
    }

    fn op(&self, ctx: &CheckCtx) {
        self.ops.fetch_add(1, Ordering::Relaxed);
        ctx.tick();
    }
}

pub(crate) async fn run(ctx: CheckCtx) -> CheckResult<Findings> {
    let config =
        QueueConfig::default().max_deliveries(NonZeroU32::new(1000).unwrap_or(NonZeroU32::MIN));
    let queue = Queue::new(ctx.client.clone(), &ctx.keyspace, "verify", config)?;
    let shared = Arc::new(Shared::default());
    // A queue's state is durable on purpose (no TTL): the keeper gives its keys the check's.
    let k = queue.keys();
    let keys: Vec<String> = [
        &k.due,
        &k.inflight,
        &k.dead,
        &k.done,
        &k.meta,
        &k.payload,
        &k.errors,
    ]
    .map(String::clone)
    .into();
    let keeper = ctx.keep_expiring(keys);
    let workers = ctx.run_workers(|n, ctx| worker(n, ctx, queue.clone(), shared.clone()));
    let (produced, _) = tokio::try_join!(produce_and_drain(&ctx, &queue, &shared), workers)?;
    keeper.stop().await;
    let findings = Findings::new(shared.ops.load(Ordering::SeqCst));
    let claims = locked(&shared.claims);
    // When a fault may lose acknowledged writes (primary kill), only what survives it is checked:
    // fences never repeat nor go back.
    if ctx.lossy() {
        return Ok(findings.with(history::check_leases(&claims, usize::MAX)));
    }
    let mut acks = locked(&shared.acks).clone();
    for n in 0..produced {
        acks.entry(format!("j{n}")).or_default(); // acknowledged, never claimed: lost
    }
    Ok(findings
        .with(history::check_acked_once(&acks))
        .with(history::check_leases(&claims, 1)))
}

/// [`produce`], then waits (bounded) until every job has left the queue and stops the workers.
async fn produce_and_drain(ctx: &CheckCtx, queue: &Queue, shared: &Shared) -> CheckResult<u64> {
    let produced = produce(ctx, queue, shared).await?;
    ctx.settled().await;
    let drained = Instant::now() + Duration::from_secs(5) + VIS * 4;
    while Instant::now() < drained {
        match queue.stats().await {
            Ok(s) if s.ready + s.scheduled + s.running == 0 => break,
            Ok(_) | Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
    shared.stop.store(true, Ordering::SeqCst);
    Ok(produced)
}

/// Enqueues 20 jobs every 10 ms for the run's duration; returns how many were acknowledged
/// (`j0` …: each is enqueued only once the one before was).
async fn produce(ctx: &CheckCtx, queue: &Queue, shared: &Shared) -> CheckResult<u64> {
    let mut n = 0u64;
    while ctx.running() {
        for _ in 0..20 {
            if !enqueue(ctx, queue, &format!("j{n}")).await? {
                return Ok(n);
            }
            shared.op(ctx);
            n += 1;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Ok(n)
}

/// Enqueues `id` until acknowledged (enqueue is idempotent per id), with a growing pause while it
/// fails, for as long as the check runs; false when the run ended first.
async fn enqueue(ctx: &CheckCtx, queue: &Queue, id: &str) -> CheckResult<bool> {
    let mut pause = Duration::from_millis(5);
    loop {
        match ctx.call(queue.enqueue(id, id.as_bytes(), RunAt::Now)).await {
            Ok(_) => return Ok(true),
            Err(e) => ctx.absorb(e)?,
        }
        if !ctx.running() {
            return Ok(false);
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(100));
    }
}

async fn worker(n: usize, ctx: CheckCtx, queue: Queue, shared: Arc<Shared>) -> CheckResult<()> {
    let name = OwnerToken::new(format!("w{n}"))?;
    for c in 0u64.. {
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        if ctx.sabotage {
            sabotaged_claim(&ctx, &queue, &shared).await?;
            continue;
        }
        shared.op(&ctx);
        let id = format!("w{n}-{c}");
        let claim = || queue.claim_with_id(&name, VIS, 10, &id);
        let claimed = match ctx.call(claim()).await {
            Ok(c) => Some(c),
            // The claim id makes the claim safe to resend: the same leases come back.
            Err(e) if unseen(&e) => {
                ctx.absorb(e)?;
                ctx.until_known(claim).await?
            }
            Err(e) => {
                ctx.absorb(e)?;
                None
            }
        };
        let Some(Claim::Claimed(jobs)) = claimed else {
            tokio::time::sleep(Duration::from_millis(5)).await;
            continue;
        };
        locked(&shared.claims).extend(jobs.iter().map(|j| {
            let claimed = Duration::from_millis(j.claimed_at_ms());
            LeaseSpan {
                resource: j.id().to_string(),
                fence: j.fence().0,
                acquire_invoked: claimed,
                acquire_completed: claimed,
                release_invoked: None,
                lease: VIS,
            }
        }));
        if rand::random_range(0..100) == 0 {
            tokio::time::sleep(VIS * 2).await; // a stall past the lease: these acks must lose
        }
        for j in jobs {
            shared.op(&ctx);
            let id = j.id().to_string();
            let acked = ctx.call(j.ack()).await.map(|a| matches!(a, Ack::Acked));
            shared.ack(&id, ctx.outcome(acked)?);
        }
    }
    Ok(())
}

/// Fetch, then remove, in two round trips, processing whatever was fetched.
async fn sabotaged_claim(ctx: &CheckCtx, queue: &Queue, shared: &Shared) -> CheckResult<()> {
    let due = &queue.keys().due;
    let fetch = redis::cmd("ZRANGEBYSCORE")
        .arg(due)
        .arg("-inf")
        .arg("+inf")
        .arg("LIMIT")
        .arg(0)
        .arg(10)
        .clone();
    let fetched = ctx.command(&fetch).await;
    let ids: Vec<String> = match fetched.and_then(|v| decode("ZRANGEBYSCORE", v)) {
        Ok(ids) => ids,
        Err(e) => return ctx.absorb(e),
    };
    if ids.is_empty() {
        tokio::time::sleep(Duration::from_millis(1)).await;
        return Ok(());
    }
    ctx.race_gap().await; // the gap in which another worker fetches the same jobs
    for id in ids {
        if let Err(e) = ctx.command(redis::cmd("ZREM").arg(due).arg(&id)).await {
            ctx.absorb(e)?;
        }
        shared.op(ctx);
        shared.ack(&id, Some(true));
    }
    Ok(())
}
