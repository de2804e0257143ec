//! Shared test fixtures: real servers from the testkit, one client per (topology, delivery) mode.
#![allow(dead_code, clippy::unwrap_used)]

pub mod metrics;

use redis_atomic::lease::OwnerToken;
use redis_atomic::semaphore::{Acquire, Permit, Semaphore};
use redis_atomic::{Client, ClientConfig, Delivery, Error, Keyspace, RetryPolicy};
use redis_atomic_testkit::{unique_prefix, RedisCluster, RedisServer, ServerOptions};
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
    Semaphore::new(env.client.clone(), &env.keyspace, name, capacity).unwrap()
}

/// A permit that must be free: acquired or the test fails.
pub async fn take(sem: &Semaphore, holder: &OwnerToken, lease: Duration) -> Permit {
    match sem.acquire_with_token(holder, lease).await.unwrap() {
        Acquire::Acquired(permit) => permit,
        other => panic!("free permit not acquired: {other:?}"),
    }
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
    /// A fresh standalone server, `EVALSHA`.
    StandaloneEval,
    /// A fresh standalone server, `FCALL`.
    StandaloneFunctions,
    /// The shared 3+3 cluster, `EVALSHA`.
    ClusterEval,
    /// The shared 3+3 cluster, `FCALL`.
    ClusterFunctions,
}

/// Every mode: each primitive's behaviour tests run in all of them.
pub const MODES: [Mode; 4] = [
    Mode::StandaloneEval,
    Mode::StandaloneFunctions,
    Mode::ClusterEval,
    Mode::ClusterFunctions,
];

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
    pub server: Option<RedisServer>,
}

impl Env {
    /// A raw command on the same connections (for setting up or inspecting state).
    pub async fn raw(&self, cmd: &redis::Cmd) -> redis::Value {
        self.client.command(cmd).await.unwrap()
    }
}

/// Starts (or joins) the servers of `mode` and connects a client with `config`'s settings.
pub async fn env(mode: Mode, test: &str, config: ClientConfig) -> Env {
    let config = config.delivery(mode.delivery());
    let keyspace = Keyspace::new(unique_prefix(test)).unwrap();
    if mode.cluster() {
        let cluster = RedisCluster::shared();
        let client = Client::connect_cluster(&cluster.urls(), config)
            .await
            .unwrap();
        return Env {
            mode,
            client,
            keyspace,
            server: None,
        };
    }
    let server = RedisServer::start(ServerOptions::default()).unwrap();
    let client = Client::connect(&server.url(), config).await.unwrap();
    Env {
        mode,
        client,
        keyspace,
        server: Some(server),
    }
}

/// Starts a standalone server with options and connects.
pub async fn standalone(test: &str, opts: ServerOptions, config: ClientConfig) -> Env {
    let server = RedisServer::start(opts).unwrap();
    let client = Client::connect(&server.url(), config).await.unwrap();
    let keyspace = Keyspace::new(unique_prefix(test)).unwrap();
    Env {
        mode: Mode::StandaloneEval,
        client,
        keyspace,
        server: Some(server),
    }
}
