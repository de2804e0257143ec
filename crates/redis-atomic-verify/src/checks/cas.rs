//! The CAS check: many tasks increment one hot counter through [`Cas::update`] (`WATCH`, `GET`,
//! decide `n + 1`, `MULTI`/`SET`/`EXEC`). Every `Committed` is one increment decided on the value
//! it replaced, so the final counter must equal the number of commits: fewer is a lost update
//! (two attempts decided on the same value), more is a phantom write. `Conflict` outcomes (every
//! attempt raced) are operations that wrote nothing.
//!
//! Judged by the testkit's `check_counter` (every commit a +1 delta). Under faults a lost `EXEC`
//! reply is an unknown outcome: that increment may or may not have applied. When a fault may lose
//! acknowledged writes (primary kill), only "never more than commits + unknowns" is checked
//! (`check_counter_lossy`): a lost write is the documented failover loss, a phantom one would
//! still be a bug.

use super::{decode, CheckCtx, CheckResult, Findings};
use redis_atomic::cas::{Cas, CasOutcome, Decision, Read};
use redis_atomic::write::Write;
use redis_atomic::{Error, RetryPolicy};
use std::time::Duration;

pub(crate) const INVARIANT: &str = "final counter = committed increments (no lost update)";

pub(crate) async fn run(ctx: CheckCtx) -> CheckResult<Findings> {
    // CAS works on the caller's own keys: this one is the check's.
    let key = ctx.keyspace.key("verify", 1, "cas", &["counter"])?;
    // Bounded, as in production; roomy enough that a hot key rarely runs out of attempts.
    let policy = RetryPolicy::contention()
        .max_attempts(64)
        .deadline(Duration::from_secs(2));
    let cas = Cas::new(ctx.client.clone()).with_policy(policy);
    let deltas = ctx
        .run_workers(|_, ctx| worker(ctx, cas.clone(), key.clone()))
        .await?
        .concat();
    let value = ctx.final_get(&key).await?.unwrap_or(0);
    Ok(Findings::new(deltas.len() as u64).with(ctx.check_counter(0, value, &deltas)))
}

/// Increments until the deadline; returns every attempt as a +1 delta with its outcome
/// (`Some(true)` committed, `Some(false)` conflicted or surely not sent, None unknown).
async fn worker(ctx: CheckCtx, cas: Cas, key: String) -> CheckResult<Vec<(i64, Option<bool>)>> {
    let mut deltas = Vec::new();
    while ctx.running() {
        let outcome = if ctx.sabotage {
            ctx.call(naive(&ctx, &key)).await
        } else {
            ctx.call(increment(&cas, &key, ctx.key_ttl())).await
        };
        let failed = outcome.is_err();
        let committed = outcome.map(|o| matches!(o, CasOutcome::Committed(_)));
        deltas.push((1, ctx.outcome(committed)?));
        if failed {
            // Under faults: give the server a moment instead of spinning on errors.
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        ctx.tick();
    }
    Ok(deltas)
}

/// One increment through the library (the counter expires after `ttl`).
async fn increment(cas: &Cas, key: &str, ttl: Duration) -> Result<CasOutcome<i64>, Error> {
    cas.update(&[Read::get(key)], |snapshot| {
        let next = snapshot.get::<Option<i64>>(0)?.unwrap_or(0) + 1;
        Ok(Decision::commit(
            vec![Write::set_px(key, next.to_string(), ttl)],
            next,
        ))
    })
    .await
}

/// What the check must flag: `GET`, then `SET` with nothing watched (the hand-rolled version).
async fn naive(ctx: &CheckCtx, key: &str) -> Result<CasOutcome<i64>, Error> {
    let current = ctx.client.command(redis::cmd("GET").arg(key)).await?;
    let current: Option<i64> = decode("GET", current)?;
    ctx.race_gap().await; // the gap another task writes into
    let next = current.unwrap_or(0) + 1;
    let ttl = u64::try_from(ctx.key_ttl().as_millis()).unwrap_or(u64::MAX);
    ctx.client
        .command(redis::cmd("SET").arg(key).arg(next).arg("PX").arg(ttl))
        .await?;
    Ok(CasOutcome::Committed(next))
}
