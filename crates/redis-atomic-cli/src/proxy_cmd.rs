//! `redis-atomic proxy`: a reverse proxy that gives any HTTP service Idempotency-Key semantics
//! and rate limits ([`redis_atomic_http::proxy`]), from the command line.
//!
//! Thin on purpose: parse the flags, load the config, connect (or start the embedded server the
//! way `verify` and `doctor` do: the testkit's [`RedisServer`]), bind, print the bound address on
//! one line (scripts and tests read it, so `--listen 127.0.0.1:0` is usable), serve until ctrl-c
//! or SIGTERM, drain, stop the embedded server.

use anyhow::Context as _;
use redis_atomic::{Client, ClientConfig};
use redis_atomic_http::config::Config;
use redis_atomic_http::proxy::{shutdown_signal, Proxy, Upstream};
use redis_atomic_testkit::{RedisServer, ServerOptions};
use std::io::Write;
use std::path::PathBuf;

/// `redis-atomic proxy` arguments.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit codes: 0 stopped by ctrl-c or SIGTERM after draining, 2 usage, \
    unreadable or invalid config, unreachable Redis, or an address that cannot be bound."
)]
pub struct ProxyArgs {
    /// The service behind the proxy, e.g. http://127.0.0.1:8080 (plain HTTP; a path is a base
    /// prefix for every forwarded request).
    #[arg(long, value_name = "URL")]
    pub upstream: String,
    /// Address to listen on (loopback by default; port 0 picks a free one).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8090")]
    pub listen: String,
    /// Redis URL (redis://, rediss://, redis+sentinel://). Default: an embedded redis-server
    /// started for this run (keys are lost when it stops).
    #[arg(long, value_name = "URL")]
    pub redis: Option<String>,
    /// TOML config: [limits.NAME] policies, [proxy] namespace, key_ttl_ms, max_body_bytes,
    /// upstream_timeout_ms, [[proxy.routes]] path, require_key, limits (docs/proxy.md).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// TLS files for a rediss:// --redis.
    #[command(flatten)]
    pub conn: crate::conn::ConnArgs,
}

/// Runs the proxy until a shutdown signal; returns the exit code.
pub fn run_blocking(args: ProxyArgs, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let result = crate::conn::runtime().and_then(|rt| rt.block_on(run(&args, out)));
    match result {
        Ok(()) => 0,
        Err(e) => {
            let _ = writeln!(err, "error: {}", crate::errors::one_line(&e));
            2
        }
    }
}

async fn run(args: &ProxyArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let upstream = Upstream::parse(&args.upstream).map_err(anyhow::Error::msg)?;
    let config = match &args.config {
        Some(path) => Config::load(path)?,
        None => Config::default(),
    };
    args.conn.require_url(args.redis.as_deref())?;
    let listener = tokio::net::TcpListener::bind(&args.listen)
        .await
        .with_context(|| format!("--listen {}", args.listen))?;
    // Kept alive while the proxy serves; dropping it stops the embedded server.
    let mut embedded = None;
    let url = match &args.redis {
        Some(url) => url.clone(),
        None => {
            let server = RedisServer::start(ServerOptions::default())
                .context("starting the embedded redis-server")?;
            let url = server.url();
            embedded = Some(server);
            url
        }
    };
    let client = Client::connect(&url, args.conn.client_config(ClientConfig::default()))
        .await
        .context("connecting to Redis")?;
    let proxy = Proxy::new(client, &config, upstream)?;
    let addr = listener.local_addr().context("bound address")?;
    writeln!(out, "redis-atomic proxy listening on http://{addr}")?;
    out.flush()?;
    proxy
        .serve(listener, shutdown_signal())
        .await
        .context("serving")?;
    drop(embedded);
    Ok(())
}
