//! The one way every command and face reaches Redis: the user's deployment when a URL is given,
//! or else a server started for the run — an embedded `redis-server` (a 3+3 cluster with
//! `cluster`) from the testkit, stopped when its [`Embedded`] guard drops.
//!
//! Written once here because every caller had its own copy (`verify`, `doctor`, `test`, `bench`,
//! `serve`, `proxy`), each with its own error text; now they start, describe and stop the
//! embedded server alike. [`connect_or_embed`] gives a library [`Client`]; [`url_or_embed`]
//! gives the URL, for callers that open their own raw connections (`bench`'s EVALSHA path, the
//! doctor's per-node probes, the fixtures' runner).
//!
//! A crate of its own would be one function; it lives in `redis-atomic-verify` because verify is
//! where the testkit is already a dependency. The HTTP faces get it from the CLI, which hands
//! [`Embedded::start`] to the server crate's start-up (`redis_atomic_server::start::Embed`): the
//! production server crate links neither verify nor the testkit.

use redis_atomic::{Client, ClientConfig};
use redis_atomic_testkit::{
    ClusterOptions, RedisCluster, RedisServer, ServerOptions, TestkitError,
};

/// Why no server could be reached or started.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BootstrapError {
    /// The given deployment (or the embedded server) refused the client.
    #[error(transparent)]
    Connect(#[from] redis_atomic::Error),
    /// The embedded redis-server did not start (no `redis-server` binary, no free port…).
    #[error("starting the embedded redis-server")]
    EmbedServer(#[source] TestkitError),
    /// The embedded cluster did not start.
    #[error("starting the embedded cluster")]
    EmbedCluster(#[source] TestkitError),
}

/// What a command runs against: the user's deployment, or a server started for the run, kept
/// alive while this guard lives (dropping it stops the server or cluster and deletes its data).
#[non_exhaustive]
pub enum Embedded {
    /// The user's deployment (a URL was given): nothing was started.
    None,
    /// An embedded redis-server.
    Server(RedisServer),
    /// An embedded 3-primary, 3-replica cluster.
    Cluster(RedisCluster),
}

impl Embedded {
    /// Starts an embedded redis-server, or a 3+3 cluster with `cluster`.
    pub fn start(cluster: bool) -> Result<Embedded, BootstrapError> {
        Ok(if cluster {
            let cluster = RedisCluster::start(ClusterOptions::default())
                .map_err(BootstrapError::EmbedCluster)?;
            Embedded::Cluster(cluster)
        } else {
            let server = RedisServer::start(ServerOptions::default())
                .map_err(BootstrapError::EmbedServer)?;
            Embedded::Server(server)
        })
    }

    /// Whether a server was started for the run (not the user's deployment).
    pub fn is_embedded(&self) -> bool {
        !matches!(self, Embedded::None)
    }

    /// The started server's URL, or every node's of the started cluster (empty for `None`).
    pub fn urls(&self) -> Vec<String> {
        match self {
            Embedded::None => Vec::new(),
            Embedded::Server(s) => vec![s.url()],
            Embedded::Cluster(c) => c.urls(),
        }
    }

    /// What was started, for a report's header: `embedded redis-server 7.2.4` or `embedded 3+3
    /// cluster` (None for the user's deployment).
    pub fn describe(&self) -> Option<String> {
        match self {
            Embedded::None => None,
            Embedded::Server(s) => Some(format!("embedded redis-server {}", s.version())),
            Embedded::Cluster(_) => Some("embedded 3+3 cluster".into()),
        }
    }
}

/// The URL to use — `url` as given, or, without one, that of a server started for the run (a
/// 3+3 cluster's first node with `cluster`) — and the guard keeping what was started alive.
pub fn url_or_embed(
    url: Option<&str>,
    cluster: bool,
) -> Result<(String, Embedded), BootstrapError> {
    match url {
        Some(url) => Ok((url.to_string(), Embedded::None)),
        None => {
            let embedded = Embedded::start(cluster)?;
            let first = embedded.urls().into_iter().next().unwrap_or_default();
            Ok((first, embedded))
        }
    }
}

/// A library client for `url` (one node of a Redis Cluster with `cluster`), or, without a URL,
/// for a server started for the run (a 3+3 cluster with `cluster`); and the guard keeping what
/// was started alive.
pub async fn connect_or_embed(
    url: Option<&str>,
    cluster: bool,
    config: ClientConfig,
) -> Result<(Client, Embedded), BootstrapError> {
    let embedded = match url {
        Some(_) => Embedded::None,
        None => Embedded::start(cluster)?,
    };
    let urls = match url {
        Some(url) => vec![url.to_string()],
        None => embedded.urls(),
    };
    let client = if cluster {
        Client::connect_cluster(&urls, config).await?
    } else {
        let first = urls.into_iter().next().unwrap_or_default();
        Client::connect(&first, config).await?
    };
    Ok((client, embedded))
}
