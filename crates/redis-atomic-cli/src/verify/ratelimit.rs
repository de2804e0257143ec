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
                return Ok(time_us(time)? - (before + after) / 2);
            }
            Err(e) if last => return Err(e.into()),
            _ => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
}

/// The server clock in µs from a `TIME` reply, `[seconds, microseconds]` as decimal texts.
/// Any other shape, or numbers out of range (whose product would overflow), is a typed
/// [`redis_atomic::Error::BadReply`]: a server's reply never panics the check.
fn time_us(reply: redis::Value) -> Result<i64, redis_atomic::Error> {
    let bad = |detail: &str| redis_atomic::Error::BadReply {
        script: "TIME",
        detail: detail.into(),
    };
    let parts: Vec<String> =
        redis::from_redis_value(reply).map_err(|_| bad("not an array of texts"))?;
    let [secs, micros] = parts.as_slice() else {
        return Err(bad("not two items"));
    };
    let number = |text: &str| text.parse::<i64>().ok().filter(|n| *n >= 0);
    let (Some(secs), Some(micros)) = (number(secs), number(micros)) else {
        return Err(bad("not two non-negative integers"));
    };
    secs.checked_mul(1_000_000)
        .and_then(|us| us.checked_add(micros))
        .filter(|_| micros < 1_000_000)
        .ok_or_else(|| bad("seconds or microseconds out of range"))
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use redis::Value;
    use redis_atomic_testkit::arb;

    fn time(parts: &[&str]) -> Value {
        Value::Array(
            parts
                .iter()
                .map(|p| Value::BulkString(p.as_bytes().to_vec()))
                .collect(),
        )
    }

    /// A real reply reads as µs; wrong shapes and numbers that would overflow are typed errors
    /// (the seconds were once multiplied unchecked).
    #[test]
    fn time_replies() {
        assert_eq!(
            time_us(time(&["1700000000", "250"])).unwrap(),
            1_700_000_000_000_250
        );
        for bad in [
            time(&["1"]),
            time(&["1", "2", "3"]),
            time(&["9223372036854775807", "0"]),
            time(&["-1", "0"]),
            time(&["1", "1000000"]),
            time(&["x", "0"]),
            Value::Nil,
            Value::Int(5),
        ] {
            assert!(matches!(
                time_us(bad),
                Err(redis_atomic::Error::BadReply { script: "TIME", .. })
            ),);
        }
    }

    proptest! {
        /// Any reply to `TIME` is a time or a typed error, never a panic.
        #[test]
        fn time_answers_any_value(reply in arb::reply()) {
            let _ = time_us(reply);
        }
    }
}
