//! `redis-atomic verify`: prove every primitive's invariant against a real server.
//!
//! Each primitive contributes one check (a file in this folder and one line in [`CHECKS`]): many
//! concurrent tasks drive the primitive for a few seconds while the check counts operations and
//! violations of the invariant (side effects counted, not assumed). With no `--url`, an embedded
//! `redis-server` (or, with `--cluster`, a 3+3 cluster) is started from the testkit, so the whole
//! proof runs on a fresh machine with one command.

mod cas;
mod dedup;
mod fenced;
mod idempotency;
mod lock;
mod report;
mod semaphore;

pub use report::{CheckReport, Report, ServerInfo};

use anyhow::Context as _;
use futures::future::BoxFuture;
use indicatif::{ProgressBar, ProgressStyle};
use redis_atomic::{Client, ClientConfig, Keyspace};
use redis_atomic_testkit::{RedisCluster, RedisServer, ServerOptions};
use std::io::Write;
use std::time::Duration;

/// Arguments of `verify`.
#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// Server to verify against (redis://, rediss://, redis+unix://). Default: an embedded
    /// redis-server started for the run. Keys are written under a fresh `verify-*` namespace.
    #[arg(long)]
    pub url: Option<String>,
    /// Use Redis Cluster (embedded: a 3-primary, 3-replica cluster).
    #[arg(long)]
    pub cluster: bool,
    /// Seconds each check runs.
    #[arg(long, default_value_t = 2.0)]
    pub seconds: f64,
    /// Concurrent tasks per check.
    #[arg(long, default_value_t = 16)]
    pub concurrency: usize,
    /// JSON output on stdout.
    #[arg(long)]
    pub json: bool,
    /// Run each check with its primitive bypassed, to show the check catches the violations a
    /// broken primitive causes (used by the tests; exits 1).
    #[arg(long, hide = true)]
    pub sabotage: bool,
}

/// What a check gets: a client, its own keyspace, how long to run, how many tasks.
#[derive(Clone)]
pub struct CheckCtx {
    /// Connected client.
    pub client: Client,
    /// A keyspace unique to this check and run.
    pub keyspace: Keyspace,
    /// How long to drive the primitive.
    pub duration: Duration,
    /// Concurrent tasks.
    pub concurrency: usize,
    /// Progress (operations so far).
    pub progress: ProgressBar,
    /// Bypass the primitive (see [`VerifyArgs::sabotage`]).
    pub sabotage: bool,
}

/// A check: runs against `ctx`, reports operations and violations.
pub type CheckFn = fn(CheckCtx) -> BoxFuture<'static, anyhow::Result<CheckReport>>;

/// Every primitive's check, in report order.
pub const CHECKS: &[(&str, CheckFn)] = &[
    ("lock", lock::run),
    ("idempotency", idempotency::run),
    ("semaphore", semaphore::run),
    ("fenced-write", fenced::run),
    ("cas", cas::run),
    ("dedup", dedup::run),
];

/// Keeps embedded servers alive for the run.
enum Target {
    External,
    Server(#[allow(dead_code)] RedisServer),
    Cluster(#[allow(dead_code)] RedisCluster),
}

/// Runs `verify` on a fresh tokio runtime; returns the exit code (0 ok, 1 violations, 2 error).
pub fn run_blocking(args: VerifyArgs, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let _ = writeln!(err, "error: tokio runtime: {e}");
            return 2;
        }
    };
    match runtime.block_on(run(args)) {
        Ok((report, json)) => {
            let printed = if json {
                report.write_json(out)
            } else {
                report.write_table(out)
            };
            if let Err(e) = printed {
                let _ = writeln!(err, "error: {e}");
                return 2;
            }
            if report.ok {
                0
            } else {
                1
            }
        }
        Err(e) => {
            let _ = writeln!(err, "error: {e:#}");
            2
        }
    }
}

/// Runs every check and collects the report.
pub async fn run(args: VerifyArgs) -> anyhow::Result<(Report, bool)> {
    if !(args.seconds > 0.0 && args.seconds <= 3600.0) {
        anyhow::bail!("--seconds must be in (0, 3600], got {}", args.seconds);
    }
    if args.concurrency == 0 || args.concurrency > 1024 {
        anyhow::bail!(
            "--concurrency must be in 1..=1024, got {}",
            args.concurrency
        );
    }
    let (client, _target) = connect(&args).await?;
    let server = ServerInfo::fetch(&client).await?;
    let run_id = format!("{:08x}", rand::random::<u32>());
    let mut checks = Vec::new();
    for (name, check) in CHECKS {
        let progress = progress_bar(name, args.json);
        let ctx = CheckCtx {
            client: client.clone(),
            keyspace: Keyspace::new(format!("verify-{run_id}-{name}"))?,
            duration: Duration::from_secs_f64(args.seconds),
            concurrency: args.concurrency,
            progress: progress.clone(),
            sabotage: args.sabotage,
        };
        let report = check(ctx)
            .await
            .with_context(|| format!("check `{name}` failed to run"))?;
        progress.finish_and_clear();
        checks.push(report);
    }
    Ok((Report::new(server, checks), args.json))
}

async fn connect(args: &VerifyArgs) -> anyhow::Result<(Client, Target)> {
    let config = ClientConfig::default();
    Ok(match (&args.url, args.cluster) {
        (Some(url), false) => (Client::connect(url, config).await?, Target::External),
        (Some(url), true) => (
            Client::connect_cluster(std::slice::from_ref(url), config).await?,
            Target::External,
        ),
        (None, false) => {
            let server = RedisServer::start(ServerOptions::default())
                .context("starting the embedded redis-server")?;
            (
                Client::connect(&server.url(), config).await?,
                Target::Server(server),
            )
        }
        (None, true) => {
            let cluster =
                RedisCluster::start(Default::default()).context("starting the embedded cluster")?;
            let client = Client::connect_cluster(&cluster.urls(), config).await?;
            (client, Target::Cluster(cluster))
        }
    })
}

fn progress_bar(name: &str, hidden: bool) -> ProgressBar {
    if hidden {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new_spinner();
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{spinner} {prefix:>12} {pos} ops {elapsed}") {
        bar.set_style(style);
    }
    bar.set_prefix(name.to_string());
    bar.enable_steady_tick(Duration::from_millis(100));
    bar
}
