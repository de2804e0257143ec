//! The semaphore's check: many tasks race for a few permits with short leases, and some holders
//! "die" (never release). Each holding is recorded as a local interval that lies inside the
//! server-side lease: from the acquire reply to the release request, or to request + lease − 1 ms
//! (leases are server µs; the millisecond covers clock-rate differences) for a holder that died
//! or overran. More than `capacity` intervals open at once is therefore more than `capacity` live
//! permits on the server. Violations: every holding that opened above capacity.
//!
//! Under faults the holder follows the library's advice: an acquire with an unknown outcome is
//! retried with the same holder token (the same permit comes back); if it stays unknown the
//! holder does no work (a permit it may hold runs out with its lease). Under a primary kill,
//! acknowledged permits may be lost with the primary (asynchronous replication), so only the
//! fences are checked there: no fence handed to two different holders.

use super::{CheckCtx, CheckReport};
use futures::future::BoxFuture;
use redis_atomic::lease::OwnerToken;
use redis_atomic::semaphore::{Acquire, Permit, Semaphore};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const INVARIANT: &str = "never more than N live permits, even when holders die";
const CAPACITY: u32 = 4;
const LEASE: Duration = Duration::from_millis(100);
/// Room for the server's wall clock and our monotonic clock ticking at slightly different rates.
const DRIFT: Duration = Duration::from_millis(1);

/// One holding: holder, fence, and the local interval surely inside its lease.
type Holding = (String, u64, Instant, Instant);

pub(super) fn run(ctx: CheckCtx) -> BoxFuture<'static, anyhow::Result<CheckReport>> {
    Box::pin(async move {
        let sem = Semaphore::new(ctx.client.clone(), &ctx.keyspace, "verify", CAPACITY)?;
        let holdings = Arc::new(Mutex::new(Vec::new()));
        let deadline = Instant::now() + ctx.duration;
        let mut tasks = Vec::new();
        for t in 0..ctx.concurrency {
            let (ctx, sem, holdings) = (ctx.clone(), sem.clone(), holdings.clone());
            tasks.push(tokio::spawn(async move {
                worker(t, ctx, sem, holdings, deadline).await
            }));
        }
        for task in tasks {
            task.await??;
        }
        let holdings = holdings.lock().unwrap_or_else(|p| p.into_inner());
        let lossy = ctx.fault.is_some_and(|f| f.loses_acknowledged_writes());
        let violations = if lossy {
            shared_fences(&holdings)
        } else {
            openings_above(&holdings, CAPACITY as usize)
        };
        Ok(CheckReport::new(
            "semaphore",
            INVARIANT,
            holdings.len() as u64,
            violations,
        ))
    })
}

async fn worker(
    t: usize,
    ctx: CheckCtx,
    sem: Semaphore,
    holdings: Arc<Mutex<Vec<Holding>>>,
    deadline: Instant,
) -> anyhow::Result<()> {
    let mut n = 0usize;
    // Past the deadline only until the first holding (a fault such as a failover can block every
    // request for the whole run): bounded, the injector has healed the server by then.
    let grace = deadline + ctx.duration * 4;
    let none_yet = || holdings.lock().is_ok_and(|h| h.is_empty());
    while Instant::now() < deadline || (none_yet() && Instant::now() < grace) {
        let holder = OwnerToken::random();
        let (permit, surely_until) = if ctx.sabotage {
            // Bypassed: everyone "holds" at once, all with fence 0.
            (None, Instant::now() + LEASE - DRIFT)
        } else {
            match acquire(&ctx, &sem, &holder).await? {
                Some(permit) => {
                    let until = permit.expires_by() - DRIFT;
                    (Some(permit), until)
                }
                None => continue,
            }
        };
        let start = Instant::now();
        tokio::time::sleep(Duration::from_millis(1)).await; // the work the permit protects
        n += 1;
        let dies = (t + n) % 16 == 0;
        let end = if dies {
            surely_until
        } else {
            Instant::now().min(surely_until)
        };
        if start < end {
            let fence = permit.as_ref().map_or(0, |p| p.fence().0);
            let mut all = holdings.lock().unwrap_or_else(|p| p.into_inner());
            all.push((holder.as_str().to_string(), fence, start, end));
        }
        ctx.progress.inc(1);
        if let (Some(permit), false) = (permit, dies) {
            if let Err(e) = permit.release().await {
                ctx.absorb(e)?;
            }
        }
    }
    Ok(())
}

/// A permit, retrying an unknown outcome with the same holder (bounded). None when full or when
/// the outcome stays unknown or failed (after a short pause).
async fn acquire(
    ctx: &CheckCtx,
    sem: &Semaphore,
    holder: &OwnerToken,
) -> anyhow::Result<Option<Permit>> {
    for _ in 0..3 {
        match sem.acquire_with_token(holder, LEASE).await {
            Ok(Acquire::Acquired(permit)) => return Ok(Some(permit)),
            Ok(Acquire::Full { retry_after }) => {
                tokio::time::sleep(retry_after.min(Duration::from_millis(2))).await;
                return Ok(None);
            }
            Ok(_) => return Ok(None),
            Err(e) if e.is_outcome_unknown() => ctx.absorb(e)?,
            Err(e) => {
                ctx.absorb(e)?;
                break;
            }
        }
    }
    tokio::time::sleep(Duration::from_millis(5)).await;
    Ok(None)
}

/// How many holdings opened while `capacity` others were already open.
fn openings_above(holdings: &[Holding], capacity: usize) -> u64 {
    let mut events: Vec<(Instant, i32)> = holdings
        .iter()
        .flat_map(|&(_, _, s, e)| [(s, 1), (e, -1)])
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

/// Fences handed to more than one holder.
fn shared_fences(holdings: &[Holding]) -> u64 {
    let mut owner: HashMap<u64, &str> = HashMap::new();
    let mut violations = 0;
    for (holder, fence, ..) in holdings {
        match owner.get(fence) {
            Some(first) if *first != holder.as_str() => violations += 1,
            Some(_) => {}
            None => {
                owner.insert(*fence, holder);
            }
        }
    }
    violations
}
