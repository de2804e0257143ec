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
//! primary kill, acknowledged writes may be lost (async replication): only fences are checked,
//! and of the counter only that no increment was invented.

use super::{decode, locked, CheckCtx, CheckResult, Findings};
use redis_atomic::lease::{OwnerToken, Release};
use redis_atomic::lock::{Acquire, LockGuard, Locks};
use redis_atomic_testkit::{history, LeaseSpan, Verdict};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;

pub(crate) const INVARIANT: &str = "one holder at a time; fences strictly increase";
const RESOURCE: &str = "verify";

/// (delta, outcome) of every counter write: Some(true) acknowledged, None unknown.
pub(crate) type Writes = Mutex<Vec<(i64, Option<bool>)>>;

/// What a lock row's workers record (the driver's lock rows too).
#[derive(Default)]
pub(crate) struct Shared {
    /// Wakes one waiter when the lock is released: a scheduling hint only (exclusion is Redis'),
    /// so waiters neither busy-spin ahead of the holder's commands nor sleep through handoffs.
    pub(crate) nudge: Notify,
    pub(crate) spans: Mutex<Vec<LeaseSpan>>,
    pub(crate) writes: Writes,
    /// Releases that found the lease gone in a clean run (cannot happen with a working lock).
    pub(crate) lost_releases: Mutex<Vec<String>>,
}

pub(crate) async fn run(ctx: CheckCtx) -> CheckResult<Findings> {
    let counter = ctx.keyspace.key("verify", 1, "lock", &["counter"])?;
    let shared = Arc::new(Shared::default());
    ctx.run_workers(|_, ctx| worker(ctx, shared.clone(), counter.clone()))
        .await?;
    judge(&ctx, &shared, &counter).await
}

/// The record judged: leases (exclusion, fences), the counter (no lost update), releases.
pub(crate) async fn judge(ctx: &CheckCtx, shared: &Shared, counter: &str) -> CheckResult<Findings> {
    let stored = ctx.final_get(counter).await?.unwrap_or(0);
    let spans = locked(&shared.spans);
    // When acknowledged writes may be lost (failover), exclusion is not guaranteed: only the
    // fences are checked (unbounded capacity).
    let capacity = if ctx.lossy() { usize::MAX } else { 1 };
    let counter = ctx.check_counter(0, stored, &locked(&shared.writes));
    let lost = locked(&shared.lost_releases).clone();
    Ok(Findings::new(spans.len() as u64)
        .with(history::check_leases(&spans, capacity))
        .with(counter)
        .with(Verdict::observed(spans.len() as u64, lost)))
}

fn lease(ctx: &CheckCtx) -> Duration {
    if ctx.fault.is_some() {
        Duration::from_secs(1)
    } else {
        Duration::from_secs(10)
    }
}

async fn worker(ctx: CheckCtx, shared: Arc<Shared>, counter: String) -> CheckResult<()> {
    let locks = Locks::new(ctx.client.clone(), ctx.keyspace.clone());
    while ctx.running() {
        if ctx.sabotage {
            sabotaged_section(&ctx, &shared, &counter).await?;
            continue;
        }
        let invoked = ctx.clock();
        let Some(guard) = acquire(&ctx, &locks, RESOURCE, lease(&ctx)).await? else {
            // Held (or unreachable): wait for a release, but not forever (expiry frees it too).
            let _ = tokio::time::timeout(Duration::from_millis(20), shared.nudge.notified()).await;
            continue;
        };
        let mut span = LeaseSpan {
            resource: RESOURCE.into(),
            fence: guard.fence().0,
            acquire_invoked: invoked,
            acquire_completed: ctx.clock(),
            release_invoked: None,
            lease: lease(&ctx),
        };
        let clean = increment(&ctx, &shared.writes, &counter).await?;
        ctx.tick();
        if clean {
            span.release_invoked = Some(ctx.clock());
            release(&ctx, &shared, guard).await?;
        }
        locked(&shared.spans).push(span);
        shared.nudge.notify_one();
    }
    Ok(())
}

/// Acquires `resource`, retrying an unknown outcome with the same owner token (bounded): the
/// documented way to end up the single holder. None when held by someone else or unreachable.
pub(crate) async fn acquire(
    ctx: &CheckCtx,
    locks: &Locks,
    resource: &str,
    ttl: Duration,
) -> CheckResult<Option<LockGuard>> {
    let token = OwnerToken::random();
    let acquired = ctx
        .until_known(|| locks.acquire_with_token(resource, &token, ttl))
        .await?;
    Ok(match acquired {
        Some(Acquire::Acquired(guard)) => Some(guard),
        _ => None,
    })
}

/// The deliberately non-atomic read-modify-write the lock must protect, logged in `writes`.
/// Returns whether every step's outcome is known (if not, the holder must not release: see the
/// module doc). The driver's lock rows use it too.
pub(crate) async fn increment(ctx: &CheckCtx, writes: &Writes, counter: &str) -> CheckResult<bool> {
    let read = ctx.command(redis::cmd("GET").arg(counter)).await;
    let current = match read.and_then(|v| decode::<Option<i64>>("GET", v)) {
        Ok(v) => v.unwrap_or(0),
        Err(e) => {
            ctx.absorb(e)?;
            return Ok(false);
        }
    };
    if ctx.sabotage {
        ctx.race_gap().await; // no lock: the gap another task writes into
    }
    let ttl = u64::try_from(ctx.key_ttl().as_millis()).unwrap_or(u64::MAX);
    let set = redis::cmd("SET")
        .arg(counter)
        .arg(current + 1)
        .arg("PX")
        .arg(ttl)
        .clone();
    let outcome = ctx.outcome(ctx.command(&set).await.map(|_| true))?;
    locked(writes).push((1, outcome));
    Ok(outcome == Some(true))
}

async fn release(ctx: &CheckCtx, shared: &Shared, guard: LockGuard) -> CheckResult<()> {
    let fence = guard.fence();
    match ctx.call(guard.release()).await {
        // Under faults a retried release may find its own first attempt already ran.
        Ok(Release::Lost) if ctx.fault.is_none() => {
            locked(&shared.lost_releases).push(format!("release of fence {fence} found it lost"));
        }
        Ok(_) => {}
        Err(e) => ctx.absorb(e)?,
    }
    Ok(())
}

/// The critical section without the lock: what the check must flag.
async fn sabotaged_section(ctx: &CheckCtx, shared: &Shared, counter: &str) -> CheckResult<()> {
    let invoked = ctx.clock();
    let fence = locked(&shared.spans).len() as u64;
    increment(ctx, &shared.writes, counter).await?;
    locked(&shared.spans).push(LeaseSpan {
        resource: RESOURCE.into(),
        fence,
        acquire_invoked: invoked,
        acquire_completed: invoked,
        release_invoked: Some(ctx.clock()),
        lease: lease(ctx),
    });
    ctx.tick();
    Ok(())
}
