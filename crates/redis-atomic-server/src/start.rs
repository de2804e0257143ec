//! The one start-up sequence of every face, written once so they cannot drift apart:
//!
//! 1. the config (`--config`: TOML, validated whole before anything starts);
//! 2. the listen check: a face that authenticates ([`Face::authenticates`]) refuses a
//!    non-loopback address without `[auth] tokens`;
//! 3. Redis: the deployment given, or a server started for the run by the caller's
//!    [`Embed`] (the CLI passes the testkit's embedded redis-server: this production crate
//!    links no test-server code of its own);
//! 4. the script library loaded;
//! 5. the face built over the client ([`Face::app`]);
//! 6. the port bound;
//! 7. the bound address printed as the first stdout line, `http://HOST:PORT`, the same for every
//!    face (a script or test reads it and sends requests at once; `--listen 127.0.0.1:0` works);
//! 8. served until the shutdown future resolves ([`shutdown_signal`]: SIGTERM or Ctrl-C), then
//!    the requests in flight drained and the embedded server stopped.
//!
//! Every step before 8 fails with a [`StartError`] of its own, one line; only 8 fails as
//! [`StartError::Serving`] (the CLI's exit 1, against 2 for the others).

use crate::auth::{check_listen, Auth};
use crate::config::{Config, ConfigError};
use redis_atomic::{Client, ClientConfig};
use std::any::Any;
use std::future::Future;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;

/// A face: what it serves once Redis is reachable. `serve` and `proxy` are the two of this crate
/// ([`crate::faces`]); a third implements this trait and gets the same start-up, listen check,
/// first line and shutdown. (A gRPC face serves its tonic routes as an axum router.)
pub trait Face {
    /// The face's name (`serve`, `proxy`), in logs.
    fn name(&self) -> &'static str;

    /// Whether the face authenticates its callers with `[auth] tokens`: then it refuses to
    /// listen off loopback without them.
    fn authenticates(&self) -> bool;

    /// The face's service over `client` (connected, scripts loaded), configured by `config`;
    /// an error if the face refuses its settings.
    fn app(&self, client: Client, config: &Config) -> Result<axum::Router, FaceError>;

    /// A second address and what it serves (`rls --http`: the HTTP routes beside gRPC), asked
    /// once after [`Face::app`]; bound after the first, its `http://HOST:PORT` the second stdout
    /// line, drained on the same shutdown. None by default.
    fn side(&self) -> Option<(SocketAddr, axum::Router)> {
        None
    }
}

/// Why a face refused its settings ([`Face::app`]), or why no Redis was reached.
pub type FaceError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Starts a Redis for a run given no URL: a redis-server, or a 3+3 cluster when the argument
/// (`cluster`) is true. The caller that offers an embedded default passes it ([`Start::embed`]);
/// without one, a run needs a URL.
pub type Embed = fn(cluster: bool) -> Result<Embedded, FaceError>;

/// A Redis started for the run ([`Embed`]): its nodes' URLs, and what keeps it running (dropped
/// when the run ends, which stops it).
pub struct Embedded {
    urls: Vec<String>,
    _guard: Box<dyn Any + Send>,
}

impl Embedded {
    /// The started server's (or every cluster node's) URLs, and the guard that stops it when
    /// dropped.
    pub fn new(urls: Vec<String>, guard: impl Any + Send) -> Embedded {
        Embedded {
            urls,
            _guard: Box::new(guard),
        }
    }
}

/// Where a face listens and which Redis it uses.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Start {
    /// The address to listen on (port 0: any free port, printed at start).
    pub listen: SocketAddr,
    /// The Redis URL (with `cluster`, one node of the cluster); None: an embedded server started
    /// for the run (a 3+3 cluster with `cluster`).
    pub redis: Option<String>,
    /// The deployment is a Redis Cluster.
    pub cluster: bool,
    /// The client's settings (TLS, timeouts…).
    pub client: ClientConfig,
    /// The TOML config file; None: the defaults.
    pub config: Option<PathBuf>,
    /// What starts a Redis when [`Start::redis`] is None; None: a URL is required.
    pub embed: Option<Embed>,
}

impl Start {
    /// Listening on `listen`, no Redis URL and no embedded server (set one of them), default
    /// client settings, no config file.
    pub fn new(listen: SocketAddr) -> Start {
        Start {
            listen,
            redis: None,
            cluster: false,
            client: ClientConfig::default(),
            config: None,
            embed: None,
        }
    }

    /// Redis at `url` (None: embedded).
    pub fn redis(mut self, url: Option<String>) -> Start {
        self.redis = url;
        self
    }

    /// The deployment is a Redis Cluster.
    pub fn cluster(mut self, cluster: bool) -> Start {
        self.cluster = cluster;
        self
    }

    /// The client's settings.
    pub fn client(mut self, config: ClientConfig) -> Start {
        self.client = config;
        self
    }

