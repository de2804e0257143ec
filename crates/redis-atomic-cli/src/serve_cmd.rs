//! `redis-atomic serve`: every primitive over HTTP/JSON (the router is
//! [`redis_atomic_http::serve`]; this is the thin command around it).
//!
//! Order matters for the one-line errors: the config and the listen address are checked before
//! anything starts (a non-loopback address without `[auth] tokens` is refused), then Redis is
//! reached (an embedded redis-server when no `--redis` is given, like `verify` and `doctor`), the
//! scripts loaded, the port bound, and only then the bound address printed on one stdout line
//! (`http://127.0.0.1:7379`), so a script that reads that line can send requests at once.

use crate::conn::{ConnArgs, Embedded};
use anyhow::Context as _;
use redis_atomic::script::registry;
use redis_atomic::{Client, ClientConfig};
use redis_atomic_http::config::Config;
use redis_atomic_http::face;
use redis_atomic_http::serve::{router, ServeState, DEFAULT_MAX_BODY_BYTES};
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;

/// Default listen address (loopback: no auth required).
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7379";

/// Arguments of `serve`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Prints the bound address (http://HOST:PORT) on one stdout line once \
    ready; logs go to stderr (RUST_LOG=info for one line per event). Stops on SIGTERM or Ctrl-C \
    after in-flight requests finish.\n\nExit codes: 0 stopped by a signal; 1 the server failed \
    while running; 2 usage, unreadable or invalid --config, a non-loopback --listen without \
    [auth] tokens, an address that cannot be bound, or Redis unreachable."
)]
pub struct ServeArgs {
    /// Redis to use (redis://, rediss://, redis+unix://, redis+sentinel://; with --cluster, one
    /// node of the cluster). Default: an embedded redis-server started for the run.
    #[arg(long, value_name = "URL")]
    pub redis: Option<String>,
    /// The deployment is a Redis Cluster (embedded: a 3+3 cluster).
    #[arg(long)]
    pub cluster: bool,
    /// TLS files for a rediss:// --redis.
    #[command(flatten)]
    pub conn: ConnArgs,
    /// Address to listen on (port 0: any free port, printed at start).
    #[arg(long, default_value = DEFAULT_LISTEN)]
    pub listen: SocketAddr,
    /// The TOML config: [auth] tokens, [limits.NAME] policies, [serve] settings.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// Runs `serve` on a fresh runtime until a signal; returns the exit code.
pub fn run_blocking(args: ServeArgs, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let runtime = match crate::conn::runtime() {
        Ok(rt) => rt,
        Err(e) => {
            let _ = writeln!(err, "error: {e:#}");
            return 2;
        }
    };
    match runtime.block_on(run(&args, out)) {
        Ok(()) => 0,
        Err(Failure::Setup(e)) => {
            let _ = writeln!(err, "error: {}", crate::errors::one_line(&e));
            2
        }
        Err(Failure::Running(e)) => {
            let _ = writeln!(err, "error: serving: {e}");
            1
        }
    }
}

enum Failure {
    Setup(anyhow::Error),
    Running(std::io::Error),
}

impl<E: Into<anyhow::Error>> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure::Setup(e.into())
    }
}

async fn run(args: &ServeArgs, out: &mut dyn Write) -> Result<(), Failure> {
    let config = match &args.config {
        Some(path) => Config::load(path)?,
        None => Config::default(),
    };
    let state_auth = face::Auth::new(&config.auth, "");
    face::check_listen(args.listen, &state_auth).map_err(anyhow::Error::msg)?;
    args.conn.require_url(args.redis.as_deref())?;
    let (client, _embedded) = connect(args).await?;
    client
        .load(registry::ALL)
        .await
        .context("loading the scripts")?;
    let state = ServeState::new(client, &config)?;
    let max_body = config
        .serve
        .max_body_bytes
        .unwrap_or(DEFAULT_MAX_BODY_BYTES);
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("binding {}", args.listen))?;
    let bound = listener.local_addr().context("bound address")?;
    writeln!(out, "http://{bound}")?;
    out.flush()?;
    tracing::info!(%bound, auth = state.auth().required(), "serving");
    face::serve(listener, router(state, max_body), face::shutdown_signal())
        .await
        .map_err(Failure::Running)
}

async fn connect(args: &ServeArgs) -> anyhow::Result<(Client, Embedded)> {
    let config = args.conn.client_config(ClientConfig::default());
    crate::conn::connect_or_embed(args.redis.as_deref(), args.cluster, config).await
}
