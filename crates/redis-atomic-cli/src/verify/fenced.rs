//! The fenced-write check: tasks take a lock with a short lease and write their fence to one
//! key through `fenced_write`; every fourth holder pauses past its lease first (a zombie).
//! Violations: a write applied with a fence below one whose write was acknowledged before it was
//! sent (the server applied that one first, so the state went back), and a final value other
//! than the largest acknowledged fence.

use super::{CheckCtx, CheckReport};
use futures::future::BoxFuture;
use redis_atomic::fenced::{Fenced, FencedWrites};
use redis_atomic::lock::{Acquire, Locks};
use redis_atomic::write::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const INVARIANT: &str = "no write with an older fence after a newer one";
const LEASE: Duration = Duration::from_millis(30);

#[derive(Default)]
struct Shared {
    acked: AtomicU64,
    writes: AtomicU64,
    violations: AtomicU64,
}

pub(super) fn run(ctx: CheckCtx) -> BoxFuture<'static, anyhow::Result<CheckReport>> {
    Box::pin(async move {
        let fenced = FencedWrites::new(ctx.client.clone(), ctx.keyspace.clone());
        let data = fenced.key("verify", "value")?;
        let shared = Arc::new(Shared::default());
        let deadline = Instant::now() + ctx.duration;
        let mut tasks = Vec::new();
        for t in 0..ctx.concurrency {
            let (ctx, fenced, data, shared) =
                (ctx.clone(), fenced.clone(), data.clone(), shared.clone());
            tasks.push(tokio::spawn(async move {
                worker(t, ctx, fenced, data, shared, deadline).await
            }));
        }
        for task in tasks {
            task.await??;
        }
        let stored: Option<u64> =
            redis::from_redis_value(ctx.client.command(redis::cmd("GET").arg(&data)).await?)?;
        let acked = shared.acked.load(Ordering::SeqCst);
        let wrong_final = u64::from(acked != 0 && stored != Some(acked));
        Ok(CheckReport::new(
            "fenced-write",
            INVARIANT,
            shared.writes.load(Ordering::SeqCst),
            shared.violations.load(Ordering::SeqCst) + wrong_final,
        ))
    })
}

async fn worker(
    t: usize,
    ctx: CheckCtx,
    fenced: FencedWrites,
    data: String,
    shared: Arc<Shared>,
    deadline: Instant,
) -> anyhow::Result<()> {
    let locks = Locks::new(ctx.client.clone(), ctx.keyspace.clone());
    let mut n = 0usize;
    while Instant::now() < deadline {
        let Acquire::Acquired(guard) = locks.acquire("verify", LEASE).await? else {
            tokio::time::sleep(Duration::from_millis(1)).await;
            continue;
        };
        n += 1;
        if (t + n) % 4 == 0 {
            tokio::time::sleep(LEASE * 2).await; // a zombie: paused past its lease
        }
        let floor = shared.acked.load(Ordering::SeqCst);
        let fence = guard.fence();
        let applied = if ctx.sabotage {
            ctx.client
                .command(redis::cmd("SET").arg(&data).arg(fence.0))
                .await?;
            true
        } else {
            let write = [Write::set(&data, fence.0.to_string())];
            matches!(
                fenced.fenced_write("verify", fence, &write).await?,
                Fenced::Applied { .. }
            )
        };
        if applied {
            if fence.0 < floor {
                shared.violations.fetch_add(1, Ordering::SeqCst);
            }
            shared.acked.fetch_max(fence.0, Ordering::SeqCst);
        }
        shared.writes.fetch_add(1, Ordering::SeqCst);
        ctx.progress.inc(1);
        guard.release().await?;
    }
    Ok(())
}
