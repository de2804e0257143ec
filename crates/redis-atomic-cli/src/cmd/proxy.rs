//! `redis-atomic proxy`: a reverse proxy that gives any HTTP service Idempotency-Key semantics
//! and rate limits — the `redis-atomic-server` crate's `proxy` face ([`ProxyFace`]) started from
//! flags. The flags every face takes ([`FaceArgs`]), the one call into the server crate's
//! start-up ([`start()`]) and the embedded default it is given ([`embed`]) are here too, for
//! `serve` and any later face.

use crate::args::ConnArgs;
use crate::output::{one_line, runtime};
use redis_atomic::{Batching, ClientConfig};
use redis_atomic_server::faces::proxy::Upstream;
use redis_atomic_server::faces::ProxyFace;
use redis_atomic_server::start::{
    self, shutdown_signal, Embedded, Face, FaceError, Start, StartError,
};
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;

/// The flags of every HTTP face but `--listen` (whose default each face has its own).
#[derive(Debug, clap::Args)]
pub struct FaceArgs {
    /// Redis to use (redis://, rediss://, redis+unix://, redis+sentinel://; with --cluster, one
    /// node of the cluster). Default: an embedded redis-server started for the run (keys are
    /// lost when it stops). `--redis` is an older name of this flag.
    #[arg(long, alias = "redis", value_name = "URL")]
    pub url: Option<String>,
    /// The deployment is a Redis Cluster (embedded: a 3+3 cluster).
    #[arg(long)]
    pub cluster: bool,
    /// TLS files for a rediss:// --url.
    #[command(flatten)]
    pub conn: ConnArgs,
    /// The config file: TOML for serve and proxy (docs/http.md, docs/proxy.md);
    /// envoyproxy/ratelimit's YAML, a file or a directory of them, for rls (docs/envoy.md).
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Every decision a script call of its own: no natural batching of the decisions that queue
    /// behind calls in flight (`ClientConfig::batching`; docs/performance.md "Natural batching").
    #[arg(long)]
    pub no_batching: bool,
}

impl FaceArgs {
    /// The face's client settings before the connection flags: batching unless turned off.
    fn client_config(&self) -> ClientConfig {
        match self.no_batching {
            true => ClientConfig::default().batching(Batching::off()),
            false => ClientConfig::default(),
        }
    }

    /// The start-up settings; a `--listen` that is no IP:PORT is a usage error naming it.
    fn start(&self, listen: &str) -> anyhow::Result<Start> {
        let listen: SocketAddr = listen
            .parse()
            .map_err(|e| anyhow::anyhow!("--listen {listen}: {e}"))?;
        self.conn.require_url(self.url.as_deref())?;
        Ok(Start::new(listen)
            .redis(self.url.clone())
            .cluster(self.cluster)
            .client(self.conn.client_config(self.client_config()))
            .config(self.config.clone())
            .embed(embed))
    }
}

/// Every face's default Redis: the one embedded bootstrap ([`redis_atomic_verify::Embedded`],
/// a redis-server or a 3+3 cluster from the testkit), handed to the server crate's start-up,
/// which links no test-server code itself.
pub fn embed(cluster: bool) -> Result<Embedded, FaceError> {
    let started = redis_atomic_verify::Embedded::start(cluster)?;
    Ok(Embedded::new(started.urls(), started))
}

/// Arguments of `proxy`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Prints the bound address (http://HOST:PORT) on one stdout line once \
    ready. Stops on SIGTERM or Ctrl-C after in-flight requests finish.\n\nExit codes: 0 stopped \
    by a signal; 1 the proxy failed while running; 2 usage, a bad --upstream, unreadable or \
    invalid --config, an address that cannot be bound, or Redis unreachable."
)]
pub struct ProxyArgs {
    /// The service behind the proxy, e.g. http://127.0.0.1:8080 (plain HTTP; a path is a base
    /// prefix for every forwarded request).
    #[arg(long, value_name = "URL")]
    pub upstream: String,
    /// Address to listen on, IP:PORT (loopback by default; port 0 picks a free one).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8090")]
    pub listen: String,
    /// Which Redis, which config ([limits.NAME] policies, [proxy] namespace, key_ttl_ms,
    /// max_body_bytes, upstream_timeout_ms, [[proxy.routes]] path, require_key, limits).
    #[command(flatten)]
    pub face: FaceArgs,
}

/// Runs the proxy until a shutdown signal; returns the exit code.
pub fn run(args: ProxyArgs, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    match Upstream::parse(&args.upstream) {
        Ok(upstream) => start(
            &ProxyFace::new(upstream),
            &args.face,
            &args.listen,
            out,
            err,
        ),
        Err(e) => {
            let _ = writeln!(err, "error: {e}");
            2
        }
    }
}

/// Starts `face` with `args` on `listen` on a fresh runtime until a signal; returns the exit
/// code (0 after a signal, 1 failed while serving, 2 anything before).
pub fn start(
    face: &dyn Face,
    args: &FaceArgs,
    listen: &str,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let started = args.start(listen).and_then(|settings| {
        let runtime = runtime()?;
        Ok(runtime.block_on(start::run(face, settings, out, shutdown_signal())))
    });
    let (code, e) = match started {
        Ok(Ok(())) => return 0,
        Ok(Err(e @ StartError::Serving(_))) => (1, anyhow::Error::from(e)),
        Ok(Err(e)) => (2, anyhow::Error::from(e)),
        Err(e) => (2, e),
    };
    let _ = writeln!(err, "error: {}", one_line(&e));
    code
}
