//! The rate limit's check: many tasks hammer one identity limited to `LIMIT` per 1 s fixed
//! window (on the server's clock) and count what was admitted in each window.
//!
//! Which window a decision fell in is computed, not assumed: `reset_after` is the time left to
//! the window's end, so the server's clock at the decision plus `reset_after` is a multiple of the
//! window. The server's clock is estimated from ours plus an offset measured with `TIME` at the
//! start; the estimate only needs to be within half a window (500 ms), and the end is rounded to
//! the nearest multiple. Violations: windows with more than `LIMIT` admitted.
//!
//! Under faults a decision whose outcome is unknown is not counted as admitted (the check only
//! needs acknowledged admissions ≤ limit), and a decision that took longer than 200 ms (a stall,
//! retries) is not attributed to a window: its window cannot be told for sure. When a fault may
//! lose acknowledged writes (primary kill), counts can restart mid-window: nothing is checked.
//! Judged by the testkit's `check_admitted` (one violation per window above the limit).

use super::ctx::locked;
use super::{CheckCtx, Findings};
use redis_atomic::ratelimit::{Decision, Limit, RateLimiter};
use redis_atomic::Client;
use redis_atomic_testkit::history;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub(super) const INVARIANT: &str = "admitted ≤ limit per window";
const LIMIT: u64 = 50;
const WINDOW_US: i64 = 1_000_000;

/// (window, Some(true)) for every admission attributed to a window.
type Admitted = Arc<Mutex<Vec<(u64, Option<bool>)>>>;

pub(super) async fn run(ctx: CheckCtx) -> anyhow::Result<Findings> {
    let offset = clock_offset(&ctx.client).await?;
    let limit = Limit::fixed_window(LIMIT, Duration::from_micros(WINDOW_US as u64))?;
    let limiter = RateLimiter::new(ctx.client.clone(), ctx.keyspace.clone(), limit);
    // The sabotage's own counters (one per window of its clock), not the limiter's keys.
    let naive_key = ctx.keyspace.key("verify", 1, "naive", &[])?;
    let admitted = Admitted::default();
    let decisions = ctx
        .run_workers(|_, ctx| {
            worker(
                ctx,
                limiter.clone(),
                naive_key.clone(),
                admitted.clone(),
                offset,
            )
        })
        .await?;
    let findings = Findings::new(decisions.iter().sum());
    // When a fault may lose acknowledged writes, counts can restart mid-window: nothing to check.
    if ctx.lossy() {
        return Ok(findings);
    }
    let verdict = history::check_admitted(&locked(&admitted), LIMIT);
    Ok(findings.with(verdict))
}

fn local_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}

/// Server clock minus ours (µs), from the midpoint of a `TIME` round trip. Bookkeeping, so it
/// must not fail the check: under faults a pooled connection may still be dead from the previous
/// check's, and on a loaded machine a reply may be slow (its midpoint off by half the round
/// trip). A failed round trip, or one of 100 ms or more, is repeated, for up to 10 s.
async fn clock_offset(client: &Client) -> anyhow::Result<i64> {
    let give_up = Instant::now() + Duration::from_secs(10);
    loop {
        let before = local_us();
        let reply = client.command(&redis::cmd("TIME")).await;
        let after = local_us();
        let last = Instant::now() > give_up;
        match reply {
            Ok(time) if after - before < 100_000 || last => {
                let t: Vec<String> = redis::from_redis_value(time)?;
                let [secs, micros] = t.as_slice() else {
                    anyhow::bail!("TIME replied {t:?}");
                };
                let server = secs.parse::<i64>()? * 1_000_000 + micros.parse::<i64>()?;
                return Ok(server - (before + after) / 2);
            }
            Err(e) if last => return Err(e.into()),
            _ => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
}

/// Decides until the deadline; returns the decisions made.
async fn worker(
    ctx: CheckCtx,
    limiter: RateLimiter,
    naive_key: String,
    admitted: Admitted,
    offset: i64,
) -> anyhow::Result<u64> {
    let mut decisions = 0;
    while ctx.running() {
        let sent = local_us() + offset;
        let window = if ctx.sabotage {
            naive(&ctx, &naive_key, sent).await?
        } else {
            match limiter.consume("verify", 1).await {
                Ok(Decision::Allowed { reset_after, .. })
                    if local_us() + offset - sent < 200_000 =>
                {
                    let end = sent + i64::try_from(reset_after.as_micros()).unwrap_or(0);
                    Some((end + WINDOW_US / 2) / WINDOW_US - 1)
                }
                Ok(_) => None,
                Err(e) => ctx.absorb(e).map(|()| None)?,
            }
        };
        if let Some(w) = window {
            locked(&admitted).push((u64::try_from(w)?, Some(true)));
        }
        decisions += 1;
        ctx.progress.inc(1);
    }
    Ok(decisions)
}

/// What the check must flag: the read-check-increment done by the client, per window of its
/// own clock (seed 000's "bad version" race).
async fn naive(ctx: &CheckCtx, key: &str, now: i64) -> anyhow::Result<Option<i64>> {
    let window = now / WINDOW_US;
    let key = format!("{key}:{window}");
    let count: Option<u64> = match ctx.client.command(redis::cmd("GET").arg(&key)).await {
        Ok(v) => redis::from_redis_value(v)?,
        Err(e) => return ctx.absorb(e).map(|()| None),
    };
    if count.unwrap_or(0) >= LIMIT {
        return Ok(None);
    }
    let incr = redis::pipe()
        .cmd("INCR")
        .arg(&key)
        .cmd("PEXPIRE")
        .arg(&key)
        .arg(5000)
        .clone();
    for cmd in incr.cmd_iter() {
        if let Err(e) = ctx.client.command(cmd).await {
            return ctx.absorb(e).map(|()| None);
        }
    }
    Ok(Some(window))
}
