//! The dedup check: all tasks walk the same sequence of event ids at once, so every id is
//! claimed concurrently by every task. Violations: ids with a number of `true` answers other
//! than exactly one.

use super::{CheckCtx, CheckReport};
use futures::future::BoxFuture;
use redis_atomic::dedup::Dedup;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const INVARIANT: &str = "exactly one first sighting per event id";

pub(super) fn run(ctx: CheckCtx) -> BoxFuture<'static, anyhow::Result<CheckReport>> {
    Box::pin(async move {
        let firsts: Arc<Mutex<HashMap<u64, u64>>> = Arc::default();
        let deadline = Instant::now() + ctx.duration;
        let mut tasks = Vec::new();
        for _ in 0..ctx.concurrency {
            let (ctx, firsts) = (ctx.clone(), firsts.clone());
            tasks.push(tokio::spawn(async move {
                let dedup = Dedup::new(ctx.client.clone(), ctx.keyspace.clone());
                let mut id = 0u64;
                while Instant::now() < deadline {
                    let first = sighting(&ctx, &dedup, id).await?;
                    *firsts
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .entry(id)
                        .or_default() += u64::from(first);
                    ctx.progress.inc(1);
                    id += 1;
                }
                anyhow::Ok(())
            }));
        }
        for task in tasks {
            task.await??;
        }
        let firsts = firsts.lock().unwrap_or_else(|p| p.into_inner());
        let violations = firsts.values().filter(|n| **n != 1).count() as u64;
        Ok(CheckReport::new(
            "dedup",
            INVARIANT,
            firsts.len() as u64,
            violations,
        ))
    })
}

/// One sighting. Sabotaged: `EXISTS` then `SET` (check-then-act, two round trips).
async fn sighting(ctx: &CheckCtx, dedup: &Dedup, id: u64) -> anyhow::Result<bool> {
    let event = format!("evt-{id}");
    if !ctx.sabotage {
        return Ok(dedup.first_seen(&event, Duration::from_secs(600)).await?);
    }
    let key = ctx.keyspace.key("dedup", 1, &event, &[])?;
    let exists: bool =
        redis::from_redis_value(ctx.client.command(redis::cmd("EXISTS").arg(&key)).await?)?;
    if !exists {
        ctx.client
            .command(redis::cmd("SET").arg(&key).arg(1).arg("PX").arg(600_000))
            .await?;
    }
    Ok(!exists)
}
