//! The fenced-write check: tasks take a lock with a short lease and write their fence to the
//! resource's key through `fenced_write`; every fourth holder pauses past its lease first (a
//! zombie). Four resources (four hash tags, so a failover or stall of one node does not stop the
//! whole check), each judged on its own.
//! Violations: a write applied with a fence below one whose write was acknowledged before it was
//! sent (the server applied that one first, so the state went back), and a final value that is
//! neither the largest acknowledged fence nor a larger one whose write had an unknown outcome.
//!
//! Under faults, errors are outcomes: an unknown one may have applied (its fence is remembered as
//! a possible final value), a refused one did not. Under a primary kill the fence record itself
//! may be lost with the primary (asynchronous replication), so the state may legitimately go back
//! once: there only the final value is checked (it is a fence some write carried). A sabotaged
//! run (plain `SET`, no fence check) is judged by the strict rule everywhere.

use super::{CheckCtx, CheckReport};
use futures::future::BoxFuture;
use redis_atomic::fenced::{Fenced, FencedWrites};
use redis_atomic::lease::OwnerToken;
use redis_atomic::lock::{Acquire, LockGuard, Locks};
use redis_atomic::write::Write;
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const INVARIANT: &str = "no write with an older fence after a newer one";
const LEASE: Duration = Duration::from_millis(30);
const RESOURCES: usize = 4;

/// What one resource's history needs.
#[derive(Default)]
struct Resource {
    /// Largest fence whose write was acknowledged as applied.
    acked: AtomicU64,
    /// Fences whose write had an unknown outcome (may be the final value).
    unknown: Mutex<HashSet<u64>>,
    went_back: AtomicU64,
}

#[derive(Default)]
struct Shared {
    resources: [Resource; RESOURCES],
    writes: AtomicU64,
}

fn resource(i: usize) -> String {
    format!("verify-{i}")
}

pub(super) fn run(ctx: CheckCtx) -> BoxFuture<'static, anyhow::Result<CheckReport>> {
    Box::pin(async move {
        let fenced = FencedWrites::new(ctx.client.clone(), ctx.keyspace.clone());
        let shared = Arc::new(Shared::default());
        let deadline = Instant::now() + ctx.duration;
        let mut tasks = Vec::new();
        for t in 0..ctx.concurrency {
            let (ctx, fenced, shared) = (ctx.clone(), fenced.clone(), shared.clone());
            tasks.push(tokio::spawn(async move {
                worker(t, ctx, fenced, shared, deadline).await
            }));
        }
        for task in tasks {
            task.await??;
        }
        let lossy = ctx.fault.is_some_and(|f| f.loses_acknowledged_writes()) && !ctx.sabotage;
        let mut violations = 0;
        for (i, r) in shared.resources.iter().enumerate() {
            let data = fenced.key(&resource(i), "value")?;
            let stored: Option<u64> =
                redis::from_redis_value(ctx.final_command(redis::cmd("GET").arg(&data)).await?)?;
            violations += judge(r, stored, lossy);
        }
        Ok(CheckReport::new(
            "fenced-write",
            INVARIANT,
            shared.writes.load(Ordering::SeqCst),
            violations,
        ))
    })
}

/// Violations of one resource: writes that went back, and a wrong final value.
fn judge(r: &Resource, stored: Option<u64>, lossy: bool) -> u64 {
    let acked = r.acked.load(Ordering::SeqCst);
    let unknown = r.unknown.lock().unwrap_or_else(|p| p.into_inner());
    let final_ok = match stored {
        None => acked == 0,
        Some(v) if lossy => v == acked || unknown.contains(&v) || v <= acked,
        Some(v) => v == acked || (v > acked && unknown.contains(&v)),
    };
    let mut violations = u64::from(!final_ok);
    if !lossy {
        violations += r.went_back.load(Ordering::SeqCst);
    }
    violations
}

async fn worker(
    t: usize,
    ctx: CheckCtx,
    fenced: FencedWrites,
    shared: Arc<Shared>,
    deadline: Instant,
) -> anyhow::Result<()> {
    let locks = Locks::new(ctx.client.clone(), ctx.keyspace.clone());
    let (name, r) = (resource(t % RESOURCES), &shared.resources[t % RESOURCES]);
    let data = fenced.key(&name, "value")?;
    let mut n = 0usize;
    // Past the deadline only until the first write lands (a fault such as a failover can block
    // every request for the whole run): bounded, the injector has healed the server by then.
    let grace = deadline + ctx.duration * 4;
    while Instant::now() < deadline
        || (shared.writes.load(Ordering::SeqCst) == 0 && Instant::now() < grace)
    {
        let Some(guard) = acquire(&ctx, &locks, &name).await? else {
            tokio::time::sleep(Duration::from_millis(1)).await;
            continue;
        };
        n += 1;
        if (t + n) % 4 == 0 {
            tokio::time::sleep(LEASE * 2).await; // a zombie: paused past its lease
        }
        let floor = r.acked.load(Ordering::SeqCst);
        let fence = guard.fence().0;
        match write(&ctx, &fenced, &data, &guard).await? {
            Some(true) => {
                if fence < floor {
                    r.went_back.fetch_add(1, Ordering::SeqCst);
                }
                r.acked.fetch_max(fence, Ordering::SeqCst);
            }
            Some(false) => {}
            None => {
                let mut unknown = r.unknown.lock().unwrap_or_else(|p| p.into_inner());
                unknown.insert(fence);
            }
        }
        shared.writes.fetch_add(1, Ordering::SeqCst);
        ctx.progress.inc(1);
        if let Err(e) = guard.release().await {
            ctx.absorb(e)?;
        }
    }
    Ok(())
}

/// The lock, retrying an unknown outcome with the same owner token (bounded).
async fn acquire(
    ctx: &CheckCtx,
    locks: &Locks,
    resource: &str,
) -> anyhow::Result<Option<LockGuard>> {
    let token = OwnerToken::random();
    for _ in 0..3 {
        match locks.acquire_with_token(resource, &token, LEASE).await {
            Ok(Acquire::Acquired(g)) => return Ok(Some(g)),
            Ok(_) => return Ok(None),
            Err(e) if e.is_outcome_unknown() => ctx.absorb(e)?,
            Err(e) => {
                ctx.absorb(e)?;
                return Ok(None);
            }
        }
    }
    Ok(None)
}

/// The fenced write (a plain `SET` when sabotaged): Some(true) applied, Some(false) refused or
/// surely not run, None unknown.
async fn write(
    ctx: &CheckCtx,
    fenced: &FencedWrites,
    data: &str,
    guard: &LockGuard,
) -> anyhow::Result<Option<bool>> {
    let fence = guard.fence();
    let result = if ctx.sabotage {
        let cmd = redis::cmd("SET").arg(data).arg(fence.0).clone();
        ctx.client.command(&cmd).await.map(|_| true)
    } else {
        let w = [Write::set(data, fence.0.to_string())];
        fenced
            .fenced_write(guard.resource(), fence, &w)
            .await
            .map(|out| matches!(out, Fenced::Applied { .. }))
    };
    match result {
        Ok(applied) => Ok(Some(applied)),
        Err(e) if e.nothing_ran() => {
            ctx.absorb(e)?;
            Ok(Some(false))
        }
        Err(e) => {
            ctx.absorb(e)?;
            Ok(None)
        }
    }
}
