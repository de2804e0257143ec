//! The CAS check: many tasks increment one hot counter through [`Cas::update`] (`WATCH`, `GET`,
//! decide `n + 1`, `MULTI`/`SET`/`EXEC`). Every `Committed` is one increment decided on the value
//! it replaced, so the final counter must equal the number of commits: fewer is a lost update
//! (two attempts decided on the same value), more is a phantom write. `Conflict` outcomes (every
//! attempt raced) are operations that wrote nothing.
//!
//! Violations: the increments lost or invented. Under faults a lost `EXEC` reply is an unknown
//! outcome: that increment may or may not have applied. When a fault may lose acknowledged writes (primary kill),
//! only "never more than commits + unknowns" is checked: a lost write is the documented
//! failover loss, a phantom one would still be a bug.

use super::{CheckCtx, CheckReport};
use futures::future::BoxFuture;
use redis_atomic::cas::{Cas, CasOutcome, Decision, Read};
use redis_atomic::write::Write;
use redis_atomic::{Error, RetryPolicy};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const INVARIANT: &str = "final counter = committed increments (no lost update)";

#[derive(Default)]
struct Tally {
    operations: AtomicU64,
    committed: AtomicU64,
    unknown: AtomicU64,
}

pub(super) fn run(ctx: CheckCtx) -> BoxFuture<'static, anyhow::Result<CheckReport>> {
    Box::pin(async move {
        let key = ctx.keyspace.key("cas", 1, "verify", &["counter"])?;
        // Bounded, as in production; roomy enough that a hot key rarely runs out of attempts.
        let policy = RetryPolicy::contention()
            .max_attempts(64)
            .deadline(Duration::from_secs(2));
        let cas = Cas::new(ctx.client.clone()).with_policy(policy);
        let tally = Arc::new(Tally::default());
        let deadline = Instant::now() + ctx.duration;
        let mut tasks = Vec::new();
        for _ in 0..ctx.concurrency {
            let (ctx, cas, tally, key) = (ctx.clone(), cas.clone(), tally.clone(), key.clone());
            tasks.push(tokio::spawn(async move {
                worker(ctx, cas, tally, key, deadline).await
            }));
        }
        for task in tasks {
            task.await??;
        }
        let value: Option<i64> =
            redis::from_redis_value(ctx.final_command(redis::cmd("GET").arg(&key)).await?)?;
        let value = value.unwrap_or(0);
        let committed = tally.committed.load(Ordering::SeqCst) as i64;
        let unknown = tally.unknown.load(Ordering::SeqCst) as i64;
        // Each commit may have been lost only when the fault loses acknowledged writes; each
        // unknown may or may not have applied. Violations: increments lost or invented.
        let lossy = ctx.fault.is_some_and(|f| f.loses_acknowledged_writes());
        let low = if lossy { 0 } else { committed };
        let high = committed + unknown;
        let violations = (low - value).max(0) + (value - high).max(0);
        let violations = violations as u64;
        let operations = tally.operations.load(Ordering::SeqCst);
        Ok(CheckReport::new("cas", INVARIANT, operations, violations))
    })
}

async fn worker(
    ctx: CheckCtx,
    cas: Cas,
    tally: Arc<Tally>,
    key: String,
    deadline: Instant,
) -> anyhow::Result<()> {
    while Instant::now() < deadline {
        let outcome = if ctx.sabotage {
            naive(&ctx, &key).await
        } else {
            increment(&cas, &key).await
        };
        match outcome {
            Ok(CasOutcome::Committed(_)) => {
                tally.committed.fetch_add(1, Ordering::SeqCst);
            }
            Ok(_) => {}
            Err(e) => {
                if !e.nothing_ran() {
                    tally.unknown.fetch_add(1, Ordering::SeqCst);
                }
                ctx.absorb(e)?;
                // Under faults: give the server a moment instead of spinning on errors.
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
        tally.operations.fetch_add(1, Ordering::SeqCst);
        ctx.progress.inc(1);
    }
    Ok(())
}

/// One increment through the library.
async fn increment(cas: &Cas, key: &str) -> Result<CasOutcome<i64>, Error> {
    cas.update(&[Read::get(key)], |snapshot| {
        let next = snapshot.get::<Option<i64>>(0)?.unwrap_or(0) + 1;
        Ok(Decision::commit(
            vec![Write::set(key, next.to_string())],
            next,
        ))
    })
    .await
}

/// What the check must flag: `GET`, then `SET` with nothing watched (the hand-rolled version).
async fn naive(ctx: &CheckCtx, key: &str) -> Result<CasOutcome<i64>, Error> {
    let current = ctx.client.command(redis::cmd("GET").arg(key)).await?;
    let current: Option<i64> = redis::from_redis_value(current).map_err(|e| Error::BadReply {
        script: "GET",
        detail: e.to_string(),
    })?;
    tokio::task::yield_now().await; // the gap every other task can write into
    let next = current.unwrap_or(0) + 1;
    ctx.client
        .command(redis::cmd("SET").arg(key).arg(next))
        .await?;
    Ok(CasOutcome::Committed(next))
}
