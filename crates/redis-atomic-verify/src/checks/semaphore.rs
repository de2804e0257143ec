//! The semaphore's check: many tasks race for a few permits with short leases, and some holders
//! "die" (never release). Each holding is recorded as a [`LeaseSpan`] and judged by the testkit's
//! lease checker with capacity N: a holding is surely live from the acquire reply to the release
//! request, or to the acquire's invocation + lease − 1 ms (leases are server µs; the millisecond
//! covers clock-rate differences) for a holder that died or overran, so more than N of them open
//! at once is more than N live permits on the server. Fences must be unique and increase in
//! real-time order. Violations: every holding that opened above capacity, every fence repeated
//! or out of order.
//!
//! Under faults the holder follows the library's advice: an acquire with an unknown outcome is
//! retried with the same holder token (the same permit comes back); if it stays unknown the
//! holder does no work (a permit it may hold runs out with its lease). Under a primary kill,
//! acknowledged permits may be lost with the primary (asynchronous replication), so only the
//! fences are checked there.

use super::{locked, CheckCtx, CheckResult, Findings};
use redis_atomic::lease::OwnerToken;
use redis_atomic::semaphore::{Acquire, Permit, Semaphore, SemaphoreConfig};
use redis_atomic_testkit::{history, LeaseSpan};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub(crate) const INVARIANT: &str = "never more than N live permits, even when holders die";
const NAME: &str = "verify";
const CAPACITY: u32 = 4;
const LEASE: Duration = Duration::from_millis(100);

type Spans = Arc<Mutex<Vec<LeaseSpan>>>;

pub(crate) async fn run(ctx: CheckCtx) -> CheckResult<Findings> {
    let sem = Semaphore::new(
        ctx.client.clone(),
        &ctx.keyspace,
        NAME,
        SemaphoreConfig::new(CAPACITY),
    )?;
    let spans = Spans::default();
    ctx.run_workers(|t, ctx| worker(t, ctx, sem.clone(), spans.clone()))
        .await?;
    let spans = locked(&spans);
    let capacity = if ctx.lossy() {
        usize::MAX
    } else {
        CAPACITY as usize
    };
    Ok(Findings::new(spans.len() as u64).with(history::check_leases(&spans, capacity)))
}

async fn worker(t: usize, ctx: CheckCtx, sem: Semaphore, spans: Spans) -> CheckResult<()> {
    let mut n = 0usize;
    while ctx.running_until_first(locked(&spans).is_empty()) {
        let invoked = ctx.clock();
        // Sabotaged: no permit at all, everyone "holds" at once, all with fence 0.
        let permit = if ctx.sabotage {
            None
        } else {
            match acquire(&ctx, &sem).await? {
                Some(permit) => Some(permit),
                None => continue,
            }
        };
        let acquired = ctx.clock();
        tokio::time::sleep(Duration::from_millis(1)).await; // the work the permit protects
        n += 1;
        let dies = (t + n) % 16 == 0;
        locked(&spans).push(LeaseSpan {
            resource: NAME.into(),
            fence: permit.as_ref().map_or(0, |p| p.fence().0),
            acquire_invoked: invoked,
            acquire_completed: acquired,
            release_invoked: (!dies).then(|| ctx.clock()),
            lease: LEASE - history::CLOCK_SLACK,
        });
        ctx.tick();
        if let (Some(permit), false) = (permit, dies) {
            if let Err(e) = ctx.call(permit.release()).await {
                ctx.absorb(e)?;
            }
        }
    }
    Ok(())
}

/// A permit, retrying an unknown outcome with the same holder (bounded). None when full or when
/// the outcome stays unknown or failed (after a short pause).
async fn acquire(ctx: &CheckCtx, sem: &Semaphore) -> CheckResult<Option<Permit>> {
    let holder = OwnerToken::random();
    match ctx
        .until_known(|| sem.acquire_with_token(&holder, LEASE))
        .await?
    {
        Some(Acquire::Acquired(permit)) => return Ok(Some(permit)),
        Some(Acquire::Full { retry_after }) => {
            tokio::time::sleep(retry_after.min(Duration::from_millis(2))).await;
        }
        Some(_) => {}
        None => tokio::time::sleep(Duration::from_millis(5)).await,
    }
    Ok(None)
}
