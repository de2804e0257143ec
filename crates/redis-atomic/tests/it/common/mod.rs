//! Shared test fixtures: real servers from the testkit, one client per (topology, delivery) mode.
//!
//! Servers: [`env`] connects to the binary's shared standalone server or its shared 3+3 cluster
//! (started on first use, each test under its own key prefix); [`own_env`] and [`standalone`]
//! start a server of the test's own, for tests that stall, crash, flush, reconfigure or count
//! server-wide statistics; [`flush_env`] is where tests flush script caches.
#![allow(dead_code)]

pub mod metrics;

use redis_atomic::lease::OwnerToken;
use redis_atomic::queue::{Queue, QueueConfig};
use redis_atomic::semaphore::{Acquire, Permit, Semaphore, SemaphoreConfig};
use redis_atomic::{Client, ClientConfig, Delivery, Error, Keyspace, RetryPolicy};
use redis_atomic_testkit::{
    for_the_process, unique_prefix, ClusterOptions, RedisCluster, RedisServer, ServerOptions,
};
use std::sync::OnceLock;
use std::time::Duration;

/// Per-call timeout of the ordinary calls of fault tests: far beyond any delay a loaded 2-core
/// CI machine adds, so that only the one call a test means to lose can time out. (A short
/// timeout on every call once failed an ordinary `inspect` at load 8.)
pub const PATIENT: Duration = Duration::from_secs(10);

/// The settings fault tests connect with: a patient timeout, the default retries.
pub fn patient() -> ClientConfig {
    ClientConfig::default().timeout(PATIENT)
}

/// The same connections and settings (delivery included) with a short `timeout` and `retry`:
/// for the one call that must lose its reply while the server is stalled. The stall lasts until
/// that call returns, so its timeout need not be tight; on a cluster keep it well under the 1 s
/// node timeout (a longer stall would start a failover).
pub fn impatient(client: &Client, timeout: Duration, retry: RetryPolicy) -> Client {
    client.with_config(client.config().clone().timeout(timeout).retry(retry))
}

/// The same connections, patient and retrying for up to 30 s: for the calls after a restart (the
/// pooled connections died with the server; retries of what may be retried reconnect).
pub fn recovering(client: &Client) -> Client {
    client.with_config(patient().retry(RetryPolicy::new(10, Duration::from_secs(30))))
}

/// A call made while the server is down fails with a typed transport error: surely not sent, or
/// (a request written before the connection noticed) unknown.
pub fn assert_down<T: std::fmt::Debug>(r: &Result<T, Error>) {
    assert!(
        matches!(
            r,
            Err(Error::NotSent(_)) | Err(Error::OutcomeUnknown { .. })
        ),
        "{r:?}"
    );
}

/// A semaphore of `capacity` named `name` in `env` (semaphore tests).
pub fn sem(env: &Env, name: &str, capacity: u32) -> Semaphore {
    let config = SemaphoreConfig::new(capacity);
    Semaphore::new(env.client.clone(), &env.keyspace, name, config).unwrap()
}

/// A queue named `name` with `config` in `env` (queue tests, and every test that needs a job).
pub fn queue(env: &Env, name: &str, config: QueueConfig) -> Queue {
    Queue::new(env.client.clone(), &env.keyspace, name, config).unwrap()
}

/// A permit that must be free: acquired or the test fails.
pub async fn take(sem: &Semaphore, holder: &OwnerToken, ttl: Duration) -> Permit {
    match sem.acquire_with_token(holder, ttl).await.unwrap() {
        Acquire::Acquired(permit) => permit,
        other => panic!("free permit not acquired: {other:?}"),
    }
}

/// The runtime of a proptest fixture: a `static` that outlives every case, each case driving it
/// with `block_on`; one worker is all that takes.
pub fn fixture_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

/// Runs `call` while `server` is stopped (SIGSTOP), resuming it (SIGCONT) after `stall`: the
/// call's requests wait in the socket, time out, are retried, and are answered once it runs.
pub async fn stalled_for<F: std::future::Future>(
    server: &RedisServer,
    stall: Duration,
    call: F,
) -> F::Output {
    server.pause();
    let resume = async {
        tokio::time::sleep(stall).await;
        server.resume();
    };
    tokio::join!(call, resume).0
}

/// Where and how a test runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// A standalone server (the shared one, or the test's own), `EVALSHA`.
    StandaloneEval,
    /// A standalone server (the shared one, or the test's own), `FCALL`.
    StandaloneFunctions,
    /// The shared 3+3 cluster (or the test's own: [`env_on`]), `EVALSHA`.
    ClusterEval,
    /// The shared 3+3 cluster (or the test's own: [`env_on`]), `FCALL`.
    ClusterFunctions,
}

/// Every mode: each primitive's behaviour tests run in all of them.
pub const MODES: [Mode; 4] = [
    Mode::StandaloneEval,
    Mode::StandaloneFunctions,
    Mode::ClusterEval,
    Mode::ClusterFunctions,
];

/// Both deliveries on a cluster: what a test on a cluster of its own ([`env_on`]) runs in.
pub const CLUSTER_MODES: [Mode; 2] = [Mode::ClusterEval, Mode::ClusterFunctions];

impl Mode {
    /// The delivery of this mode.
    pub fn delivery(self) -> Delivery {
        match self {
            Mode::StandaloneEval | Mode::ClusterEval => Delivery::Eval,
            _ => Delivery::Functions,
        }
    }

