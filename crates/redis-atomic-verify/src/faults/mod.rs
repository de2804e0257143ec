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
//! Corrupted replies: the proxy (standalone) or a proxy in front of every node of a cluster of its
//! own (whose nodes announce the proxies, [`ProxiedCluster`]) replaces a quarter of the replies
//! to script calls with random or malformed RESP, or cuts them short, in bursts: a hostile
//! server. The client must classify each as a typed error (an unknown outcome, or a reply it
//! cannot use), drop the connections whose stream broke, and go on; the checks must judge each
//! as an operation that may have run.
//!
//! The client's timeout is short (200 ms) so a 300 ms stall or a dropped reply becomes an
//! unknown outcome, the case the primitives must survive. The injector stops before a check's
//! final reads and heals the server first; checks await that through
//! [`crate::CheckCtx::settled`].

mod calls;
mod once;
mod owner;

pub use calls::ServerCalls;
pub(crate) use owner::Owner;

use crate::check::CheckResult;
use redis_atomic::{Client, ClientConfig};
use redis_atomic_testkit::proxy::ProxiedCluster;
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
    /// For 300 ms, a quarter of the replies to script calls are replaced with random or
    /// malformed RESP, or cut short (a proxy in front of the server; of every node, in a
    /// cluster of its own).
    CorruptReplies,
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
        FaultKind::CorruptReplies,
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
        FaultKind::CorruptReplies,
        FaultKind::PrimaryKill,
    ];

    /// Short name for the report.
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::ConnectionKills => "conn-kill",
            FaultKind::LostReplies => "lost-reply",
            FaultKind::CorruptReplies => "corrupt-reply",
            FaultKind::Stalls => "stall",
            FaultKind::ScriptFlush => "script-flush",
            FaultKind::Crash => "crash",
            FaultKind::MemoryFull => "oom",
            FaultKind::SlotMigration => "slot-migrate",
            FaultKind::ManualFailover => "failover",
            FaultKind::PrimaryKill => "primary-kill",
        }
    }

    /// The kind of this [`FaultKind::name`], if any.
    pub fn from_name(name: &str) -> Option<FaultKind> {
        FaultKind::STANDALONE
            .iter()
            .chain(FaultKind::CLUSTER)
            .copied()
            .find(|k| k.name() == name)
    }

    /// Whether acknowledged writes may be lost under this fault (async replication): checks then
    /// hold only the guarantees that survive such a loss (e.g. fences never repeat).
    pub fn loses_acknowledged_writes(self) -> bool {
        self == FaultKind::PrimaryKill
    }
}

/// Pause between injections.
const GAP: Duration = Duration::from_millis(300);
/// Share of script-call replies corrupted while `corrupt-reply` is injected.
const CORRUPT_PERCENT: u8 = 25;

/// What [`Faults`] to start.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Start {
    Standalone,
    Cluster,
    Proxied,
}

/// What faults are injected into: the embedded server behind a proxy, an embedded cluster, or
/// one behind a proxy per node.
pub(crate) enum Faults {
    Standalone {
        server: Arc<Mutex<RedisServer>>,
        proxy: FaultProxy,
        /// Where the server is restarted after a crash.
        owner: Arc<Owner>,
        /// What the server counted before its crashes.
        carried: Arc<calls::Carried>,
    },
    Cluster(Arc<RedisCluster>),
    Proxied(Arc<ProxiedCluster>),
}

/// Client settings under faults: short timeout, the default bounded retries.
pub(crate) fn client_config() -> ClientConfig {
    ClientConfig::default().timeout(Duration::from_millis(200))
}

impl Faults {
    /// What `kind` is injected into, when `current` (the previous kind's) will not do: a
    /// standalone server, a 3+3 cluster, a fresh one for the destructive primary kill, a proxied
    /// one for corrupted replies. None: keep `current`.
    pub(crate) fn needed(
        kind: FaultKind,
        cluster: bool,
        current: Option<&Faults>,
    ) -> Option<Start> {
        if !cluster {
            return current.is_none().then_some(Start::Standalone);
        }
        let proxied = matches!(current, Some(Faults::Proxied(_)));
        if kind == FaultKind::CorruptReplies {
            return (!proxied).then_some(Start::Proxied);
        }
        // Destructive: a cluster of its own, so earlier rows ran on a healthy one.
        let fresh = kind.loses_acknowledged_writes() || current.is_none() || proxied;
        fresh.then_some(Start::Cluster)
    }

    /// Starts `what` on `owner`'s thread (see [`Owner`]).
    /// Each server loads the server module when the run's embedded servers do
    /// ([`crate::bootstrap::embedded_module`]).
    pub(crate) async fn start(what: Start, owner: &Arc<Owner>) -> CheckResult<Faults> {
        let extra_config = crate::bootstrap::module_config()?;
        let opts = move || ClusterOptions {
            extra_config: extra_config.clone(),
            ..ClusterOptions::default()
        };
        match what {
            Start::Standalone => {
                let kept = owner.clone();
                owner.run(move || Faults::standalone(kept)).await?
            }
            Start::Cluster => {
                let cluster = owner.run(move || RedisCluster::start(opts())).await??;
                Ok(Faults::Cluster(Arc::new(cluster)))
            }
            Start::Proxied => {
                let cluster = owner.run(move || ProxiedCluster::start(opts())).await??;
                Ok(Faults::Proxied(Arc::new(cluster)))
            }
        }
    }

