//! `redis-atomic rls`: Envoy's gRPC rate-limit service — the `redis-atomic-server` crate's `rls`
//! face ([`RlsFace`]) started from flags through the faces' one start-up.

use super::proxy::{self as face, FaceArgs};
use redis_atomic_server::faces::rls::{RlsFace, RlsSettings};
use std::io::Write;
use std::net::SocketAddr;
use std::time::Duration;

/// Arguments of `rls`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Prints the bound address (http://HOST:PORT: gRPC and HTTP on one port) on \
    the first stdout line once ready, and with --http that address on the second. Logs go to \
    stderr (RUST_LOG=info). Reloads the config on SIGHUP and when a file changes (a bad one \
    keeps the old rules). Stops on SIGTERM or Ctrl-C after in-flight requests finish.\n\nExit \
    codes: 0 stopped by a signal; 1 the server failed while running; 2 usage, unreadable or \
    invalid --config, an address that cannot be bound, or Redis unreachable."
)]
pub struct RlsArgs {
    /// Address of the gRPC service (and the HTTP routes), IP:PORT (port 0: any free port).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8081")]
    pub listen: String,
    /// Also serve POST /json, /metrics and /healthz on this IP:PORT.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// Longest wait for Redis per request, in ms; past it the answer is UNAVAILABLE (Envoy's
    /// failure_mode_deny decides). Envoy's own timeout defaults to 20 ms.
    #[arg(long, value_name = "MS", default_value_t = 10)]
    pub deadline_ms: u64,
    /// Key namespace.
    #[arg(long, default_value = "rls")]
    pub namespace: String,
    /// Log descriptor values (user ids, keys, paths) in debug lines; off by default.
    #[arg(long)]
    pub log_values: bool,
    /// Which Redis, and --config: envoyproxy/ratelimit's YAML (a file, or a directory of
    /// *.yaml files, one domain each).
    #[command(flatten)]
    pub face: FaceArgs,
}

/// Runs `rls` until a signal; returns the exit code.
pub fn run(mut args: RlsArgs, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    match settings(&mut args) {
        Ok(settings) => match RlsFace::new(settings) {
            Ok(face) => face::start(&face, &args.face, &args.listen, out, err),
            Err(e) => {
                let _ = writeln!(err, "error: {e}");
                2
            }
        },
        Err(e) => {
            let _ = writeln!(err, "error: {e}");
            2
        }
    }
}

/// The face's settings; `--config` moves there (the start-up reads no TOML for rls).
fn settings(args: &mut RlsArgs) -> anyhow::Result<RlsSettings> {
    if args.deadline_ms == 0 || args.deadline_ms > 60_000 {
        anyhow::bail!("--deadline-ms must be 1..=60000");
    }
    let http = match &args.http {
        Some(a) => Some(
            a.parse::<SocketAddr>()
                .map_err(|e| anyhow::anyhow!("--http {a}: {e}"))?,
        ),
        None => None,
    };
    let mut s = RlsSettings::default();
    s.config = args.face.config.take();
    s.deadline = Duration::from_millis(args.deadline_ms);
    s.namespace = args.namespace.clone();
    s.http = http;
    s.log_values = args.log_values;
    Ok(s)
}
