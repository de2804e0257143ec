//! `redis-atomic bench`: what each primitive costs, measured as ratios in one run (ratios, not
//! absolute figures, carry from one machine to another): decisions/s through the library against
//! raw `EVALSHA` of the same scripts on the same number of connections and tasks; p50/p99
//! latency of both; server µs and round trips per decision from `INFO commandstats`; the
//! server's CPU share from `INFO cpu`; `MEMORY USAGE` of one record. The one benchmark harness of
//! the workspace (no `cargo bench` targets): each figure the docs quote is reproduced by an entry
//! of [`BENCHES`].
//!
//! Each entry (like verify's checks, in [`entries`]) names a setup returning a [`Workload`] that
//! performs one decision either way. The paths run in alternating rounds (ABBA, see [`phase`]) so
//! that drift on a busy machine hits both alike. Some entries add a third path, a classic script
//! the primitive replaces ([`classic`]), as the yardstick for server µs per decision. With no
//! `--url`, an embedded redis-server is started, so the numbers come from a quiet server; against a
//! shared server, commandstats include other clients' traffic.
//!
//! The module series: against a server that loads the module (`--url` of one started with
//! `--loadmodule`, docs/module.md) the library detects it and runs the natives of the scripts
//! it covers, while the raw path still sends `EVALSHA`: each covered entry's library/raw columns
//! (server µs per decision, decisions per server-CPU-second) then compare the module with the
//! scripts, and the report says the module is loaded.

/// Fails the run unless `$got` matches `$want` (every decision of a workload is one it expects,
/// on both paths); with `=> $out`, evaluates to `$out` with the pattern's bindings.
macro_rules! expect {
    ($got:expr, $want:pat => $out:expr) => {
        match $got {
            $want => $out,
            other => anyhow::bail!("expected {}, got {other:?}", stringify!($want)),
        }
    };
    ($got:expr, $want:pat) => {
        expect!($got, $want => ())
    };
}

mod cas;
pub mod classic;
mod drain;
mod entries;
pub mod errors;
mod fenced;
pub mod http;
mod idempotency;
mod lock;
mod phase;
mod queue;
mod quota;
mod ratelimit;
mod report;
pub mod rls;
mod semaphore;
mod stats;
mod workload;

pub use entries::{Bench, BENCHES};
pub use report::{BenchReport, PathStats, ReferenceReport, Report};
pub use workload::{BenchCtx, Conflicts, Path, SetupFn, Stop, Workload};

use redis::aio::MultiplexedConnection;
use redis_atomic::script::registry;
use redis_atomic::{Client, ClientConfig, Keyspace, OwnerToken, RetryPolicy};
use redis_atomic_verify::ServerInfo;
use redis_atomic_verify::{url_or_embed, Embedded};
use std::io::Write;

/// Arguments of `bench`.
#[derive(Debug, clap::Args)]
#[command(after_help = entries::help())]
pub struct BenchArgs {
    /// Server to measure (default: an embedded redis-server started for the run). Keys go under
    /// a fresh `bench-*` namespace, deleted at the end of each entry.
    #[arg(long)]
    pub url: Option<String>,
    /// TLS files for a rediss:// --url.
    #[command(flatten)]
    pub conn: crate::args::ConnArgs,
    /// Seconds per path (library, raw, reference) per entry, split over the rounds.
    #[arg(long, default_value_t = 2.0)]
    pub seconds: f64,
    /// Rounds per entry, paths alternating in ABBA order (raw, library, library, raw, ...).
    #[arg(long, default_value_t = 4)]
    pub rounds: usize,
    /// Concurrent tasks (entries with a fixed count, the cas-N contenders, keep theirs).
    #[arg(long, default_value_t = 50)]
    pub concurrency: usize,
    /// Connections (the library's pool size; raw tasks share as many multiplexed connections).
    /// Defaults to the library's own default pool size.
    #[arg(long, default_value_t = ClientConfig::default().pool_size)]
    pub connections: usize,
    /// Rate-limit entries: each decision's identity drawn at random from this many per path
    /// (1: every task on one identity). Default: one identity per task.
    #[arg(long)]
    pub identities: Option<u64>,
    /// Only these entries (repeatable); default all.
    #[arg(long)]
    pub only: Vec<String>,
    /// The library path without natural batching (every decision a call of its own): run once
    /// with and once without to see what batching gives; the raw path is always one call per
    /// decision. With batching, `rt/decision` below 1 is the mean batch's inverse.
    #[arg(long)]
    pub no_batching: bool,
    /// JSON output on stdout.
    #[arg(long)]
    pub json: bool,
    /// Instead of the entries: the HTTP face (`serve`, in-process, keep-alive connections)
    /// against the library path, rate-limit decisions, alternating rounds.
    #[arg(long, conflicts_with = "only")]
    pub http: bool,
    /// Instead of the entries: Envoy's gRPC rate-limit face (`rls`, in-process, one gRPC channel
    /// per task) against the library path, requests of 1 and 4 descriptors, alternating rounds.
    #[arg(long, conflicts_with_all = ["only", "http"])]
    pub rls: bool,
}

/// Runs `bench` on a fresh runtime; returns the exit code (0 ok, 2 error).
pub fn run_blocking(args: BenchArgs, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    if args.http {
        let report = block_on(http::connect_and_run(&args));
        return print(report, args.json, http::HttpReport::write_table, out, err);
    }
    if args.rls {
        let report = block_on(rls::connect_and_run(&args));
        return print(report, args.json, rls::RlsReport::write_table, out, err);
    }
    print(
        block_on(run(&args)),
        args.json,
        Report::write_table,
        out,
        err,
    )
}

