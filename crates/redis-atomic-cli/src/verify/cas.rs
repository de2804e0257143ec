//! The CAS check: tasks increment one counter through `Cas::update` (WATCH, read, MULTI/EXEC).
//! Violations: the difference between the final counter and the number of `Committed` outcomes
//! (a lost update, or a write applied without being reported).

use super::{CheckCtx, CheckReport};
use futures::future::BoxFuture;
use redis_atomic::cas::{Cas, CasOutcome, Decision, Read};
use redis_atomic::write::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

const INVARIANT: &str = "final counter equals committed increments";

pub(super) fn run(ctx: CheckCtx) -> BoxFuture<'static, anyhow::Result<CheckReport>> {
    Box::pin(async move {
        let key = ctx.keyspace.key("verify", 1, "cas", &["counter"])?;
        let committed = Arc::new(AtomicU64::new(0));
        let deadline = Instant::now() + ctx.duration;
        let mut tasks = Vec::new();
        for _ in 0..ctx.concurrency {
            let (ctx, key, committed) = (ctx.clone(), key.clone(), committed.clone());
            tasks.push(tokio::spawn(async move {
                let cas = Cas::new(ctx.client.clone());
                while Instant::now() < deadline {
                    if increment(&ctx, &cas, &key).await? {
                        committed.fetch_add(1, Ordering::SeqCst);
                    }
                    ctx.progress.inc(1);
                }
                anyhow::Ok(())
            }));
        }
        for task in tasks {
            task.await??;
        }
        let stored: Option<u64> =
            redis::from_redis_value(ctx.client.command(redis::cmd("GET").arg(&key)).await?)?;
        let committed = committed.load(Ordering::SeqCst);
        let violations = committed.abs_diff(stored.unwrap_or(0));
        Ok(CheckReport::new("cas", INVARIANT, committed, violations))
    })
}

/// One increment; whether it committed. Sabotaged: GET then SET, no WATCH.
async fn increment(ctx: &CheckCtx, cas: &Cas, key: &str) -> anyhow::Result<bool> {
    if ctx.sabotage {
        let v: Option<u64> =
            redis::from_redis_value(ctx.client.command(redis::cmd("GET").arg(key)).await?)?;
        let next = v.unwrap_or(0) + 1;
        ctx.client
            .command(redis::cmd("SET").arg(key).arg(next))
            .await?;
        return Ok(true);
    }
    let out = cas
        .update(&[Read::get(key)], |s| {
            let next = s.get::<Option<u64>>(0)?.unwrap_or(0) + 1;
            Ok(Decision::commit(
                vec![Write::set(key, next.to_string())],
                (),
            ))
        })
        .await?;
    Ok(matches!(out, CasOutcome::Committed(())))
}
