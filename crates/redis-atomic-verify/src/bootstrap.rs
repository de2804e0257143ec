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
//!
//! **The server module.** Every server started here — and the servers `verify` starts to inject
//! faults into — loads the server module (docs/module.md) when asked: by [`embed_module`]
//! (`verify --module`) or by `$REDIS_ATOMIC_MODULE` (every command and face, through this one
//! place). A module that is missing or does not load is an error of the start, never a server
//! without it: a run asked to prove the natives must not prove the scripts instead.

use redis_atomic::{Client, ClientConfig};
use redis_atomic_testkit::{
    ClusterOptions, RedisCluster, RedisServer, ServerOptions, TestkitError,
};
use std::path::PathBuf;
use std::sync::OnceLock;

/// The variable naming the server module every embedded server loads (the CLI's name for the
/// module's file too: `redis-atomic module path`).
pub const MODULE_ENV: &str = "REDIS_ATOMIC_MODULE";

/// The module named by [`embed_module`], for the rest of the process.
static MODULE: OnceLock<PathBuf> = OnceLock::new();

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
    /// The server module asked for is not a file, or the server did not load it.
    #[error("the server module {path}: {why}")]
    Module {
        /// The module's path, as given.
        path: PathBuf,
        /// What went wrong, on one line (the server's own words when it refused to load it).
        why: String,
    },
}

/// Every server this process starts for a run from now on (the embedded server or cluster, and
/// `verify`'s fault servers) loads the server module at `path`, whatever `$REDIS_ATOMIC_MODULE`
/// says; the first call wins (one process, one module). Checked when a server starts.
pub fn embed_module(path: PathBuf) {
    let _ = MODULE.set(path);
}

/// The server module embedded servers load: [`embed_module`]'s, else `$REDIS_ATOMIC_MODULE`'s
/// (when set and not empty); None: no module. An error when it names no file.
pub fn embedded_module() -> Result<Option<PathBuf>, BootstrapError> {
    let path = match MODULE.get() {
        Some(path) => path.clone(),
        None => match std::env::var_os(MODULE_ENV) {
            Some(path) if !path.is_empty() => PathBuf::from(path),
            _ => return Ok(None),
        },
    };
    match path.is_file() {
        true => Ok(Some(path)),
        false => Err(BootstrapError::Module {
            path,
            why: "no such file (build it: cargo build -p redis-atomic-module)".into(),
        }),
    }
}

/// The config lines of a server started for a run: `loadmodule` when a module is asked for.
pub(crate) fn module_config() -> Result<Vec<String>, BootstrapError> {
    Ok(embedded_module()?
        .map(|path| format!("loadmodule {}", path.display()))
        .into_iter()
        .collect())
}

/// A start that failed, as the module's error when a module was asked for and the server's
/// log says it refused it (`Module … failed to load: …`): one line, the server's words.
pub(crate) fn module_refused(err: &TestkitError) -> Option<BootstrapError> {
    let path = embedded_module().ok()??;
    let TestkitError::NotReady { log, .. } = err else {
        return None;
    };
    // The first of `Module … failed to load: …`, `Module … not loaded`, `Can't load module …`.
    let line = log.lines().find(|l| {
        let l = l.to_ascii_lowercase();
        l.contains("module")
            && ["failed", "not loaded", "can't load"]
                .iter()
                .any(|w| l.contains(w))
    })?;
    // The log line's prefix (`pid:M 06 Dec 2026 18:00:00.000 # `) says nothing to a reader.
    let why = line.split_once(" # ").map_or(line, |(_, rest)| rest);
    Some(BootstrapError::Module {
        path,
        why: why.trim().to_string(),
    })
}

/// The module's own version, as the started server reports it (`RATOMIC.VERSION`).
fn module_version(server: &RedisServer) -> Option<String> {
    let mut conn = server.client().get_connection().ok()?;
    let reply: Vec<redis::Value> = redis::cmd("RATOMIC.VERSION").query(&mut conn).ok()?;
    match reply.get(1)? {
        redis::Value::BulkString(b) => Some(String::from_utf8_lossy(b).into_owned()),
        redis::Value::SimpleString(s) => Some(s.clone()),
        _ => None,
    }
}

