//! What the layer and face tests need from the testkit: a client on this binary's shared
//! standalone server (`EVALSHA`) or shared cluster (`FCALL`), or on a server of the test's own
//! when it kills, pauses or reconfigures it; and a keyspace unique to the test, so tests sharing
//! a server never see each other's keys. The library's own fixtures (every mode, fault helpers)
//! stay with the library's tests. (The server crate's test binary includes this file too.)
#![allow(dead_code, clippy::unwrap_used)]

use redis_atomic::{Client, ClientConfig, Delivery, Keyspace};
use redis_atomic_testkit::{unique_prefix, RedisCluster, RedisServer, ServerOptions};

/// Where a test runs: the two ends of the library's mode matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The shared standalone server of this test binary, `EVALSHA`.
    StandaloneEval,
    /// The shared 3+3 cluster of this test binary, `FCALL`.
    ClusterFunctions,
}

/// A connected client, the server it owns (none on a shared server) and a unique keyspace.
pub struct Env {
    pub client: Client,
    pub keyspace: Keyspace,
    pub server: Option<RedisServer>,
    /// A raw client for the standalone server (shared or own); None on the cluster.
    pub redis: Option<redis::Client>,
}

/// A client on the shared servers of `mode`, with `config`'s settings.
pub async fn env(mode: Mode, test: &str, config: ClientConfig) -> Env {
    let keyspace = Keyspace::new(unique_prefix(test)).unwrap();
    match mode {
        Mode::StandaloneEval => {
            let server = RedisServer::shared();
            let config = config.delivery(Delivery::Eval);
            Env {
                client: Client::connect(&server.url(), config).await.unwrap(),
                keyspace,
                server: None,
                redis: Some(server.client()),
            }
        }
        Mode::ClusterFunctions => {
            let urls = RedisCluster::shared().urls();
            let config = config.delivery(Delivery::Functions);
            Env {
                client: Client::connect_cluster(&urls, config).await.unwrap(),
                keyspace,
                server: None,
                redis: None,
            }
        }
    }
}

/// A client (`EVALSHA`) on a fresh standalone server of the test's own, in `env.server`: for
/// tests that kill, pause or reconfigure it.
pub async fn private_env(test: &str, config: ClientConfig) -> Env {
    let keyspace = Keyspace::new(unique_prefix(test)).unwrap();
    let server = RedisServer::start(ServerOptions::default()).unwrap();
    let config = config.delivery(Delivery::Eval);
    Env {
        client: Client::connect(&server.url(), config).await.unwrap(),
        keyspace,
        redis: Some(server.client()),
        server: Some(server),
    }
}
