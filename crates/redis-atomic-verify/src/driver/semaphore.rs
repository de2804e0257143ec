//! The driver's `semaphore` row: at most `limit` holders at once.
//!
//! Workers race for a semaphore's permits through the driver (`semaphore.acquire {name, limit,
//! ttl_ms, token}` → `acquired {handle}` | `full`; `semaphore.release {name, token, handle}` →
//! `released` | `lost`), with the lock rows' machinery ([`super::lock`], [`Race::Semaphore`]):
//! a holder keeps its permit until every permit is held and two more acquisitions were answered
//! (bounded), so a semaphore that admits one too many shows `limit + 1` holders surely at once;
//! and zombies — a short lease let run out, released once other workers hold every permit — turn
//! a release that does not check its owner into one holder too many. Judged by the testkit's
//! lease checker with capacity `limit` (the in-process semaphore row's judgement; fences not
//! asked: many libraries' permits have none), and in a clean run a holder's release answered
//! `lost` within its lease is a violation too. The limit is half the workers (at least one), so
//! some always find it full.

use super::lock::Race;
use super::Driver;
use crate::check::CheckResult;
use crate::ctx::{locked, CheckCtx};
use crate::report::Findings;
use redis_atomic_testkit::{history, Verdict};

pub(crate) const INVARIANT: &str = "at most `limit` holders at once (fences not asked)";

pub(crate) async fn run(driver: Driver, ctx: CheckCtx, row: &'static str) -> CheckResult<Findings> {
    let limit = (ctx.concurrency / 2).max(1);
    super::lock::run(driver, ctx, row, Race::Semaphore { limit }).await
}

/// The record judged: at most `limit` leases surely held at once (unbounded when acknowledged
/// writes may be lost with a failed primary, as in-process), releases found lost in a clean run.
pub(crate) fn judge(
    ctx: &CheckCtx,
    shared: &crate::checks::lock::Shared,
    limit: usize,
) -> Findings {
    let spans = locked(&shared.spans);
    let capacity = if ctx.lossy() { usize::MAX } else { limit };
    let lost = locked(&shared.lost_releases).clone();
    Findings::new(spans.len() as u64)
        .with(history::check_leases(&spans, capacity))
        .with(Verdict::observed(spans.len() as u64, lost))
}
