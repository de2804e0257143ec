//! [`crate::Verify::faults`] (`verify --faults`): the same checks, each run while one kind of
//! fault is injected again and again, so every invariant is shown to hold through lost replies,
//! dead connections, stalls, lost script caches, crashes, a full memory and (on a cluster) slot
//! migrations and failovers.
//!
//! The faults are injected into servers started for them, never into the deployment the run's
//! client reaches: they stall, crash and fail over their nodes. Standalone: an embedded server with
//! `appendonly yes` and `appendfsync always`, and a [`FaultProxy`] in front of it through which the
//! client talks. A crash is a SIGKILL (no shutdown, nothing flushed on the way out) and a restart
//! from the AOF: with fsync always a crash loses nothing acknowledged, so the checks stay strict
//! (with `everysec` it can lose the last second or two: docs/durability.md). A full memory is
//! `maxmemory` set just above what the server uses, policy `noeviction`: writes are refused (`OOM`,
//! nothing ran) and nothing acknowledged may disappear. Cluster: an embedded 3+3 cluster; the
//! destructive primary kill runs last, on a cluster of its own.
//!
//! The client's timeout is short (200 ms) so a 300 ms stall or a dropped reply becomes an
//! unknown outcome, the case the primitives must survive. The injector stops before a check's
//! final reads and heals the server first; checks await that through
//! [`crate::CheckCtx::settled`].

use crate::check::CheckResult;
use redis_atomic::{Client, ClientConfig};
use redis_atomic_testkit::{
    faults, ClusterOptions, Fault, FaultProxy, Fsync, RedisCluster, RedisServer, ServerOptions,
};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// One kind of fault, injected repeatedly during a check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FaultKind {
    /// The server kills every client connection (`CLIENT KILL TYPE normal`).
    ConnectionKills,
    /// Requests reach the server, replies are dropped for 150 ms (then those connections die).
    LostReplies,
    /// The server stops for 300 ms (SIGSTOP / SIGCONT; a primary, in a cluster).
    Stalls,
    /// `SCRIPT FLUSH` and `FUNCTION FLUSH` (everywhere).
    ScriptFlush,
    /// The server is killed (SIGKILL) and restarted from its AOF (`appendfsync always`).
    Crash,
    /// `maxmemory` just above what the server uses, `noeviction`, for 150 ms: writes refused
    /// with `OOM`.
    MemoryFull,
    /// A slot holding keys moves to another primary under load (cluster).
    SlotMigration,
    /// `CLUSTER FAILOVER` of a primary to its replica (cluster).
    ManualFailover,
    /// A primary is killed; its replica takes over after the node timeout (cluster).
    PrimaryKill,
}

impl FaultKind {
    /// Kinds injected on a standalone server, in report order.
    pub const STANDALONE: &'static [FaultKind] = &[
        FaultKind::ConnectionKills,
        FaultKind::LostReplies,
        FaultKind::Stalls,
        FaultKind::ScriptFlush,
        FaultKind::Crash,
        FaultKind::MemoryFull,
    ];
    /// Kinds injected on a cluster, in report order (the primary kill last: it is destructive).
    pub const CLUSTER: &'static [FaultKind] = &[
        FaultKind::ConnectionKills,
        FaultKind::Stalls,
        FaultKind::ScriptFlush,
        FaultKind::SlotMigration,
        FaultKind::ManualFailover,
        FaultKind::PrimaryKill,
    ];

    /// Short name for the report.
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::ConnectionKills => "conn-kill",
            FaultKind::LostReplies => "lost-reply",
            FaultKind::Stalls => "stall",
            FaultKind::ScriptFlush => "script-flush",
            FaultKind::Crash => "crash",
            FaultKind::MemoryFull => "oom",
            FaultKind::SlotMigration => "slot-migrate",
            FaultKind::ManualFailover => "failover",
            FaultKind::PrimaryKill => "primary-kill",
        }
    }

    /// Whether acknowledged writes may be lost under this fault (async replication): checks then
    /// hold only the guarantees that survive such a loss (e.g. fences never repeat).
    pub fn loses_acknowledged_writes(self) -> bool {
        self == FaultKind::PrimaryKill
    }
}

/// Pause between injections.
const GAP: Duration = Duration::from_millis(300);

