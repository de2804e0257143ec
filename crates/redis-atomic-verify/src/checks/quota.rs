//! The quota's check: many tasks add and refund random amounts to one counter bounded to
//! `[0, MAX]`. Violations: any value reported (or finally read) outside the bounds, and a final
//! counter that the deltas reported applied do not explain (a lost or phantom add): the testkit's
//! `check_within` and `check_counter`.
//!
//! Every add carries a request id (`Quotas::add_with_id`), so an unknown outcome is resolved by
//! resending the id (at most three times): the first run's answer comes back and nothing is
//! charged twice. Only adds still unknown after that may or may not have applied: the final
//! counter must be explained by the acknowledged deltas plus some of those. When a fault may
//! lose acknowledged writes (primary kill), acknowledged deltas may be missing too: only the
//! bounds, and that no delta was invented, are checked.
//!
//! Sabotaged, the add is a read, a check and an `INCRBY`, and every delta is ±(MAX / 2 + 1):
//! two tasks that read the same value below the middle both add and overrun the bound. The gap
//! between read and write is held open until another task has read ([`CheckCtx::race_gap`]),
//! so that happens on any machine, however few operations a loaded one gets through.

use super::{decode, locked, unseen, CheckCtx, CheckResult, Findings};
use redis_atomic::quota::{Bounded, Bounds, Quotas};
use redis_atomic_testkit::history;
use std::sync::{Arc, Mutex};

pub(crate) const INVARIANT: &str = "counter stays within bounds";
const NAME: &str = "verify";
pub(crate) const MAX: i64 = 100;

/// What a quota row's workers record (the driver's quota row too).
#[derive(Default)]
pub(crate) struct Log {
    /// Every add: its delta and whether it applied (None: unknown).
    pub(crate) deltas: Vec<(i64, Option<bool>)>,
    /// Every value a reply reported.
    pub(crate) values: Vec<i64>,
}

pub(crate) async fn run(ctx: CheckCtx) -> CheckResult<Findings> {
    let quotas = Quotas::new(ctx.client.clone(), ctx.keyspace.clone());
    let log = Arc::new(Mutex::new(Log::default()));
    // The sabotaged `INCRBY` creates the counter without a TTL; the library's add gives one.
    let keeper = ctx.keep_expiring(vec![quotas.keys(NAME, None)?.value]);
    ctx.run_workers(|t, ctx| worker(t, ctx, quotas.clone(), log.clone()))
        .await?;
    keeper.stop().await;
    let value = ctx
        .final_get(&quotas.keys(NAME, None)?.value)
        .await?
        .unwrap_or(0);
    let findings = judge(&ctx, &mut locked(&log), value);
    Ok(findings)
}

/// The record judged, with the final `value`: every value within `[0, MAX]`, the final one
/// explained by the deltas that may have applied.
pub(crate) fn judge(ctx: &CheckCtx, log: &mut Log, value: i64) -> Findings {
    let operations = log.values.len() as u64;
    log.values.push(value);
    Findings::new(operations)
        .with(history::check_within(&log.values, 0..=MAX))
        .with(ctx.check_counter(0, value, &log.deltas))
}

async fn worker(
    task: usize,
    ctx: CheckCtx,
    quotas: Quotas,
    log: Arc<Mutex<Log>>,
) -> CheckResult<()> {
    let bounds = Bounds::up_to(MAX)?;
    let mut i = task;
    while ctx.running() {
        i += 1;
        // Mostly consumption, some refunds: the counter runs into both bounds.
        let delta = match (ctx.sabotage, i % 3) {
            (true, 0) => -(MAX / 2 + 1),
            (true, _) => MAX / 2 + 1,
            (false, 0) => -7,
            (false, _) => 1 + (i % 5) as i64,
        };
        let id = format!("{task}-{i}");
        let add = || quotas.add_with_id(NAME, delta, bounds, Some(ctx.key_ttl()), &id);
        let outcome = if ctx.sabotage {
            ctx.call(naive(&ctx, &quotas, delta)).await
        } else {
            ctx.call(add()).await
        };
        let outcome = match outcome {
            // The id makes the add safe to resend: the first run's answer, charged once.
            Err(e) if !ctx.sabotage && unseen(&e) => {
                ctx.absorb(e)?;
                ctx.until_known(add).await?.ok_or(None)
            }
            Err(e) => Err(Some(e)),
            Ok(b) => Ok(b),
        };
        let (applied, value) = match outcome {
            Ok(Bounded::Applied { value }) => (Some(true), Some(value)),
            Ok(Bounded::Refused { value }) => (Some(false), Some(value)),
            Ok(other) => bail!("unknown quota outcome {other:?}"),
            Err(Some(e)) => (ctx.outcome(Err(e))?, None),
            Err(None) => (None, None),
        };
        let mut log = locked(&log);
        log.deltas.push((delta, applied));
        if let Some(value) = value {
            log.values.push(value);
            ctx.tick();
        }
    }
    Ok(())
}

/// What the check must flag: read, check and add as separate commands.
async fn naive(
    ctx: &CheckCtx,
    quotas: &Quotas,
    delta: i64,
) -> Result<Bounded, redis_atomic::Error> {
    let current = quotas.get(NAME).await?;
    if !(0..=MAX).contains(&(current + delta)) {
        return Ok(Bounded::Refused { value: current });
    }
    ctx.race_gap().await; // the gap another task's add goes into
    let key = quotas.keys(NAME, None)?.value;
    let value = ctx
        .client
        .command(redis::cmd("INCRBY").arg(&key).arg(delta))
        .await?;
    Ok(Bounded::Applied {
        value: decode("INCRBY", value)?,
    })
}
