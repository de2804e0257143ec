//! One injection of one kind of fault, on a standalone server behind its proxy or on a cluster
//! (corrupted replies are the proxies' alone: [`super::Faults::inject`]).

use super::calls::Carried;
use super::{FaultKind, Owner};
use crate::check::CheckResult;
use redis_atomic_testkit::{faults, Fault, FaultProxy, RedisCluster, RedisServer};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One fault on the standalone server; a crash restarts it on `owner`'s thread (see
/// [`Owner`]), keeping what it counted in `carried` first; the rest runs on a blocking thread.
pub(super) async fn standalone(
    server: &Arc<Mutex<RedisServer>>,
    proxy: &FaultProxy,
    (owner, carried): (&Owner, &Arc<Carried>),
    kind: FaultKind,
) -> CheckResult<()> {
    if kind == FaultKind::LostReplies {
        proxy.set(Fault::DropReplies);
        tokio::time::sleep(Duration::from_millis(150)).await;
        proxy.set(Fault::None);
        return Ok(());
    }
    if kind == FaultKind::MemoryFull {
        let s = server.clone();
        let full = move || faults::fill_memory(&locked(&s), 32 * 1024);
        tokio::task::spawn_blocking(full).await??;
        tokio::time::sleep(Duration::from_millis(150)).await;
        let s = server.clone();
        let free = move || faults::unlimit_memory(&locked(&s));
        return Ok(tokio::task::spawn_blocking(free).await??);
    }
    if kind == FaultKind::Crash {
        let (s, carried) = (server.clone(), carried.clone());
        let crash = move || {
            let mut s = locked(&s);
            carried.keep(&s);
            s.crash_restart()
        };
        return Ok(owner.run(crash).await??);
    }
    let server = server.clone();
    tokio::task::spawn_blocking(move || -> CheckResult<()> {
        let s = locked(&server);
        match kind {
            FaultKind::ConnectionKills => drop(faults::kill_clients(&s)?),
            FaultKind::Stalls => faults::stall(&s, Duration::from_millis(300)),
            FaultKind::ScriptFlush => faults::flush_scripts(&s)?,
            _ => bail!("{} needs a cluster", kind.name()),
        }
        Ok(())
    })
    .await?
}

/// The server, poisoned or not.
pub(super) fn locked(server: &Mutex<RedisServer>) -> std::sync::MutexGuard<'_, RedisServer> {
    server.lock().unwrap_or_else(|p| p.into_inner())
}

/// One fault on the cluster (no process is started: a blocking thread will do).
pub(super) async fn cluster(
    cluster: Arc<RedisCluster>,
    kind: FaultKind,
    round: usize,
) -> CheckResult<()> {
    tokio::task::spawn_blocking(move || -> CheckResult<()> {
        let live: Vec<usize> = (0..cluster.nodes().len())
            .filter(|&i| cluster.nodes()[i].pid() != 0)
            .collect();
        let primaries: Vec<usize> = live
            .iter()
            .copied()
            .filter(|&i| cluster.replicas_of(i).is_ok_and(|r| !r.is_empty()))
            .collect();
        let pick = |of: &[usize]| of.get(round % of.len().max(1)).copied();
        match kind {
            FaultKind::ConnectionKills => {
                for &i in &live {
                    faults::kill_clients(&cluster.nodes()[i])?;
                }
            }
            FaultKind::Stalls => {
                if let Some(p) = pick(&primaries) {
                    faults::stall(&cluster.nodes()[p], Duration::from_millis(300));
                }
            }
            FaultKind::ScriptFlush => {
                for &i in &live {
                    faults::flush_scripts(&cluster.nodes()[i])?;
                }
            }
            FaultKind::SlotMigration => migrate_some_slot(&cluster, &primaries, round)?,
            FaultKind::ManualFailover => {
                if let Some(p) = pick(&primaries) {
                    if let Some(&r) = cluster.replicas_of(p)?.first() {
                        cluster.manual_failover(r)?;
                    }
                }
            }
            FaultKind::PrimaryKill => {
                // Once: after it the shard has no replica left to take over again.
                if round == 0 {
                    if let Some(p) = pick(&primaries) {
                        let slot = any_slot_of(&cluster, p)?;
                        cluster.kill_primary(p, slot)?;
                    }
                }
            }
            _ => bail!("{} is a standalone fault", kind.name()),
        }
        Ok(())
    })
    .await?
}

/// Moves the slot of a random key of one primary to the next primary.
fn migrate_some_slot(cluster: &RedisCluster, primaries: &[usize], round: usize) -> CheckResult<()> {
    if primaries.len() < 2 {
        return Ok(());
    }
    let from = primaries[round % primaries.len()];
    let to = primaries[(round + 1) % primaries.len()];
    let mut conn = cluster.nodes()[from].client().get_connection()?;
    let key: Option<Vec<u8>> = redis::cmd("RANDOMKEY").query(&mut conn)?;
    let Some(key) = key else { return Ok(()) };
    let slot = redis_atomic::keys::slot(&key);
    if cluster.owner_of(slot)? == from {
        cluster.migrate_slot(slot, to, 100)?;
    }
    Ok(())
}

/// The first slot node `p` serves.
fn any_slot_of(cluster: &RedisCluster, p: usize) -> CheckResult<u16> {
    (0..16384u16)
        .step_by(64)
        .find(|&s| cluster.owner_of(s).is_ok_and(|o| o == p))
        .ok_or_else(|| err!("node {p} serves no slot"))
}
