//! What the layer tests need from the testkit: a client on a fresh standalone server (`EVALSHA`)
//! or on the shared cluster (`FCALL`), and a keyspace unique to the test. The library's own
//! fixtures (every mode, fault helpers) stay with the library's tests.
#![allow(dead_code, clippy::unwrap_used)]

use redis_atomic::{Client, ClientConfig, Delivery, Keyspace};
use redis_atomic_testkit::{unique_prefix, RedisCluster, RedisServer, ServerOptions};

/// Where a layer test runs: the two ends of the library's mode matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// A fresh standalone server, `EVALSHA`.
    StandaloneEval,
    /// The shared 3+3 cluster of this test binary, `FCALL`.
    ClusterFunctions,
}

/// A connected client, the server it owns (none on the shared cluster) and a unique keyspace.
pub struct Env {
    pub client: Client,
    pub keyspace: Keyspace,
    pub server: Option<RedisServer>,
}

/// Starts (or joins) the servers of `mode` and connects a client with `config`'s settings.
pub async fn env(mode: Mode, test: &str, config: ClientConfig) -> Env {
    let keyspace = Keyspace::new(unique_prefix(test)).unwrap();
    let (client, server) = match mode {
        Mode::StandaloneEval => {
            let server = RedisServer::start(ServerOptions::default()).unwrap();
            let config = config.delivery(Delivery::Eval);
            (
                Client::connect(&server.url(), config).await.unwrap(),
                Some(server),
            )
        }
        Mode::ClusterFunctions => {
            let urls = RedisCluster::shared().urls();
            let config = config.delivery(Delivery::Functions);
            (Client::connect_cluster(&urls, config).await.unwrap(), None)
        }
    };
    Env {
        client,
        keyspace,
        server,
    }
}