/// What faults are injected into: the embedded server behind a proxy, or an embedded cluster.
pub(crate) enum Faults {
    Standalone {
        server: Arc<Mutex<RedisServer>>,
        proxy: FaultProxy,
    },
    Cluster(Arc<RedisCluster>),
}

/// Client settings under faults: short timeout, the default bounded retries.
pub(crate) fn client_config() -> ClientConfig {
    ClientConfig::default().timeout(Duration::from_millis(200))
}

impl Faults {
    /// Starts the embedded server (AOF, fsync always) and its proxy.
    pub(crate) fn standalone() -> CheckResult<Faults> {
        let server = RedisServer::start(ServerOptions {
            appendonly: true,
            appendfsync: Some(Fsync::Always),
            ..ServerOptions::default()
        })?;
        let addr = server
            .addr()
            .ok_or_else(|| err!("embedded server has no TCP address"))?;
        let proxy = FaultProxy::start(addr)?;
        Ok(Faults::Standalone {
            server: Arc::new(Mutex::new(server)),
            proxy,
        })
    }

    /// Starts an embedded 3+3 cluster.
    pub(crate) fn cluster() -> CheckResult<Faults> {
        Ok(Faults::Cluster(Arc::new(RedisCluster::start(
            ClusterOptions::default(),
        )?)))
    }

    /// A client that goes through the faults.
    pub(crate) async fn client(&self) -> CheckResult<Client> {
        Ok(match self {
            Faults::Standalone { proxy, .. } => {
                Client::connect(&proxy.url(), client_config()).await?
            }
            Faults::Cluster(c) => Client::connect_cluster(&c.urls(), client_config()).await?,
        })
    }

    /// Injects `kind` every [`GAP`] until `until`, then heals and flags `settled`.
    pub(crate) async fn inject(
        &self,
        kind: FaultKind,
        until: Instant,
        settled: watch::Sender<bool>,
    ) {
        let mut round = 0usize;
        while Instant::now() + GAP < until {
            tokio::time::sleep(GAP).await;
            if let Err(e) = self.once(kind, round).await {
                tracing::warn!(fault = kind.name(), error = %e, "injecting a fault failed");
            }
            round += 1;
        }
        self.heal().await;
        settled.send_replace(true);
    }

    async fn once(&self, kind: FaultKind, round: usize) -> CheckResult<()> {
        match self {
            Faults::Standalone { server, proxy } => standalone_once(server, proxy, kind).await,
            Faults::Cluster(cluster) => cluster_once(cluster.clone(), kind, round).await,
        }
    }

    /// No fault in force, the server answering.
    pub(crate) async fn heal(&self) {
        match self {
            Faults::Standalone { server, proxy } => {
                proxy.set(Fault::None);
                let server = server.clone();
                let _ = tokio::task::spawn_blocking(move || {
                    let mut s = server.lock().unwrap_or_else(|p| p.into_inner());
                    if s.pid() == 0 {
                        let _ = s.restart();
                    }
                    let _ = faults::unlimit_memory(&s);
                })
                .await;
            }
            Faults::Cluster(cluster) => {
                let cluster = cluster.clone();
                let _ =
                    tokio::task::spawn_blocking(move || cluster.wait_ok(Duration::from_secs(30)))
                        .await;
            }
        }
    }
}

async fn standalone_once(
    server: &Arc<Mutex<RedisServer>>,
    proxy: &FaultProxy,
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
    let server = server.clone();
    tokio::task::spawn_blocking(move || -> CheckResult<()> {
        let mut s = locked(&server);
        match kind {
            FaultKind::ConnectionKills => drop(faults::kill_clients(&s)?),
            FaultKind::Stalls => faults::stall(&s, Duration::from_millis(300)),
            FaultKind::ScriptFlush => faults::flush_scripts(&s)?,
            FaultKind::Crash => s.crash_restart()?,
            _ => bail!("{} needs a cluster", kind.name()),
        }
        Ok(())
    })
    .await?
}

fn locked(server: &Mutex<RedisServer>) -> std::sync::MutexGuard<'_, RedisServer> {
    server.lock().unwrap_or_else(|p| p.into_inner())
}

async fn cluster_once(
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