    /// Whether this mode runs on the shared cluster.
    pub fn cluster(self) -> bool {
        matches!(self, Mode::ClusterEval | Mode::ClusterFunctions)
    }
}

/// A connected client plus what keeps its server alive and a unique keyspace.
pub struct Env {
    pub mode: Mode,
    pub client: Client,
    pub keyspace: Keyspace,
    /// The test's own standalone server ([`own_env`], [`standalone`]); None on a shared one.
    pub server: Option<RedisServer>,
    /// The test's turn on [`flush_cluster`] ([`flush_env`]).
    _turn: Option<tokio::sync::MutexGuard<'static, ()>>,
}

impl Env {
    /// A raw command on the same connections (for setting up or inspecting state).
    pub async fn raw(&self, cmd: &redis::Cmd) -> redis::Value {
        self.client.command(cmd).await.unwrap()
    }
}

impl Env {
    /// `client` in `mode` under a key prefix of `test`'s own, on a server it does not own.
    fn new(mode: Mode, client: Client, test: &str) -> Env {
        Env {
            mode,
            client,
            keyspace: keyspace(test),
            server: None,
            _turn: None,
        }
    }
}

/// Connects to the shared server of `mode` (the binary's standalone server or 3+3 cluster, started
/// on first use) with `config`'s settings, under a key prefix of the test's own. For tests that
/// leave every other test's keys alone and count nothing server-wide.
pub async fn env(mode: Mode, test: &str, config: ClientConfig) -> Env {
    if mode.cluster() {
        return cluster_env(RedisCluster::shared(), mode, test, config).await;
    }
    let config = config.delivery(mode.delivery());
    let client = Client::connect(&RedisServer::shared().url(), config)
        .await
        .unwrap();
    Env::new(mode, client, test)
}

/// A patient [`env`] per mode, set up one after another (server and cluster start-up block), so
/// the test can then run the modes concurrently.
pub async fn all_modes(test: &str) -> Vec<Env> {
    let mut envs = Vec::new();
    for mode in MODES {
        envs.push(env(mode, test, patient()).await);
    }
    envs
}

/// Like [`env`], but standalone modes get a fresh server of the test's own (in [`Env::server`]):
/// for tests that stall, restart, flush or reconfigure it, or count its statistics. Cluster modes
/// join the shared cluster: a test that must disturb a cluster starts its own ([`env_on`]).
pub async fn own_env(mode: Mode, test: &str, config: ClientConfig) -> Env {
    if mode.cluster() {
        return cluster_env(RedisCluster::shared(), mode, test, config).await;
    }
    let server = RedisServer::start(ServerOptions::default()).unwrap();
    let client = Client::connect(&server.url(), config.delivery(mode.delivery()))
        .await
        .unwrap();
    Env {
        server: Some(server),
        ..Env::new(mode, client, test)
    }
}

/// For tests that flush script caches (`SCRIPT FLUSH`, `FUNCTION FLUSH`): standalone modes get a
/// server of the test's own, cluster modes this binary's second 3+3 cluster ([`flush_cluster`]),
/// which only such tests use, one at a time ([`Env`] holds the turn): a flush there must not
/// pull a library from under another test between its load and its check.
pub async fn flush_env(mode: Mode, test: &str, config: ClientConfig) -> Env {
    if !mode.cluster() {
        return own_env(mode, test, config).await;
    }
    let turn = flush_turn().await;
    Env {
        _turn: Some(turn),
        ..cluster_env(flush_cluster(), mode, test, config).await
    }
}

/// The cluster tests flush script caches on (see [`flush_env`]), started on first use.
pub fn flush_cluster() -> &'static RedisCluster {
    static FLUSHED: OnceLock<RedisCluster> = OnceLock::new();
    FLUSHED
        .get_or_init(|| for_the_process(|| RedisCluster::start(ClusterOptions::default()).unwrap()))
}

/// The turn of one test on [`flush_cluster`].
pub async fn flush_turn() -> tokio::sync::MutexGuard<'static, ()> {
    static TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    TURN.lock().await
}

async fn cluster_env(cluster: &RedisCluster, mode: Mode, test: &str, config: ClientConfig) -> Env {
    let config = config.delivery(mode.delivery());
    let client = Client::connect_cluster(&cluster.urls(), config)
        .await
        .unwrap();
    Env::new(mode, client, test)
}

/// A client of `mode` on `cluster` — a cluster of the test's own (usually
/// [`ClusterOptions::primaries_only`]), which it may stall, fill or reconfigure — with `config`'s
/// settings, every built-in script loaded, under a key prefix of the test's own. A test that must
/// hold in both deliveries runs once per [`CLUSTER_MODES`].
pub async fn env_on(cluster: &RedisCluster, mode: Mode, test: &str, config: ClientConfig) -> Env {
    let env = cluster_env(cluster, mode, test, config).await;
    env.client
        .load(redis_atomic::script::registry::ALL)
        .await
        .unwrap();
    env
}

fn keyspace(test: &str) -> Keyspace {
    Keyspace::new(unique_prefix(test)).unwrap()
}

/// Starts a standalone server with options and connects.
pub async fn standalone(test: &str, opts: ServerOptions, config: ClientConfig) -> Env {
    let server = RedisServer::start(opts).unwrap();
    let client = Client::connect(&server.url(), config).await.unwrap();
    Env {
        server: Some(server),
        ..Env::new(Mode::StandaloneEval, client, test)
    }
}
