//! The lock's check: many tasks race for one lock and do a deliberately non-atomic
//! read-modify-write of a Redis counter inside the critical section.
//!
//! Every acknowledged acquisition is recorded as a [`LeaseSpan`] (invoked, acknowledged, release
//! invoked) and the history is checked by the testkit's lease checker: never two holders at an
//! instant when both surely held the lease, fences unique and increasing in real-time order. The
//! final counter must equal the acknowledged increments plus some of the unknown ones (a lost
//! update is what a broken lock causes).
//!
//! Under faults the holder follows the library's advice: an acquisition with an unknown outcome is
//! retried with the same owner token; a critical section whose write has an unknown outcome is
//! abandoned *without* releasing, so the lease (1 s, well above the 300 ms stalls) runs out before
//! anyone else can enter and the late write cannot land in someone else's section. Under a
//! primary kill, acknowledged writes may be lost (async replication): only fences are checked.

use super::{CheckCtx, CheckReport};
use futures::future::BoxFuture;
use redis_atomic::lease::{OwnerToken, Release};
use redis_atomic::lock::{Acquire, LockGuard, Locks};
use redis_atomic_testkit::{history, LeaseSpan};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

const INVARIANT: &str = "one holder at a time; fences strictly increase";
const RESOURCE: &str = "verify";

#[derive(Default)]
struct Shared {
    /// Wakes one waiter when the lock is released: a scheduling hint only (exclusion is Redis'),
    /// so waiters neither busy-spin ahead of the holder's commands nor sleep through handoffs.
    nudge: Notify,
    spans: Mutex<Vec<LeaseSpan>>,
    /// (delta, outcome) of every counter write: Some(true) acknowledged, None unknown.
    writes: Mutex<Vec<(i64, Option<bool>)>>,
    /// Releases that found the lease gone in a clean run (cannot happen with a working lock).
    lost_releases: AtomicU64,
}

pub(super) fn run(ctx: CheckCtx) -> BoxFuture<'static, anyhow::Result<CheckReport>> {
    Box::pin(async move {
        let counter = ctx.keyspace.key("verify", 1, "lock", &["counter"])?;
        let shared = Arc::new(Shared::default());
        let clock = Instant::now();
        let deadline = clock + ctx.duration;
        let mut tasks = Vec::new();
        for _ in 0..ctx.concurrency {
            let (ctx, shared, counter) = (ctx.clone(), shared.clone(), counter.clone());
            tasks.push(tokio::spawn(async move {
                worker(ctx, shared, counter, clock, deadline).await
            }));
        }
        for task in tasks {
            task.await??;
        }
        let stored: Option<i64> =
            redis::from_redis_value(ctx.final_command(redis::cmd("GET").arg(&counter)).await?)?;
        Ok(verdict(&ctx, &shared, stored.unwrap_or(0)))
    })
}

fn verdict(ctx: &CheckCtx, shared: &Shared, stored: i64) -> CheckReport {
    let spans = shared.spans.lock().unwrap_or_else(|p| p.into_inner());
    let writes = shared.writes.lock().unwrap_or_else(|p| p.into_inner());
    // When acknowledged writes may be lost (failover), exclusion is not guaranteed: only the
    // fences are checked (unbounded capacity), and the counter not at all.
    let capacity = if writes_may_be_lost(ctx) {
        usize::MAX
    } else {
        1
    };
    let leases = history::check_leases(&spans, capacity);
    let counter = history::check_counter(0, stored, &writes);
    let mut violations = leases.violations.len() as u64;
    if !writes_may_be_lost(ctx) {
        violations += counter.violations.len() as u64;
    }
    violations += shared.lost_releases.load(Ordering::SeqCst);
    for v in leases.violations.iter().chain(&counter.violations).take(5) {
        tracing::warn!("lock: {v}");
    }
    CheckReport::new("lock", INVARIANT, spans.len() as u64, violations)
}

fn writes_may_be_lost(ctx: &CheckCtx) -> bool {
    ctx.fault.is_some_and(|f| f.loses_acknowledged_writes())
}

fn lease(ctx: &CheckCtx) -> Duration {
    if ctx.fault.is_some() {
        Duration::from_secs(1)
    } else {
        Duration::from_secs(10)
    }
}

