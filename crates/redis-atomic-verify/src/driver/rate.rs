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
    Ok(Findings::new(decisions.len() as u64)
        .with(history::check_in_any_period(&decisions, bound, PERIOD)))
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
