//! `redis-atomic bench`: what each primitive costs, measured as ratios in one run (DESIGN,
//! "Performance"): decisions/s through the library against raw `EVALSHA` of the same scripts on
//! the same number of connections and tasks; p50/p99 latency of both; server µs and round trips
//! per decision from `INFO commandstats`; `MEMORY USAGE` of one record.
//!
//! Each primitive adds one entry to [`BENCHES`] (like verify's `CHECKS`): a setup returning a
//! [`Workload`] that performs one decision either way. With no `--url`, an embedded redis-server
//! is started, so the numbers come from a quiet server; against a shared server, commandstats
//! include other clients' traffic.

mod idempotency;
mod lock;
mod report;
mod stats;

pub use report::{BenchReport, PathStats, Report};

use crate::verify::ServerInfo;
use anyhow::Context as _;
use futures::future::BoxFuture;
use indicatif::{ProgressBar, ProgressStyle};
use redis::aio::MultiplexedConnection;
use redis_atomic::{Client, ClientConfig, Keyspace};
use redis_atomic_testkit::{RedisServer, ServerOptions};
use stats::CommandStats;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Arguments of `bench`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Server to measure (default: an embedded redis-server started for the run). Keys go under
    /// a fresh `bench-*` namespace.
    #[arg(long)]
    pub url: Option<String>,
    /// Seconds per path (library, raw) per primitive.
    #[arg(long, default_value_t = 2.0)]
    pub seconds: f64,
    /// Concurrent tasks.
    #[arg(long, default_value_t = 50)]
    pub concurrency: usize,
    /// Connections (the library's pool size; raw tasks share as many multiplexed connections).
    #[arg(long, default_value_t = 1)]
    pub connections: usize,
    /// Only these primitives (repeatable); default all.
    #[arg(long)]
    pub only: Vec<String>,
    /// JSON output on stdout.
    #[arg(long)]
    pub json: bool,
}

/// What a workload gets.
#[derive(Clone)]
pub struct BenchCtx {
    /// Library client.
    pub client: Client,
    /// A keyspace unique to this run and primitive.
    pub keyspace: Keyspace,
    /// Concurrent tasks (per-task state is indexed by task).
    pub tasks: usize,
}

/// One primitive's decisions, both ways. Task `t`'s `i`-th call; calls alternate so that each
/// task's pairs (acquire/release, begin/complete) always complete.
pub trait Workload: Send + Sync {
    /// One decision through the library.
    fn library(&self, task: usize, i: u64) -> BoxFuture<'_, anyhow::Result<()>>;
    /// The same decision as raw `EVALSHA` of the same script.
    fn raw<'a>(
        &'a self,
        conn: &'a mut MultiplexedConnection,
        task: usize,
        i: u64,
    ) -> BoxFuture<'a, anyhow::Result<()>>;
    /// Creates one record as the primitive leaves it; returns its keys (for `MEMORY USAGE`).
    fn record(&self) -> BoxFuture<'_, anyhow::Result<Vec<String>>>;
    /// Deletes what the run left that would outlive it for long.
    fn cleanup(&self, tasks: usize) -> BoxFuture<'_, anyhow::Result<()>>;
}

/// Builds a workload.
pub type SetupFn = fn(BenchCtx) -> BoxFuture<'static, anyhow::Result<Box<dyn Workload>>>;

/// One entry of the table.
pub struct Bench {
    /// Primitive.
    pub name: &'static str,
    /// What one decision is.
    pub decision: &'static str,
    /// Workload constructor.
    pub setup: SetupFn,
}

/// Every primitive's benchmark, in report order.
pub const BENCHES: &[Bench] = &[
    Bench {
        name: "lock",
        decision: "acquire | release, alternating on one resource per task",
        setup: lock::setup,
    },
    Bench {
        name: "idempotency",
        decision: "begin on a fresh key | complete with a 512 B response",
        setup: idempotency::setup,
    },
];

/// Checks a raw script reply's status word (the raw path must do real work too).
pub fn expect_status(reply: redis::Value, want: &str) -> anyhow::Result<()> {
    if let redis::Value::Array(items) = &reply {
        if let Some(redis::Value::BulkString(s)) = items.first() {
            if s == want.as_bytes() {
                return Ok(());
            }
        }
    }
    anyhow::bail!("raw EVALSHA: expected {want}, got {reply:?}")
}

/// Runs `bench` on a fresh runtime; returns the exit code (0 ok, 2 error).
pub fn run_blocking(args: BenchArgs, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let result = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("tokio runtime")
        .and_then(|rt| rt.block_on(run(&args)));
    let printed = result.and_then(|report| {
        if args.json {
            report.write_json(out)
        } else {
            report.write_table(out)
        }
        .map_err(Into::into)
    });
    match printed {
        Ok(()) => 0,
        Err(e) => {
            let _ = writeln!(err, "error: {e:#}");
            2
        }
    }
}