/// What a command runs against: the user's deployment, or a server started for the run, kept
/// alive while this guard lives (dropping it stops the server or cluster and deletes its data).
pub struct Embedded {
    started: Started,
    /// The server module's version, when the started servers loaded it.
    module: Option<String>,
}

/// What was started.
enum Started {
    /// The user's deployment (a URL was given): nothing was started.
    None,
    /// An embedded redis-server.
    Server(RedisServer),
    /// An embedded 3-primary, 3-replica cluster.
    Cluster(RedisCluster),
}

impl Embedded {
    /// Nothing started: the user's deployment.
    pub fn none() -> Embedded {
        Embedded {
            started: Started::None,
            module: None,
        }
    }

    /// Starts an embedded redis-server, or a 3+3 cluster with `cluster`; each loads the server
    /// module when one is asked for ([`embedded_module`]), or fails.
    pub fn start(cluster: bool) -> Result<Embedded, BootstrapError> {
        let extra_config = module_config()?;
        let asked = !extra_config.is_empty();
        let refused = |e: TestkitError, or: fn(TestkitError) -> BootstrapError| {
            module_refused(&e).unwrap_or_else(|| or(e))
        };
        let started = if cluster {
            let opts = ClusterOptions {
                extra_config,
                ..ClusterOptions::default()
            };
            let cluster =
                RedisCluster::start(opts).map_err(|e| refused(e, BootstrapError::EmbedCluster))?;
            Started::Cluster(cluster)
        } else {
            let opts = ServerOptions {
                extra_config,
                ..ServerOptions::default()
            };
            let server =
                RedisServer::start(opts).map_err(|e| refused(e, BootstrapError::EmbedServer))?;
            Started::Server(server)
        };
        let first = match &started {
            Started::Server(s) => Some(s),
            Started::Cluster(c) => c.nodes().first(),
            Started::None => None,
        };
        let module = first.filter(|_| asked).and_then(module_version);
        if let (true, None) = (asked, &module) {
            return Err(BootstrapError::Module {
                path: embedded_module()?.unwrap_or_default(),
                why: "loaded, but RATOMIC.VERSION did not answer: not redis-atomic's module".into(),
            });
        }
        Ok(Embedded { started, module })
    }

    /// Whether a server was started for the run (not the user's deployment).
    pub fn is_embedded(&self) -> bool {
        !matches!(self.started, Started::None)
    }

    /// The started server's URL, or every node's of the started cluster (empty for `None`).
    pub fn urls(&self) -> Vec<String> {
        match &self.started {
            Started::None => Vec::new(),
            Started::Server(s) => vec![s.url()],
            Started::Cluster(c) => c.urls(),
        }
    }

    /// The server module's version when the started servers loaded it.
    pub fn module(&self) -> Option<&str> {
        self.module.as_deref()
    }

    /// What was started, for a report's header: `embedded redis-server 7.2.4`, `embedded 3+3
    /// cluster`, each followed by ` with module ratomic <version>` when it loaded the module
    /// (None for the user's deployment).
    pub fn describe(&self) -> Option<String> {
        let what = match &self.started {
            Started::None => return None,
            Started::Server(s) => format!("embedded redis-server {}", s.version()),
            Started::Cluster(_) => "embedded 3+3 cluster".into(),
        };
        Some(match &self.module {
            Some(version) => format!("{what} with module ratomic {version}"),
            None => what,
        })
    }
}

/// The URL to use — `url` as given, or, without one, that of a server started for the run (a
/// 3+3 cluster's first node with `cluster`) — and the guard keeping what was started alive.
pub fn url_or_embed(
    url: Option<&str>,
    cluster: bool,
) -> Result<(String, Embedded), BootstrapError> {
    match url {
        Some(url) => Ok((url.to_string(), Embedded::none())),
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
        Some(_) => Embedded::none(),
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
