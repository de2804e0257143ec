//! The semaphore's check: many tasks race for a few permits with short leases, and some holders
//! "die" (never release). Each holding is recorded as a local interval that lies inside the
//! server-side lease (from the acquire reply to the release request, or to request + lease − 1 ms
//! for a holder that died or overran), so more than `capacity` intervals open at once is more than
//! `capacity` live permits on the server. Violations: every holding that opened above capacity.

use super::{CheckCtx, CheckReport};
use futures::future::BoxFuture;
use redis_atomic::lock::OwnerToken;
use redis_atomic::semaphore::{Acquire, Semaphore};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const INVARIANT: &str = "never more than N live permits, even when holders die";
const CAPACITY: u32 = 4;
const LEASE: Duration = Duration::from_millis(100);
/// Room for the server's wall clock and our monotonic clock ticking at slightly different rates.
const DRIFT: Duration = Duration::from_millis(1);

pub(super) fn run(ctx: CheckCtx) -> BoxFuture<'static, anyhow::Result<CheckReport>> {
    Box::pin(async move {
        let sem = Semaphore::new(ctx.client.clone(), &ctx.keyspace, "verify", CAPACITY)?;
        let intervals = Arc::new(Mutex::new(Vec::new()));
        let deadline = Instant::now() + ctx.duration;
        let mut tasks = Vec::new();
        for t in 0..ctx.concurrency {
            let (ctx, sem, intervals) = (ctx.clone(), sem.clone(), intervals.clone());
            tasks.push(tokio::spawn(async move {
                worker(t, ctx, sem, intervals, deadline).await
            }));
        }
        for task in tasks {
            task.await??;
        }
        let intervals = intervals.lock().unwrap_or_else(|p| p.into_inner());
        let violations = openings_above(&intervals, CAPACITY as usize);
        Ok(CheckReport::new(
            "semaphore",
            INVARIANT,
            intervals.len() as u64,
            violations,
        ))
    })
}

async fn worker(
    t: usize,
    ctx: CheckCtx,
    sem: Semaphore,
    intervals: Arc<Mutex<Vec<(Instant, Instant)>>>,
    deadline: Instant,
) -> anyhow::Result<()> {
    let mut n = 0usize;
    while Instant::now() < deadline {
        let sent = Instant::now();
        let permit = if ctx.sabotage {
            None // bypassed: everyone "holds" at once
        } else {
            match sem.acquire(&OwnerToken::random(), LEASE).await? {
                Acquire::Acquired { permit, .. } => Some(permit),
                Acquire::Full { retry_after } => {
                    tokio::time::sleep(retry_after.min(Duration::from_millis(2))).await;
                    continue;
                }
                _ => continue,
            }
        };
        let start = Instant::now();
        tokio::time::sleep(Duration::from_millis(1)).await; // the work the permit protects
        n += 1;
        let dies = (t + n) % 16 == 0;
        let surely_until = sent + LEASE - DRIFT;
        let end = if dies {
            surely_until
        } else {
            Instant::now().min(surely_until)
        };
        if start < end {
            intervals
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push((start, end));
        }
        ctx.progress.inc(1);
        if let (Some(permit), false) = (permit, dies) {
            sem.release(&permit).await?;
        }
    }
    Ok(())
}

/// How many intervals opened while `capacity` others were already open.
fn openings_above(intervals: &[(Instant, Instant)], capacity: usize) -> u64 {
    let mut events: Vec<(Instant, i32)> = intervals
        .iter()
        .flat_map(|&(s, e)| [(s, 1), (e, -1)])
        .collect();
    events.sort(); // at equal instants, ends (-1) before starts
    let (mut open, mut violations) = (0usize, 0u64);
    for (_, delta) in events {
        if delta > 0 {
            open += 1;
            if open > capacity {
                violations += 1;
            }
        } else {
            open = open.saturating_sub(1);
        }
    }
    violations
}
