//! The rate limiter's checks, one row per algorithm: many tasks hammer one identity limited to
//! `LIMIT` units per `PERIOD` (burst `LIMIT` where the algorithm has one), and every decision is
//! recorded with its span on the check's clock (invocation to reply) and, for the windowed
//! algorithms, its exact position in its window. The testkit's `history::rates` checkers then
//! judge the record against each algorithm's own bound:
//!
//! * fixed window: the `k`-th admission of a window has `k ≤ limit`;
//! * anchored window: the same, its windows found by their ends (an admission's estimated server
//!   time plus its `reset`), since they are not aligned;
//! * sliding window counter: at each admission, the previous window's admissions weighted by the
//!   part of the period still inside it, plus this window's, are at most `limit`;
//! * sliding log: at most `limit` admissions in any `period`;
//! * token bucket and GCRA: at most `burst + t / interval` admissions in any interval `t`.
//!
//! Spans need no server clock (see the checkers). Window positions do: an admitted reply's
//! `reset` is the time to the window's end (fixed) or to the end of the next one (sliding), so
//! it gives the exact offset into the window; which window is estimated from the server's clock
//! (our clock plus an offset measured with `TIME`, [`clock`]), rounded to the nearest window
//! end, and a decision whose reply took over a quarter of the period is not attributed.
//!
//! Unknown outcomes (under faults) may or may not have admitted: they count as operations and
//! unknowns, never as admissions, so they cannot make a violation. When a fault may lose
//! acknowledged writes (primary kill), a limit's state may restart: nothing is checked.
//!
//! `--sabotage` runs each algorithm's own script with one line added ([`sabotage`]): it forgets
//! the cost of every other request, a real over-admission that each row must flag many times.
//! Whether it shows must not depend on the machine's speed: a broken limiter over-admits only
//! where more than `LIMIT` requests arrive in one period, and a window position is attributed
//! only to a reply faster than a fraction of the period; on a loaded machine under faults a
//! sabotaged row once made 87 decisions in a second and none of them over-admitted. So a
//! sabotaged run uses a period far longer than the run ([`SABOTAGE_PERIOD`]: any machine sends
//! more than `LIMIT` requests in it, and any reply is fast enough to attribute), and goes on
//! past its deadline until its record shows [`CAUGHT`] violations (bounded, see
//! [`CheckCtx::running_while`]): it ends on that condition, not on a clock.

mod clock;
mod sabotage;

use super::{locked, CheckCtx, CheckResult, Findings};
use redis_atomic::ratelimit::{Algorithm, Decision, Limit, RateLimiter};
use redis_atomic::{Client, Error};
use redis_atomic_testkit::{history, Verdict};
use sabotage::Sabotaged;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Fixed window's invariant.
pub(crate) const FIXED_WINDOW: &str = "admitted ≤ limit per window";
/// Anchored window's invariant.
pub(crate) const ANCHORED_WINDOW: &str = "admitted ≤ limit per window, windows by their ends";
/// Sliding window counter's invariant.
pub(crate) const SLIDING_WINDOW: &str = "weighted two-window count ≤ limit at each admission";
/// Sliding log's invariant.
pub(crate) const SLIDING_LOG: &str = "admitted ≤ limit in any period";
/// Token bucket's and GCRA's invariant.
pub(crate) const RATE: &str = "admitted in any t ≤ burst + t / interval";

const LIMIT: u64 = 10;
const PERIOD: Duration = Duration::from_millis(200);
/// A sabotaged run's period: longer than any run's first seconds, in which every machine sends
/// more than `LIMIT` requests.
const SABOTAGE_PERIOD: Duration = Duration::from_secs(10);
/// Violations a sabotaged row's record must show before it stops (many, not one by chance).
pub(crate) const CAUGHT: usize = 20;

/// One decision: its span, its window position (windowed algorithms, when attributed) and
/// its outcome (`Some(admitted)`, or None when unknown).
struct Record {
    span: Range<Duration>,
    position: Option<history::WindowPosition>,
    outcome: Option<bool>,
}

type Log = Arc<Mutex<Vec<Record>>>;

/// What decides: the library's limiter, or its sabotaged script.
#[derive(Clone)]
struct Decider {
    client: Client,
    limiter: RateLimiter,
    sabotaged: Option<Arc<Sabotaged>>,
}

impl Decider {
    /// Admitted?, and the reply's `reset`.
    async fn decide(&self) -> Result<(bool, Duration), Error> {
        if let Some(s) = &self.sabotaged {
            return s.decide(&self.client).await;
        }
        Ok(match self.limiter.consume("verify", 1).await? {
            Decision::Allowed { reset_after, .. } => (true, reset_after),
            Decision::Limited { reset_after, .. } => (false, reset_after),
            _ => (false, Duration::ZERO),
        })
    }
}