async fn worker(
    ctx: CheckCtx,
    shared: Arc<Shared>,
    counter: String,
    clock: Instant,
    deadline: Instant,
) -> anyhow::Result<()> {
    let locks = Locks::new(ctx.client.clone(), ctx.keyspace.clone());
    while Instant::now() < deadline {
        if ctx.sabotage {
            sabotaged_section(&ctx, &shared, &counter, clock).await?;
            continue;
        }
        let invoked = clock.elapsed();
        let Some(guard) = acquire(&ctx, &locks).await? else {
            // Held (or unreachable): wait for a release, but not forever (expiry frees it too).
            let _ = tokio::time::timeout(Duration::from_millis(20), shared.nudge.notified()).await;
            continue;
        };
        let mut span = LeaseSpan {
            resource: RESOURCE.into(),
            fence: guard.fence().0,
            acquire_invoked: invoked,
            acquire_completed: clock.elapsed(),
            release_invoked: None,
            lease: lease(&ctx),
        };
        let clean = increment(&ctx, &shared, &counter).await?;
        ctx.progress.inc(1);
        if clean {
            span.release_invoked = Some(clock.elapsed());
            release(&ctx, &shared, guard).await?;
        }
        shared
            .spans
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(span);
        shared.nudge.notify_one();
    }
    Ok(())
}

/// Acquires, retrying an unknown outcome with the same owner token (bounded): the documented way
/// to end up the single holder. None when held by someone else or unreachable.
async fn acquire(ctx: &CheckCtx, locks: &Locks) -> anyhow::Result<Option<LockGuard>> {
    let token = OwnerToken::random();
    for _ in 0..3 {
        match locks.acquire_with_token(RESOURCE, &token, lease(ctx)).await {
            Ok(Acquire::Acquired(g)) => return Ok(Some(g)),
            Ok(_) => return Ok(None),
            Err(e) if e.is_outcome_unknown() => ctx.absorb(e)?,
            Err(e) => {
                ctx.absorb(e)?;
                return Ok(None);
            }
        }
    }
    Ok(None)
}

/// The deliberately non-atomic read-modify-write the lock must protect. Returns whether every
/// step's outcome is known (if not, the holder must not release: see the module doc).
async fn increment(ctx: &CheckCtx, shared: &Shared, counter: &str) -> anyhow::Result<bool> {
    let current = match ctx.client.command(redis::cmd("GET").arg(counter)).await {
        Ok(v) => redis::from_redis_value::<Option<i64>>(v)?.unwrap_or(0),
        Err(e) => {
            ctx.absorb(e)?;
            return Ok(false);
        }
    };
    let result = ctx
        .client
        .command(redis::cmd("SET").arg(counter).arg(current + 1))
        .await;
    let outcome = match result {
        Ok(_) => Some(true),
        Err(e) if e.nothing_ran() => {
            ctx.absorb(e)?;
            Some(false)
        }
        Err(e) => {
            ctx.absorb(e)?;
            None
        }
    };
    shared
        .writes
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push((1, outcome));
    Ok(outcome == Some(true))
}

async fn release(ctx: &CheckCtx, shared: &Shared, guard: LockGuard) -> anyhow::Result<()> {
    match guard.release().await {
        // Under faults a retried release may find its own first attempt already ran.
        Ok(Release::Lost) if ctx.fault.is_none() => {
            shared.lost_releases.fetch_add(1, Ordering::SeqCst);
        }
        Ok(_) => {}
        Err(e) => ctx.absorb(e)?,
    }
    Ok(())
}

/// The critical section without the lock: what the check must flag.
async fn sabotaged_section(
    ctx: &CheckCtx,
    shared: &Shared,
    counter: &str,
    clock: Instant,
) -> anyhow::Result<()> {
    let invoked = clock.elapsed();
    let fence = shared.spans.lock().map_or(0, |s| s.len() as u64);
    increment(ctx, shared, counter).await?;
    let mut spans = shared.spans.lock().unwrap_or_else(|p| p.into_inner());
    spans.push(LeaseSpan {
        resource: RESOURCE.into(),
        fence,
        acquire_invoked: invoked,
        acquire_completed: invoked,
        release_invoked: Some(clock.elapsed()),
        lease: lease(ctx),
    });
    ctx.progress.inc(1);
    Ok(())
}
