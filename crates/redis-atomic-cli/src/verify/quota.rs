//! The quota's check: many tasks add and refund random amounts to one counter bounded to
//! `[0, MAX]`. Violations: any value reported outside the bounds, and a final counter that
//! differs from the sum of the deltas reported applied (a lost or phantom add).
//!
//! Under faults an add with an unknown outcome may or may not have applied: the final counter
//! must be explained by the acknowledged deltas plus some of the unknown ones
//! (`history::check_counter`). When a fault may lose acknowledged writes (primary kill), only the
//! bounds are checked.

use super::{CheckCtx, CheckReport};
use futures::future::BoxFuture;
use redis_atomic::quota::{Bounded, Bounds, Quotas};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

const INVARIANT: &str = "counter stays within bounds";
const MAX: i64 = 100;

#[derive(Default)]
struct Shared {
    applied: AtomicI64,
    operations: AtomicU64,
    violations: AtomicU64,
    /// Deltas whose outcome is unknown.
    unknown: Mutex<Vec<i64>>,
}

pub(super) fn run(ctx: CheckCtx) -> BoxFuture<'static, anyhow::Result<CheckReport>> {
    Box::pin(async move {
        let quotas = Quotas::new(ctx.client.clone(), ctx.keyspace.clone());
        let shared = Arc::new(Shared::default());
        let deadline = Instant::now() + ctx.duration;
        let mut tasks = Vec::new();
        for t in 0..ctx.concurrency {
            let (ctx, shared, quotas) = (ctx.clone(), shared.clone(), quotas.clone());
            tasks.push(tokio::spawn(async move {
                worker(ctx, shared, quotas, t, deadline).await
            }));
        }
        for task in tasks {
            task.await??;
        }
        let value: Option<i64> = redis::from_redis_value(
            ctx.final_command(redis::cmd("GET").arg(quotas.keys("verify")?.value))
                .await?,
        )?;
        let value = value.unwrap_or(0);
        let mut deltas: Vec<(i64, Option<bool>)> =
            vec![(shared.applied.load(Ordering::SeqCst), Some(true))];
        let unknown = shared.unknown.lock().unwrap_or_else(|p| p.into_inner());
        deltas.extend(unknown.iter().map(|d| (*d, None)));
        let lossy = ctx.fault.is_some_and(|f| f.loses_acknowledged_writes());
        let lost = if lossy {
            0
        } else {
            redis_atomic_testkit::history::check_counter(0, value, &deltas)
                .violations
                .len() as u64
        };
        let outside = u64::from(!(0..=MAX).contains(&value));
        let violations = shared.violations.load(Ordering::SeqCst) + lost + outside;
        let operations = shared.operations.load(Ordering::SeqCst);
        Ok(CheckReport::new("quota", INVARIANT, operations, violations))
    })
}

async fn worker(
    ctx: CheckCtx,
    shared: Arc<Shared>,
    quotas: Quotas,
    task: usize,
    deadline: Instant,
) -> anyhow::Result<()> {
    let bounds = Bounds::up_to(MAX)?;
    let mut i = task;
    while Instant::now() < deadline {
        i += 1;
        // Mostly consumption, some refunds: the counter runs into both bounds.
        let delta = if i % 3 == 0 { -7 } else { 1 + (i % 5) as i64 };
        let outcome = if ctx.sabotage {
            naive(&ctx, &quotas, delta).await
        } else {
            quotas.add("verify", delta, bounds, None).await
        };
        let outcome = match outcome {
            Ok(o) => o,
            Err(e) => {
                if !e.nothing_ran() {
                    shared
                        .unknown
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push(delta);
                }
                ctx.absorb(e)?;
                continue;
            }
        };
        let value = match outcome {
            Bounded::Applied { value } => {
                shared.applied.fetch_add(delta, Ordering::SeqCst);
                value
            }
            Bounded::Refused { value } => value,
            _ => 0,
        };
        if !(0..=MAX).contains(&value) {
            shared.violations.fetch_add(1, Ordering::SeqCst);
        }
        shared.operations.fetch_add(1, Ordering::SeqCst);
        ctx.progress.inc(1);
    }
    Ok(())
}

/// What the check must flag: read, check and add as separate commands.
async fn naive(
    ctx: &CheckCtx,
    quotas: &Quotas,
    delta: i64,
) -> Result<Bounded, redis_atomic::Error> {
    let current = quotas.get("verify").await?;
    if !(0..=MAX).contains(&(current + delta)) {
        return Ok(Bounded::Refused { value: current });
    }
    let key = quotas.keys("verify")?.value;
    let value = ctx
        .client
        .command(redis::cmd("INCRBY").arg(&key).arg(delta))
        .await?;
    let value = redis::from_redis_value(value).map_err(|e| redis_atomic::Error::BadReply {
        script: "INCRBY",
        detail: e.to_string(),
    })?;
    Ok(Bounded::Applied { value })
}