/// Windows per `reset` of an admission: 1 for the fixed window (its end), 2 for the sliding
/// window (the end of the next one); None for the algorithms judged on spans.
fn windows_in_reset(algorithm: Algorithm) -> Option<u32> {
    match algorithm {
        Algorithm::FixedWindow => Some(1),
        Algorithm::SlidingWindow => Some(2),
        _ => None,
    }
}

/// The check of one algorithm.
pub(crate) async fn run(ctx: CheckCtx, algorithm: Algorithm) -> CheckResult<Findings> {
    let period = if ctx.sabotage {
        SABOTAGE_PERIOD
    } else {
        PERIOD
    };
    let limit = Limit::new(algorithm, LIMIT, period)?;
    let limiter = RateLimiter::new(ctx.client.clone(), ctx.keyspace.clone(), limit.clone());
    let attributed =
        windows_in_reset(algorithm).is_some() || algorithm == Algorithm::AnchoredWindow;
    let offset = match attributed {
        true => Some(clock::offset(&ctx).await?),
        false => None,
    };
    let sabotaged = match ctx.sabotage {
        true => Some(Arc::new(Sabotaged::new(&limiter, "verify")?)),
        false => None,
    };
    let decider = Decider {
        client: ctx.client.clone(),
        limiter,
        sabotaged,
    };
    let log = Log::default();
    let caught = Arc::new(AtomicBool::new(false));
    let decisions = ctx
        .run_workers(|_, ctx| {
            let record = Recorder {
                limit: limit.clone(),
                log: log.clone(),
                caught: caught.clone(),
            };
            worker(ctx, decider.clone(), record, offset)
        })
        .await?;
    let findings = Findings::new(decisions.iter().sum());
    if ctx.lossy() {
        return Ok(findings);
    }
    let verdict = judge(&limit, &locked(&log));
    Ok(findings.with(verdict))
}

/// The algorithm's checker on the record.
fn judge(limit: &Limit, log: &[Record]) -> Verdict {
    let spans = || -> Vec<_> { log.iter().map(|r| (r.span.clone(), r.outcome)).collect() };
    match limit.algorithm() {
        Algorithm::FixedWindow | Algorithm::SlidingWindow => {
            let positions: Vec<_> = log.iter().map(|r| (r.position, r.outcome)).collect();
            let weighted = limit.algorithm() == Algorithm::SlidingWindow;
            history::check_windows(&positions, limit.limit(), limit.period(), weighted)
        }
        Algorithm::AnchoredWindow => {
            let positions: Vec<_> = log.iter().map(|r| (r.position, r.outcome)).collect();
            history::check_anchored_windows(&positions, limit.limit(), limit.period())
        }
        Algorithm::SlidingLog => {
            history::check_in_any_period(&spans(), limit.limit(), limit.period())
        }
        _ => history::check_rate(&spans(), limit.burst(), limit.interval()),
    }
}

/// Where a worker records its decisions, and whether a sabotaged run has been caught.
struct Recorder {
    limit: Limit,
    log: Log,
    caught: Arc<AtomicBool>,
}

impl Recorder {
    /// Whether to make another decision: while the check runs; a sabotaged run (whose record
    /// can be judged: no lossy fault) also past its deadline until the checker finds [`CAUGHT`]
    /// violations in the record, within [`CheckCtx::running_while`]'s bound.
    fn more(&self, ctx: &CheckCtx) -> bool {
        if ctx.running() {
            return true;
        }
        if !ctx.sabotage || ctx.lossy() || self.caught.load(Ordering::SeqCst) {
            return false;
        }
        let caught = judge(&self.limit, &locked(&self.log)).violations.len() >= CAUGHT;
        self.caught.fetch_or(caught, Ordering::SeqCst);
        ctx.running_while(!caught)
    }
}

/// Decides while [`Recorder::more`]; returns the decisions made.
async fn worker(
    ctx: CheckCtx,
    decider: Decider,
    record: Recorder,
    offset: Option<i64>,
) -> CheckResult<u64> {
    let period = record.limit.period();
    let algorithm = record.limit.algorithm();
    let mut decisions = 0;
    while record.more(&ctx) {
        let sent = ctx.clock();
        let result = ctx.call(decider.decide()).await;
        let span = sent..ctx.clock();
        let (outcome, position) = match result {
            Ok((admitted, reset)) => {
                let position = match (admitted, offset, windows_in_reset(algorithm)) {
                    (true, Some(offset), Some(n)) => {
                        clock::position(&span, reset, offset, period, n)
                    }
                    (true, Some(offset), None) => clock::anchored_end(&span, reset, offset, period),
                    _ => None,
                };
                (Some(admitted), position)
            }
            Err(e) => (ctx.outcome(Err(e))?, None),
        };
        locked(&record.log).push(Record {
            span,
            position,
            outcome,
        });
        decisions += 1;
        ctx.tick();
    }
    Ok(decisions)
}
