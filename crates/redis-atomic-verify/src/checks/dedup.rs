//! The dedup check: every task walks the same sequence of event ids (`e0`, `e1`, …) and asks
//! [`Dedup::first_seen`] for each, so all tasks race on every id. Per id exactly one caller may
//! be told "first": two is a duplicate let through; none, when every caller got a definite
//! answer, is an event dropped as a duplicate of nobody.
//!
//! Under faults a call whose reply is lost is asked again with the same token (the library's
//! advice: the same token gets the same answer); if it stays unknown, that id may have no "first"
//! answer. A call refused before anything ran (`LOADING` after a restart, `OOM`) says nothing
//! about the id: an id every caller was refused for was recorded by nobody, which is no loss. When a fault may lose acknowledged writes (primary kill), a recorded sighting can
//! vanish and a later caller be told "first" again — the documented at-least-once case — so
//! only dropped events count there. Judged by the testkit's `check_accepted_once` (one "first"
//! per id, none lost), or `check_none_lost` under a primary kill.

use super::{locked, unseen, CheckCtx, CheckResult, Findings};
use redis_atomic::dedup::Dedup;
use redis_atomic::lease::OwnerToken;
use redis_atomic::Error;
use redis_atomic_testkit::history;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub(crate) const INVARIANT: &str = "exactly one caller sees each event first";

/// Per event id, every answer that says something about it: Some(true) told "first",
/// Some(false) told "seen", None left unknown (a caller refused before anything ran has none).
type Answers = Arc<Mutex<HashMap<String, Vec<Option<bool>>>>>;

/// Per event id, how each answer came about (`first`, `seen`, `not sent: <error>`, `unknown`):
/// printed with a violation, so a failed run says what each caller was told.
type Trail = Arc<Mutex<HashMap<String, Vec<String>>>>;

pub(crate) async fn run(ctx: CheckCtx) -> CheckResult<Findings> {
    let dedup = Dedup::new(ctx.client.clone(), ctx.keyspace.clone());
    // Ids must outlive the run (and a grace for the final stragglers).
    let ttl = ctx.duration * 4 + Duration::from_secs(60);
    let (answers, trail) = (Answers::default(), Trail::default());
    let calls = ctx
        .run_workers(|_, ctx| worker(ctx, dedup.clone(), answers.clone(), trail.clone(), ttl))
        .await?;
    let answers = locked(&answers);
    let mut verdict = if ctx.lossy() {
        history::check_none_lost(&answers)
    } else {
        history::check_accepted_once(&answers)
    };
    explain(&mut verdict.violations, &locked(&trail));
    Ok(Findings::new(calls.iter().sum()).with(verdict))
}

/// Appends to each violation (`<event>: ...`) what every caller of that event was told.
fn explain(violations: &mut [String], trail: &HashMap<String, Vec<String>>) {
    for violation in violations {
        let event = violation.split(':').next().unwrap_or_default();
        if let Some(answers) = trail.get(event) {
            violation.push_str(&format!(" (answers: {})", answers.join("; ")));
        }
    }
}

/// Asks for `e0`, `e1`, … until the deadline; returns the calls made.
async fn worker(
    ctx: CheckCtx,
    dedup: Dedup,
    answers: Answers,
    trail: Trail,
    ttl: Duration,
) -> CheckResult<u64> {
    let mut id = 0u64;
    while ctx.running() {
        let event = format!("e{id}");
        let answer = if ctx.sabotage {
            ctx.call(naive(&ctx, &dedup, &event, ttl)).await.map(Some)
        } else {
            ask(&ctx, &dedup, &event, ttl).await
        };
        let (answer, how) = match answer {
            Ok(answer) => (Some(answer), label(answer)),
            // Surely nothing ran: this caller recorded nothing and excuses nothing — and says
            // nothing about the event, so no answer is kept. (Counted as "seen", an event every
            // caller was refused for, by a restart's LOADING or a full memory, looked lost
            // although nobody recorded it.) Any other error is absorbed: unknown, or (in a
            // clean run, where it proves nothing) the check's failure.
            Err(e) => {
                let how = format!("not sent: {e}");
                match ctx.outcome(Err(e))? {
                    Some(_) => (None, how),
                    None => (Some(None), label(None)),
                }
            }
        };
        locked(&trail).entry(event.clone()).or_default().push(how);
        if let Some(answer) = answer {
            locked(&answers).entry(event).or_default().push(answer);
        }
        ctx.tick();
        id += 1;
    }
    Ok(id)
}

fn label(answer: Option<bool>) -> String {
    match answer {
        Some(true) => "first",
        Some(false) => "seen",
        None => "unknown",
    }
    .to_string()
}

/// The library's answer, asking again with the same token while the outcome is unknown or the
/// reply unusable (bounded); None when it stays unknown (counted once as an unknown outcome).
/// An error that says nothing ran before anything may have is returned, as is one that is
/// neither refusal nor unknown.
async fn ask(
    ctx: &CheckCtx,
    dedup: &Dedup,
    event: &str,
    ttl: Duration,
) -> Result<Option<bool>, Error> {
    let token = OwnerToken::random();
    let mut may_have_run = false;
    for _ in 0..3 {
        match ctx.call(dedup.first_seen_as(event, ttl, &token)).await {
            Ok(first) => return Ok(Some(first)),
            Err(e) if e.nothing_ran() && !may_have_run => return Err(e),
            Err(e) if e.nothing_ran() || unseen(&e) => {
                may_have_run |= !e.nothing_ran();
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(e) => return Err(e),
        }
    }
    ctx.count_unknown();
    Ok(None)
}

/// What the check must flag: `GET`, then `SET` when absent (two commands, no `NX`).
async fn naive(ctx: &CheckCtx, dedup: &Dedup, event: &str, ttl: Duration) -> Result<bool, Error> {
    let key = dedup.keys(event)?.seen;
    let seen = ctx.client.command(redis::cmd("GET").arg(&key)).await?;
    if seen != redis::Value::Nil {
        return Ok(false);
    }
    ctx.race_gap().await; // the gap another task slips into
    ctx.client
        .command(
            redis::cmd("SET")
                .arg(&key)
                .arg("x")
                .arg("PX")
                .arg(ttl.as_millis() as u64),
        )
        .await?;
    Ok(true)
}
