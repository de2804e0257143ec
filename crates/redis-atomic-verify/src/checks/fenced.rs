//! The fenced-write check: tasks take a lock with a short lease and write their fence to the
//! resource's key through `fenced_write`; every fourth holder pauses past its lease first, until a
//! newer holder's write was acknowledged (a zombie). Four resources (four hash tags, so a failover or stall of one node does not stop the
//! whole check), each judged on its own by the testkit's fenced-register checker.
//! Violations: a write applied with a fence below one whose write was acknowledged before it was
//! sent (the server applied that one first, so the state went back), and a final value that is
//! neither the largest acknowledged fence nor a larger one whose write had an unknown outcome.
//!
//! Under faults, errors are outcomes: an unknown one may have applied (its fence may be the
//! final value), a refused one did not. Under a primary kill the fence record itself may be lost
//! with the primary (asynchronous replication), so the state may legitimately go back once: there
//! only the final value is checked (it is a fence some write that may have applied carried). A
//! sabotaged run (plain `SET`, no fence check) is judged by the strict rule everywhere.

use super::{lock, locked, CheckCtx, CheckResult, Findings};
use redis_atomic::fenced::{Fenced, FencedWrites};
use redis_atomic::lock::{LockGuard, Locks};
use redis_atomic::write::Write;
use redis_atomic_testkit::{history, FencedWrite};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub(crate) const INVARIANT: &str = "no write with an older fence after a newer one";
const LEASE: Duration = Duration::from_millis(30);
const RESOURCES: usize = 4;

type Writes = Arc<Mutex<Vec<FencedWrite>>>;

fn resource(i: usize) -> String {
    format!("verify-{i}")
}

/// The resource's data key, written with the writer's fence as its value.
fn data_key(fenced: &FencedWrites, resource: &str) -> CheckResult<String> {
    Ok(fenced.key(resource, "value")?)
}

pub(crate) async fn run(ctx: CheckCtx) -> CheckResult<Findings> {
    let fenced = FencedWrites::new(ctx.client.clone(), ctx.keyspace.clone());
    let writes = Writes::default();
    ctx.run_workers(|t, ctx| worker(t, ctx, fenced.clone(), writes.clone()))
        .await?;
    let mut finals = HashMap::new();
    for name in (0..RESOURCES).map(resource) {
        if let Some(v) = ctx.final_get(&data_key(&fenced, &name)?).await? {
            finals.insert(name, v);
        }
    }
    let writes = locked(&writes);
    let verdict = if ctx.lossy() && !ctx.sabotage {
        history::check_fenced_writes_lossy(&writes, &finals)
    } else {
        history::check_fenced_writes(&writes, &finals)
    };
    Ok(Findings::new(writes.len() as u64).with(verdict))
}

async fn worker(t: usize, ctx: CheckCtx, fenced: FencedWrites, writes: Writes) -> CheckResult<()> {
    let locks = Locks::new(ctx.client.clone(), ctx.keyspace.clone());
    let name = resource(t % RESOURCES);
    let data = data_key(&fenced, &name)?;
    let mut n = 0usize;
    while ctx.running_until_first(locked(&writes).is_empty()) {
        let Some(guard) = lock::acquire(&ctx, &locks, &name, LEASE).await? else {
            tokio::time::sleep(Duration::from_millis(1)).await;
            continue;
        };
        n += 1;
        if (t + n) % 4 == 0 {
            zombie(&ctx, &writes, &name, guard.fence().0).await;
        }
        let invoked = ctx.clock();
        let applied = write(&ctx, &fenced, &data, &guard).await?;
        locked(&writes).push(FencedWrite {
            resource: name.clone(),
            fence: guard.fence().0,
            invoked,
            completed: ctx.clock(),
            applied,
        });
        ctx.tick();
        if let Err(e) = ctx.call(guard.release()).await {
            ctx.absorb(e)?;
        }
    }
    Ok(())
}

/// A zombie: pauses past its lease, and on until a newer holder's write of the same resource
/// was acknowledged, so its stale write always comes after a newer one — what the fence must
/// refuse, and what a sabotaged run must be caught applying, however loaded the machine (a fixed
/// pause left a sabotaged row under load with no newer write to overtake). Bounded by 10 leases
/// in a real run (a stall may hold every newer holder back), by the check's end in a sabotaged
/// one (a 10-lease bound under a stall on a loaded machine once let every zombie write first).
async fn zombie(ctx: &CheckCtx, writes: &Writes, resource: &str, fence: u64) {
    tokio::time::sleep(LEASE * 2).await;
    let overtaken = || {
        locked(writes)
            .iter()
            .any(|w| w.resource == resource && w.fence > fence && w.applied == Some(true))
    };
    let deadline = tokio::time::Instant::now() + LEASE * 10;
    let bounded = || ctx.sabotage || tokio::time::Instant::now() < deadline;
    while !overtaken() && ctx.running() && bounded() {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// The fenced write (a plain `SET` when sabotaged): Some(true) applied, Some(false) refused or
/// surely not run, None unknown.
async fn write(
    ctx: &CheckCtx,
    fenced: &FencedWrites,
    data: &str,
    guard: &LockGuard,
) -> CheckResult<Option<bool>> {
    let fence = guard.fence();
    let result = if ctx.sabotage {
        let ttl = u64::try_from(ctx.key_ttl().as_millis()).unwrap_or(u64::MAX);
        let cmd = redis::cmd("SET")
            .arg(data)
            .arg(fence.0)
            .arg("PX")
            .arg(ttl)
            .clone();
        ctx.command(&cmd).await.map(|_| true)
    } else {
        let w = [Write::set_px(data, fence.0.to_string(), ctx.key_ttl())];
        ctx.call(fenced.fenced_write(guard.resource(), fence, &w))
            .await
            .map(|out| matches!(out, Fenced::Applied { .. }))
    };
    ctx.outcome(result)
}
