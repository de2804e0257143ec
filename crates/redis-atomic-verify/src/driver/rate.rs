//! The driver's rate-limit rows: workers consume one unit at a time of one limit (10 per
//! second) through the driver (`ratelimit.consume` → `allowed` or `limited`), each call's
//! interval on the harness's clock. Unknown outcomes never count as admissions.
//!
//! - `ratelimit-sl`: at most `limit` admitted in any period (a sliding log; a moving window) —
//!   the testkit's `check_in_any_period`.
//! - `ratelimit-win`: at most `limit` per window of one period, windows unknown to the
//!   harness (a fixed or an anchored window: the driver need not say where its windows lie), so
//!   what is judged is what follows for any placement: at most `2 × limit` in any period.

use super::session::{self, Session};
use super::Driver;
use crate::check::CheckResult;
use crate::ctx::{locked, CheckCtx};
use crate::report::Findings;
use redis_atomic_testkit::history;
use serde_json::json;
use std::ops::Range;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub(crate) const ANY_PERIOD: &str = "admitted ≤ limit in any period";
pub(crate) const WINDOWS: &str = "admitted ≤ limit per window (≤ 2 × limit in any period)";
const LIMIT: u64 = 10;
const PERIOD: Duration = Duration::from_secs(1);

/// Which bound a row holds the admissions to.
#[derive(Clone, Copy)]
pub(crate) enum Judge {
    AnyPeriod,
    Windows,
}

type Decisions = Arc<Mutex<Vec<(Range<Duration>, Option<bool>)>>>;

pub(crate) async fn run(
    driver: Driver,
    mut ctx: CheckCtx,
    row: &'static str,
    judge: Judge,
) -> CheckResult<Findings> {
    let pool = match session::start(&driver, &mut ctx, row).await? {
        Ok(pool) => pool,
        Err(why) => return Ok(Findings::unsupported(why)),
    };
    let decisions = Decisions::default();
    let sessions = ctx
        .run_workers(|t, ctx| {
            let session = Session::take(&pool, t, &ctx, &driver);
            let decisions = decisions.clone();
            async move { worker(session?, ctx, decisions).await }
        })
        .await?;
    session::finish(&driver, sessions);
    let decisions = locked(&decisions);
    let bound = match judge {
        Judge::AnyPeriod => LIMIT,
        Judge::Windows => 2 * LIMIT,
    };
    let mut verdict = history::check_in_any_period(&decisions, bound, PERIOD);
    if let (Some(first), Some(history)) =
        (verdict.violations.first_mut(), minimal(&decisions, bound))
    {
        first.push_str(&format!("; a minimal history: {history}"));
    }
    Ok(Findings::new(decisions.len() as u64).with(verdict))
}

/// The first `bound + 1` admissions that all happened within less than a period (each call's
/// interval on the harness's clock, from the first's invocation to the last's answer): what a
/// violation shows, small enough to read.
fn minimal(decisions: &[(Range<Duration>, Option<bool>)], bound: u64) -> Option<String> {
    let mut admitted: Vec<&Range<Duration>> = decisions
        .iter()
        .filter(|(_, d)| *d == Some(true))
        .map(|(r, _)| r)
        .collect();
    admitted.sort_by_key(|r| r.start);
    let n = usize::try_from(bound).ok()? + 1;
    let window = admitted.windows(n).find(|w| {
        let last = w.iter().map(|r| r.end).max().unwrap_or_default();
        last.saturating_sub(w[0].start) < PERIOD
    })?;
    let calls: Vec<String> = window
        .iter()
        .map(|r| format!("{}..{}", r.start.as_millis(), r.end.as_millis()))
        .collect();
    Some(format!(
        "{n} calls answered `allowed`, sent and answered at (ms) {}",
        calls.join(", ")
    ))
}

async fn worker(mut s: Session, ctx: CheckCtx, decisions: Decisions) -> CheckResult<Session> {
    let args = json!({"name": "verify", "limit": LIMIT, "period_ms": PERIOD.as_millis() as u64});
    while ctx.running() {
        let invoked = ctx.clock();
        let answer = s.call("ratelimit.consume", args.clone()).await?;
        match answer.word() {
            Some("allowed" | "limited") | None => {}
            Some(other) => {
                bail!("ratelimit.consume answered `{other}`: neither allowed nor limited")
            }
        }
        locked(&decisions).push((invoked..ctx.clock(), answer.applied("allowed")));
        ctx.tick();
    }
    Ok(s)
}