/// `run` on a fresh runtime.
fn block_on<R>(run: impl std::future::Future<Output = anyhow::Result<R>>) -> anyhow::Result<R> {
    crate::output::runtime().and_then(|rt| rt.block_on(run))
}

/// Prints a run's report — JSON with `--json`, else `table` — and returns the exit code: 0
/// printed, 2 the run or the printing failed (said on `err`, one line).
fn print<R: serde::Serialize>(
    report: anyhow::Result<R>,
    json: bool,
    table: fn(&R, &mut dyn Write) -> std::io::Result<()>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let printed = report.and_then(|report| {
        if json {
            serde_json::to_writer_pretty(&mut *out, &report)?;
            writeln!(out)?;
            Ok(())
        } else {
            table(&report, out).map_err(Into::into)
        }
    });
    match printed {
        Ok(()) => 0,
        Err(e) => {
            let _ = writeln!(err, "error: {}", crate::output::one_line(&e));
            2
        }
    }
}

/// Runs every selected benchmark.
pub async fn run(args: &BenchArgs) -> anyhow::Result<Report> {
    let (url, _server, client) = connect(args).await?;
    let mut admin = raw_connection(args, &url).await?;
    for script in classic::ALL {
        script.load(&mut admin).await?;
    }
    let server = ServerInfo::fetch(&client).await?;
    let caps = client.capabilities().await;
    let native = caps.summary();
    let module = caps.module.filter(|_| !caps.forced_lua).map(|m| m.version);
    let run_id = format!("{:08x}", rand::random::<u32>());
    let mut benches = Vec::new();
    for bench in BENCHES
        .iter()
        .filter(|b| args.only.is_empty() || args.only.iter().any(|o| o == b.name))
    {
        let namespace = format!("bench-{run_id}-{}", bench.name);
        let tasks = bench.tasks.unwrap_or(args.concurrency);
        let ctx = BenchCtx {
            client: client.clone(),
            keyspace: Keyspace::new(&namespace)?,
            tasks,
            identities: args.identities,
            token: OwnerToken::random(),
        };
        let mut driver = phase::Driver {
            bench,
            ctx: ctx.clone(),
            url: &url,
            admin: &mut admin,
            args,
        };
        let phases = phase::rounds(&mut driver).await?;
        let workload = (bench.setup)(ctx)?;
        let memory = record_size(workload.as_ref(), &client).await;
        unlink_namespace(&mut admin, &namespace).await?;
        let reference = workload.reference_script();
        let size = *memory.as_ref().unwrap_or(&0);
        let mut row = BenchReport::new(bench, tasks, &phases, reference, size);
        if let Err(e) = memory {
            row.library.count_error(&e);
        }
        benches.push(row);
    }
    Ok(Report::new(server, native, module, args, benches))
}

/// Checks the arguments, starts the embedded server when no `--url` is given (the one bootstrap,
/// [`url_or_embed`]: the raw paths need the URL), and connects the library client (scripts
/// loaded): the server's URL, its guard, the client.
pub(crate) async fn connect(args: &BenchArgs) -> anyhow::Result<(String, Embedded, Client)> {
    check_args(args)?;
    args.conn.require_url(args.url.as_deref())?;
    let (url, server) = url_or_embed(args.url.as_deref(), false)?;
    let client = library_client(args, &url).await?;
    client.load(registry::ALL).await?;
    Ok((url, server, client))
}

/// The library path's client: `--connections` pooled, a generous timeout, no resend (see
/// [`errors`]), batching unless `--no-batching`.
pub(crate) async fn library_client(args: &BenchArgs, url: &str) -> anyhow::Result<Client> {
    let config = ClientConfig::default()
        .pool_size(args.connections)
        .timeout(errors::TIMEOUT)
        .retry(RetryPolicy::none());
    let config = match args.no_batching {
        true => config.batching(redis_atomic::Batching::off()),
        false => config,
    };
    Ok(Client::connect(url, args.conn.client_config(config)).await?)
}

/// A raw path's (or the bench's own) multiplexed connection, with the same generous timeout.
pub(crate) async fn raw_connection(
    args: &BenchArgs,
    url: &str,
) -> anyhow::Result<MultiplexedConnection> {
    let config = redis::AsyncConnectionConfig::new().set_response_timeout(Some(errors::TIMEOUT));
    let client = args.conn.redis_client(url)?;
    Ok(client
        .get_multiplexed_async_connection_with_config(&config)
        .await?)
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
    anyhow::ensure!(
        args.identities
            .is_none_or(|n| (1..=1_000_000_000).contains(&n)),
        "--identities must be 1..=1000000000"
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

/// `MEMORY USAGE` of one record, made through the library. When making or measuring it fails,
/// that is one more error of the library path (the caller counts it), and the row has no size.
async fn record_size(workload: &dyn Workload, client: &Client) -> anyhow::Result<u64> {
    memory_usage(client, &workload.record().await?).await
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

/// Deletes every key of one entry: all live under its own namespace (`<namespace>:...`, the
/// library's key layout), whatever their primitive, so no workload lists what it wrote.
async fn unlink_namespace(conn: &mut MultiplexedConnection, namespace: &str) -> anyhow::Result<()> {
    let pattern = format!("{namespace}:*");
    let mut cursor = 0u64;
    loop {
        let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(&pattern)
            .arg("COUNT")
            .arg(1000)
            .query_async(conn)
            .await?;
        if !keys.is_empty() {
            let () = redis::cmd("UNLINK").arg(&keys).query_async(conn).await?;
        }
        if next == 0 {
            return Ok(());
        }
        cursor = next;
    }
}