    /// The TOML config file.
    pub fn config(mut self, path: Option<PathBuf>) -> Start {
        self.config = path;
        self
    }

    /// What starts a Redis for a run given no URL.
    pub fn embed(mut self, embed: Embed) -> Start {
        self.embed = Some(embed);
        self
    }
}

/// Why a face did not start, or stopped serving: one line each.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// The config file is unreadable or invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A non-loopback address for a face that authenticates, without `[auth] tokens`.
    #[error("{0}")]
    Listen(String),
    /// Redis is unreachable, the embedded server did not start, or neither a URL nor an
    /// [`Embed`] was given.
    #[error("reaching Redis")]
    Redis(#[source] FaceError),
    /// The script library could not be loaded.
    #[error("loading the scripts")]
    Scripts(#[source] redis_atomic::Error),
    /// The face refused its settings.
    #[error("{face}")]
    Face {
        /// The face.
        face: &'static str,
        /// Why.
        #[source]
        source: FaceError,
    },
    /// The address could not be bound.
    #[error("binding {addr}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The OS's reason.
        #[source]
        source: std::io::Error,
    },
    /// The first line could not be written.
    #[error("writing the bound address")]
    Output(#[source] std::io::Error),
    /// The server failed while serving (after the first line).
    #[error("serving")]
    Serving(#[source] std::io::Error),
}

/// Starts `face` as `start` says, prints the bound address as the first line of `out`, and
/// serves until `shutdown` resolves; then drains and stops the embedded server (if any).
pub async fn run(
    face: &dyn Face,
    start: Start,
    out: &mut dyn Write,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), StartError> {
    let config = match &start.config {
        Some(path) => Config::load(path)?,
        None => Config::default(),
    };
    if face.authenticates() {
        check_listen(start.listen, &Auth::new(&config.auth, "")).map_err(StartError::Listen)?;
    }
    let (client, embedded) = connect(&start).await.map_err(StartError::Redis)?;
    client
        .load(redis_atomic::script::registry::ALL)
        .await
        .map_err(StartError::Scripts)?;
    let app = face
        .app(client, &config)
        .map_err(|source| StartError::Face {
            face: face.name(),
            source,
        })?;
    let listener = tokio::net::TcpListener::bind(start.listen)
        .await
        .map_err(|source| StartError::Bind {
            addr: start.listen,
            source,
        })?;
    let bound = listener.local_addr().map_err(StartError::Output)?;
    let side = match face.side() {
        Some((addr, router)) => {
            let l = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|source| StartError::Bind { addr, source })?;
            Some((l, router))
        }
        None => None,
    };
    writeln!(out, "http://{bound}").map_err(StartError::Output)?;
    if let Some((l, _)) = &side {
        writeln!(
            out,
            "http://{}",
            l.local_addr().map_err(StartError::Output)?
        )
        .map_err(StartError::Output)?;
    }
    out.flush().map_err(StartError::Output)?;
    tracing::info!(face = face.name(), %bound, embedded = embedded.is_some(), "serving");
    let shutdown = futures::FutureExt::shared(Box::pin(shutdown));
    let side = side.map(|(l, router)| tokio::spawn(serve(l, router, shutdown.clone())));
    serve(listener, app, shutdown)
        .await
        .map_err(StartError::Serving)?;
    if let Some(side) = side {
        match side.await {
            Ok(r) => r.map_err(StartError::Serving)?,
            Err(e) => return Err(StartError::Serving(std::io::Error::other(e))),
        }
    }
    drop(embedded);
    Ok(())
}

/// A client of the deployment `start` names, or of a Redis its [`Embed`] starts (a cluster with
/// `start.cluster`); and what was started, kept alive until the run ends.
async fn connect(start: &Start) -> Result<(Client, Option<Embedded>), FaceError> {
    let (urls, embedded) = match (&start.redis, start.embed) {
        (Some(url), _) => (vec![url.clone()], None),
        (None, Some(embed)) => {
            let embedded = embed(start.cluster)?;
            (embedded.urls.clone(), Some(embedded))
        }
        (None, None) => return Err("no Redis URL given, and no embedded server to start".into()),
    };
    let config = start.client.clone();
    let client = match (start.cluster, urls.first()) {
        (true, _) => Client::connect_cluster(&urls, config).await?,
        (false, Some(url)) => Client::connect(url, config).await?,
        (false, None) => return Err("the embedded server has no URL".into()),
    };
    Ok((client, embedded))
}

/// Serves `app` on `listener` (each request knows its peer's address) until `shutdown`
/// resolves, then lets in-flight requests finish.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: axum::Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = app.into_make_service_with_connect_info::<SocketAddr>();
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await
}

/// Resolves when SIGTERM or Ctrl-C arrives.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        // A handler that cannot be installed must not read as a signal.
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
    tracing::info!("shutting down: draining in-flight requests");
}