/// Runs every selected benchmark.
pub async fn run(args: &BenchArgs) -> anyhow::Result<Report> {
    anyhow::ensure!(
        args.seconds > 0.0 && args.seconds <= 600.0,
        "--seconds must be in (0, 600], got {}",
        args.seconds
    );
    anyhow::ensure!(
        (1..=1024).contains(&args.concurrency) && (1..=64).contains(&args.connections),
        "--concurrency must be 1..=1024 and --connections 1..=64"
    );
    if let Some(unknown) = args
        .only
        .iter()
        .find(|o| !BENCHES.iter().any(|b| b.name == *o))
    {
        let names: Vec<&str> = BENCHES.iter().map(|b| b.name).collect();
        anyhow::bail!("no benchmark `{unknown}`; known: {}", names.join(", "));
    }
    let (url, _server) = match &args.url {
        Some(url) => (url.clone(), None),
        None => {
            let server = RedisServer::start(ServerOptions::default())
                .context("starting the embedded redis-server")?;
            (server.url(), Some(server))
        }
    };
    let config = ClientConfig::default().pool_size(args.connections);
    let client = Client::connect(&url, config).await?;
    client.load_all().await?;
    let raw_client = redis::Client::open(url.as_str())?;
    let mut admin = raw_client.get_multiplexed_async_connection().await?;
    let mut raws = Vec::new();
    for _ in 0..args.connections {
        raws.push(raw_client.get_multiplexed_async_connection().await?);
    }
    let server = ServerInfo::fetch(&client).await?;
    let run_id = format!("{:08x}", rand::random::<u32>());
    let mut benches = Vec::new();
    for bench in BENCHES
        .iter()
        .filter(|b| args.only.is_empty() || args.only.iter().any(|o| o == b.name))
    {
        let ctx = BenchCtx {
            client: client.clone(),
            keyspace: Keyspace::new(format!("bench-{run_id}-{}", bench.name))?,
            tasks: args.concurrency,
        };
        let workload: Arc<dyn Workload> = Arc::from((bench.setup)(ctx).await?);
        let raw = phase(&workload, Some(&raws), &mut admin, args, bench.name).await?;
        let lib = phase(&workload, None, &mut admin, args, bench.name).await?;
        let memory = memory_usage(&client, &workload.record().await?).await?;
        workload.cleanup(args.concurrency).await?;
        benches.push(BenchReport::new(bench, lib, raw, memory));
    }
    Ok(Report::new(server, args, benches))
}

/// Drives `workload` from `args.concurrency` tasks for `args.seconds`: raw when `raws` is given.
async fn phase(
    workload: &Arc<dyn Workload>,
    raws: Option<&[MultiplexedConnection]>,
    admin: &mut MultiplexedConnection,
    args: &BenchArgs,
    name: &str,
) -> anyhow::Result<PathStats> {
    let label = format!("{name} {}", if raws.is_some() { "raw" } else { "library" });
    let progress = progress_bar(&label, args.json);
    let before = CommandStats::fetch(admin).await?;
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(args.seconds);
    let mut tasks = Vec::new();
    for t in 0..args.concurrency {
        let (workload, progress) = (workload.clone(), progress.clone());
        let mut conn = raws.map(|c| c[t % c.len()].clone());
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut i = 0u64;
            // Finish the last pair so the next phase starts from a clean state.
            while Instant::now() < deadline || i % 2 == 1 {
                let sent = Instant::now();
                match conn.as_mut() {
                    Some(conn) => workload.raw(conn, t, i).await?,
                    None => workload.library(t, i).await?,
                }
                latencies.push(u32::try_from(sent.elapsed().as_micros()).unwrap_or(u32::MAX));
                progress.inc(1);
                i += 1;
            }
            anyhow::Ok(latencies)
        }));
    }
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await??);
    }
    let secs = started.elapsed().as_secs_f64();
    let after = CommandStats::fetch(admin).await?;
    progress.finish_and_clear();
    latencies.sort_unstable();
    Ok(PathStats::new(
        &latencies,
        secs,
        before.top_level_since(&after),
    ))
}

async fn memory_usage(client: &Client, keys: &[String]) -> anyhow::Result<u64> {
    let mut total = 0;
    for key in keys {
        let cmd = redis::cmd("MEMORY")
            .arg("USAGE")
            .arg(key)
            .arg("SAMPLES")
            .arg(0)
            .clone();
        let bytes: Option<u64> = redis::from_redis_value(client.command(&cmd).await?)?;
        total += bytes.unwrap_or(0);
    }
    Ok(total)
}

fn progress_bar(label: &str, hidden: bool) -> ProgressBar {
    if hidden {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new_spinner();
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{spinner} {prefix:>20} {pos} decisions {elapsed}")
    {
        bar.set_style(style);
    }
    bar.set_prefix(label.to_string());
    bar.enable_steady_tick(Duration::from_millis(100));
    bar
}
