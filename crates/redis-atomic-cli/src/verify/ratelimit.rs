//! The rate limit's check: many tasks hammer one identity limited to `LIMIT` per 1 s fixed
//! window (on the server's clock) and count what was admitted in each window.
//!
//! Which window a decision fell in is computed, not assumed: `reset_after` is the time left to
//! the window's end, so the server's clock at the decision plus `reset_after` is a multiple of the
//! window. The server's clock is estimated from ours plus an offset measured with `TIME` at the
//! start; the estimate only needs to be within half a window (500 ms), and the end is rounded to
//! the nearest multiple. Violations: admitted units beyond `LIMIT` in any window.
//!
//! Under faults a decision whose outcome is unknown is not counted as admitted (the check only
//! needs acknowledged admissions ≤ limit), and a decision that took longer than 200 ms (a stall,
//! retries) is not attributed to a window: its window cannot be told for sure. When a fault may
//! lose acknowledged writes (primary kill), counts can restart mid-window: nothing is checked.

use super::{CheckCtx, CheckReport};
use futures::future::BoxFuture;
use redis_atomic::ratelimit::{Decision, Limit, RateLimiter};
use redis_atomic::Client;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const INVARIANT: &str = "admitted ≤ limit per window";
const LIMIT: u64 = 50;
const WINDOW_US: i64 = 1_000_000;

#[derive(Default)]
struct Shared {
    /// Units admitted per window index.
    admitted: Mutex<HashMap<i64, u64>>,
    decisions: Mutex<u64>,
}

pub(super) fn run(ctx: CheckCtx) -> BoxFuture<'static, anyhow::Result<CheckReport>> {
    Box::pin(async move {
        let offset = clock_offset(&ctx.client).await?;
        let shared = Arc::new(Shared::default());
        let limit = Limit::fixed_window(LIMIT, Duration::from_micros(WINDOW_US as u64))?;
        let limiter = RateLimiter::new(ctx.client.clone(), ctx.keyspace.clone(), limit);
        let deadline = Instant::now() + ctx.duration;
        let mut tasks = Vec::new();
        for _ in 0..ctx.concurrency {
            let (ctx, shared, limiter) = (ctx.clone(), shared.clone(), limiter.clone());
            tasks.push(tokio::spawn(async move {
                worker(ctx, shared, limiter, offset, deadline).await
            }));
        }
        for task in tasks {
            task.await??;
        }
        let admitted = shared.admitted.lock().unwrap_or_else(|p| p.into_inner());
        let lossy = ctx.fault.is_some_and(|f| f.loses_acknowledged_writes());
        let violations = if lossy {
            0
        } else {
            admitted.values().map(|n| n.saturating_sub(LIMIT)).sum()
        };
        let operations = *shared.decisions.lock().unwrap_or_else(|p| p.into_inner());
        Ok(CheckReport::new(
            "ratelimit",
            INVARIANT,
            operations,
            violations,
        ))
    })
}

fn local_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}

/// Server clock minus ours (µs), from one `TIME` round trip (its midpoint).
async fn clock_offset(client: &Client) -> anyhow::Result<i64> {
    let before = local_us();
    let t: Vec<String> = redis::from_redis_value(client.command(&redis::cmd("TIME")).await?)?;
    let after = local_us();
    let server = t[0].parse::<i64>()? * 1_000_000 + t[1].parse::<i64>()?;
    Ok(server - (before + after) / 2)
}

async fn worker(
    ctx: CheckCtx,
    shared: Arc<Shared>,
    limiter: RateLimiter,
    offset: i64,
    deadline: Instant,
) -> anyhow::Result<()> {
    let naive_key = ctx.keyspace.key("verify", 1, "naive", &[])?;
    while Instant::now() < deadline {
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
            *shared
                .admitted
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .entry(w)
                .or_default() += 1;
        }
        *shared.decisions.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        ctx.progress.inc(1);
    }
    Ok(())
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
