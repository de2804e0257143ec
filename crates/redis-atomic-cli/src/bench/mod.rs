//! `redis-atomic bench`: what each primitive costs, measured as ratios in one run (DESIGN,
//! "Performance"): decisions/s through the library against raw `EVALSHA` of the same scripts on
//! the same number of connections and tasks; p50/p99 latency of both; server µs and round trips
//! per decision from `INFO commandstats`; `MEMORY USAGE` of one record.
//!
//! Each primitive adds one entry to [`BENCHES`] (like verify's `CHECKS`): a setup returning a
//! [`Workload`] that performs one decision either way. The two paths run in alternating rounds
//! (ABBA, see [`phase`]) so that drift on a busy machine hits both alike. With no `--url`, an
//! embedded redis-server is started, so the numbers come from a quiet server; against a shared
//! server, commandstats include other clients' traffic.

mod fenced;
mod idempotency;
mod lock;
mod phase;
mod queue;
mod quota;
mod ratelimit;
mod report;
mod semaphore;
mod stats;

pub use report::{BenchReport, PathStats, Report};

use crate::verify::ServerInfo;
use anyhow::Context as _;
use futures::future::BoxFuture;
use redis::aio::MultiplexedConnection;
use redis_atomic::{Client, ClientConfig, Keyspace};
use redis_atomic_testkit::{RedisServer, ServerOptions};
use std::io::Write;

/// Arguments of `bench`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Server to measure (default: an embedded redis-server started for the run). Keys go under
    /// a fresh `bench-*` namespace.
    #[arg(long)]
    pub url: Option<String>,
    /// Seconds per path (library, raw) per primitive, split over the rounds.
    #[arg(long, default_value_t = 2.0)]
    pub seconds: f64,
    /// Rounds per primitive, paths alternating in ABBA order (raw, library, library, raw, ...).
    #[arg(long, default_value_t = 4)]
    pub rounds: usize,
    /// Concurrent tasks.
    #[arg(long, default_value_t = 50)]
    pub concurrency: usize,
    /// Connections (the library's pool size; raw tasks share as many multiplexed connections).
    /// Defaults to the library's own default pool size.
    #[arg(long, default_value_t = ClientConfig::default().pool_size)]
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

/// One primitive's decisions, both ways. Task `t`'s `i`-th call (`i` counts on across rounds,
/// per path); a phase ends only at the end of a cycle, so each task's pairs (acquire/release,
/// begin/complete) always complete.
pub trait Workload: Send + Sync {
    /// Decisions in one cycle: 2 for acquire | release, 3 for enqueue | claim | ack.
    fn cycle(&self) -> u64;
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
    Bench {
        name: "queue",
        decision: "enqueue 128 B | claim 1 | ack, one queue shared by all tasks",
        setup: queue::setup,
    },
    Bench {
        name: "ratelimit",
        decision: "consume 1 on a GCRA limit (never refused), one identity per task",
        setup: ratelimit::setup_gcra,
    },
    Bench {
        name: "ratelimit-fw",
        decision: "consume 1 on a fixed window (never refused), one identity per task",
        setup: ratelimit::setup_fixed_window,
    },
    Bench {
        name: "ratelimit-sl",
        decision:
            "consume 1 on a sliding log of 10 000 per 100 ms (never refused), one identity per task",
        setup: ratelimit::setup_sliding_log,
    },
    Bench {
        name: "quota",
        decision: "bounded add +1 | -1 on [0, 10^6], one counter per task",
        setup: quota::setup,
    },
    Bench {
        name: "semaphore",
        decision: "acquire | release of a permit (capacity 4), one semaphore per task",
        setup: semaphore::setup,
    },
    Bench {
        name: "fenced-write",
        decision: "one SET under an increasing fence, one resource per task",
        setup: fenced::setup,
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
    check_args(args)?;
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
    let mut admin = redis::Client::open(url.as_str())?
        .get_multiplexed_async_connection()
        .await?;
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
        let mut driver = phase::Driver {
            bench,
            ctx: ctx.clone(),
            url: &url,
            admin: &mut admin,
            args,
        };
        let (raw, lib) = phase::rounds(&mut driver).await?;
        let workload = (bench.setup)(ctx).await?;
        let memory = memory_usage(&client, &workload.record().await?).await?;
        workload.cleanup(args.concurrency).await?;
        benches.push(BenchReport::new(bench, &lib, &raw, memory));
    }
    Ok(Report::new(server, args, benches))
}

fn check_args(args: &BenchArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.seconds > 0.0 && args.seconds <= 600.0,
        "--seconds must be in (0, 600], got {}",
        args.seconds
    );
    anyhow::ensure!(
        (1..=100).contains(&args.rounds),
        "--rounds must be 1..=100, got {}",
        args.rounds
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
    Ok(())
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