    fn standalone(owner: Arc<Owner>) -> CheckResult<Faults> {
        let server = RedisServer::start(ServerOptions {
            appendonly: true,
            appendfsync: Some(Fsync::Always),
            extra_config: crate::bootstrap::module_config()?,
            ..ServerOptions::default()
        })?;
        let addr = server
            .addr()
            .ok_or_else(|| err!("embedded server has no TCP address"))?;
        let proxy = FaultProxy::start(addr)?;
        Ok(Faults::Standalone {
            server: Arc::new(Mutex::new(server)),
            proxy,
            owner,
            carried: Arc::default(),
        })
    }

    /// The decisions every server has executed so far, by path ([`ServerCalls`]).
    pub(crate) async fn server_calls(&self) -> ServerCalls {
        let nodes = |c: &RedisCluster| {
            c.nodes()
                .iter()
                .map(ServerCalls::read)
                .fold(ServerCalls::default(), ServerCalls::plus)
        };
        let read = match self {
            Faults::Standalone {
                server, carried, ..
            } => {
                let (server, carried) = (server.clone(), carried.clone());
                tokio::task::spawn_blocking(move || {
                    ServerCalls::read(&once::locked(&server)).plus(carried.total())
                })
                .await
            }
            Faults::Cluster(c) => {
                let c = c.clone();
                tokio::task::spawn_blocking(move || nodes(&c)).await
            }
            Faults::Proxied(c) => {
                let c = c.clone();
                tokio::task::spawn_blocking(move || nodes(c.cluster())).await
            }
        };
        read.unwrap_or_default()
    }

    /// A client that goes through the faults. Connecting runs nothing, so a transient failure
    /// (a handshake slower than the short timeout on a loaded machine, before any fault) is
    /// tried again, a few times: the row is about its calls, not about one slow connect.
    pub(crate) async fn client(&self) -> CheckResult<Client> {
        const CONNECTS: usize = 5;
        let mut attempt = 1;
        loop {
            match self.connect_once().await {
                Err(e) if e.is_transient() && attempt < CONNECTS => attempt += 1,
                done => return Ok(done?),
            }
        }
    }

    async fn connect_once(&self) -> Result<Client, redis_atomic::Error> {
        match self {
            Faults::Standalone { proxy, .. } => {
                Client::connect(&proxy.url(), client_config()).await
            }
            Faults::Cluster(c) => Client::connect_cluster(&c.urls(), client_config()).await,
            Faults::Proxied(c) => Client::connect_cluster(&c.urls(), client_config()).await,
        }
    }

    /// The URLs its client connects to (the proxy's; every node's, in a cluster).
    pub(crate) fn urls(&self) -> Vec<String> {
        match self {
            Faults::Standalone { proxy, .. } => vec![proxy.url()],
            Faults::Cluster(c) => c.urls(),
            Faults::Proxied(c) => c.urls(),
        }
    }

    /// Replies corrupted so far (`corrupt-reply`).
    pub(crate) fn corrupted(&self) -> u64 {
        match self {
            Faults::Standalone { proxy, .. } => proxy.stats().replies_corrupted,
            Faults::Proxied(c) => c.stats().replies_corrupted,
            Faults::Cluster(_) => 0,
        }
    }

    /// Injects `kind` every [`GAP`] for `duration` — from now, or once `begun` is set (a check
    /// that starts late; not at all if it ends before) — then heals and flags `settled`.
    pub(crate) async fn inject(
        &self,
        kind: FaultKind,
        duration: Duration,
        begun: Option<watch::Receiver<bool>>,
        settled: watch::Sender<bool>,
    ) {
        let began = match begun {
            Some(mut begun) => begun.wait_for(|b| *b).await.is_ok(),
            None => true,
        };
        let until = Instant::now() + if began { duration } else { Duration::ZERO };
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
        if kind == FaultKind::CorruptReplies {
            self.set_proxies(Fault::CorruptReplies {
                percent: CORRUPT_PERCENT,
                seed: round as u64,
            });
            tokio::time::sleep(GAP).await;
            self.set_proxies(Fault::None);
            return Ok(());
        }
        match self {
            Faults::Standalone {
                server,
                proxy,
                owner,
                carried,
            } => once::standalone(server, proxy, (owner, carried), kind).await,
            Faults::Cluster(cluster) => once::cluster(cluster.clone(), kind, round).await,
            Faults::Proxied(_) => bail!("{} needs a cluster without proxies", kind.name()),
        }
    }

    fn set_proxies(&self, fault: Fault) {
        match self {
            Faults::Standalone { proxy, .. } => proxy.set(fault),
            Faults::Proxied(c) => c.set(fault),
            Faults::Cluster(_) => {}
        }
    }

    /// No fault in force, the server answering.
    pub(crate) async fn heal(&self) {
        match self {
            Faults::Standalone {
                server,
                proxy,
                owner,
                ..
            } => {
                proxy.set(Fault::None);
                let server = server.clone();
                let _ = owner
                    .run(move || {
                        let mut s = once::locked(&server);
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
            Faults::Proxied(c) => c.set(Fault::None),
        }
    }
}
