//! The lock's check: many tasks race for one lock and do a deliberately non-atomic
//! read-modify-write of a Redis counter inside the critical section.
//!
//! Violations counted: two local holders at once, a fence not greater than the previous holder's,
//! a release that finds the lease gone, and a final counter that differs from the number of
//! critical sections (a lost update is what a broken lock causes).

use super::{CheckCtx, CheckReport};
use futures::future::BoxFuture;
use redis_atomic::lock::{Acquire, Locks, Release};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

const INVARIANT: &str = "one holder at a time; fences strictly increase";

#[derive(Default)]
struct Shared {
    /// Wakes one waiter when the lock is released: a scheduling hint only (exclusion is Redis'),
    /// so waiters neither busy-spin ahead of the holder's commands nor sleep through handoffs.
    nudge: Notify,
    inside: AtomicU32,
    last_fence: Mutex<u64>,
    sections: AtomicU64,
    violations: AtomicU64,
}

pub(super) fn run(ctx: CheckCtx) -> BoxFuture<'static, anyhow::Result<CheckReport>> {
    Box::pin(async move {
        let counter = ctx.keyspace.key("verify", 1, "lock", &["counter"])?;
        let shared = Arc::new(Shared::default());
        let deadline = Instant::now() + ctx.duration;
        let mut tasks = Vec::new();
        for _ in 0..ctx.concurrency {
            let (ctx, shared, counter) = (ctx.clone(), shared.clone(), counter.clone());
            tasks.push(tokio::spawn(async move {
                worker(ctx, shared, counter, deadline).await
            }));
        }
        for task in tasks {
            task.await??;
        }
        let sections = shared.sections.load(Ordering::SeqCst);
        let stored: Option<u64> =
            redis::from_redis_value(ctx.client.command(redis::cmd("GET").arg(&counter)).await?)?;
        let lost = sections.abs_diff(stored.unwrap_or(0));
        let violations = shared.violations.load(Ordering::SeqCst) + lost;
        Ok(CheckReport::new("lock", INVARIANT, sections, violations))
    })
}

async fn worker(
    ctx: CheckCtx,
    shared: Arc<Shared>,
    counter: String,
    deadline: Instant,
) -> anyhow::Result<()> {
    let locks = Locks::new(ctx.client.clone(), ctx.keyspace.clone());
    while Instant::now() < deadline {
        if ctx.sabotage {
            sabotaged_section(&ctx, &shared, &counter).await?;
            continue;
        }
        let Acquire::Acquired(guard) = locks.acquire("verify", Duration::from_secs(10)).await?
        else {
            tokio::task::yield_now().await;
            continue;
        };
        if shared.inside.fetch_add(1, Ordering::SeqCst) != 0 {
            shared.violations.fetch_add(1, Ordering::SeqCst);
        }
        {
            let mut last = shared.last_fence.lock().unwrap_or_else(|p| p.into_inner());
            if guard.fence().0 <= *last {
                shared.violations.fetch_add(1, Ordering::SeqCst);
            }
            *last = guard.fence().0;
        }
        increment(&ctx, &counter).await?;
        shared.inside.fetch_sub(1, Ordering::SeqCst);
        shared.sections.fetch_add(1, Ordering::SeqCst);
        ctx.progress.inc(1);
        if guard.release().await? == Release::NotHeld {
            shared.violations.fetch_add(1, Ordering::SeqCst);
        }
        shared.nudge.notify_one();
    }
    Ok(())
}

/// The deliberately non-atomic read-modify-write the lock must protect.
async fn increment(ctx: &CheckCtx, counter: &str) -> anyhow::Result<()> {
    let current: Option<u64> =
        redis::from_redis_value(ctx.client.command(redis::cmd("GET").arg(counter)).await?)?;
    let next = current.unwrap_or(0) + 1;
    ctx.client
        .command(redis::cmd("SET").arg(counter).arg(next))
        .await?;
    Ok(())
}

/// The critical section without the lock: what the check must flag.
async fn sabotaged_section(ctx: &CheckCtx, shared: &Shared, counter: &str) -> anyhow::Result<()> {
    if shared.inside.fetch_add(1, Ordering::SeqCst) != 0 {
        shared.violations.fetch_add(1, Ordering::SeqCst);
    }
    increment(ctx, counter).await?;
    shared.inside.fetch_sub(1, Ordering::SeqCst);
    shared.sections.fetch_add(1, Ordering::SeqCst);
    ctx.progress.inc(1);
    Ok(())
}
