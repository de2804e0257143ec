//! One phase of a benchmark: every task drives one path (raw or library) for a fixed time.
//!
//! Why rounds: on a small shared machine throughput drifts over seconds (other processes, CPU
//! frequency, the server's allocator), so "all raw, then all library" puts that drift into the
//! ratio. [`rounds`] alternates the paths in ABBA order (raw, library, library, raw, ...) with
//! short phases, so drift hits both paths alike, and keeps each round's ratio to show the spread.
//! A short unmeasured warm-up of each path comes first: the first phase of a run is otherwise
//! slower (fresh connections, a cold server allocator) and would count against whichever path
//! runs first.

use super::{stats::CommandStats, Bench, BenchArgs, BenchCtx, Workload};
use indicatif::{ProgressBar, ProgressStyle};
use redis::aio::MultiplexedConnection;
use redis_atomic::{Client, ClientConfig};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Longest warm-up per path, seconds (at most one round's phase).
const WARM_UP: f64 = 0.25;

/// Which way a decision is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// Raw `EVALSHA` of the same scripts.
    Raw,
    /// Through the library.
    Library,
}

/// What one phase measured.
#[derive(Clone, Debug, Default)]
pub struct Phase {
    /// One latency per decision, µs (unsorted).
    pub latencies: Vec<u32>,
    /// Wall time of the phase.
    pub secs: f64,
    /// Client-sent commands and their server µs (commandstats).
    pub calls: u64,
    /// Server µs of those commands.
    pub usec: u64,
}

impl Phase {
    /// Decisions per second.
    pub fn rate(&self) -> f64 {
        self.latencies.len() as f64 / self.secs.max(f64::EPSILON)
    }
}

/// Everything the phases of one primitive need.
pub struct Driver<'a> {
    /// The primitive.
    pub bench: &'a Bench,
    /// The context its workloads are built from (its client is replaced per round).
    pub ctx: BenchCtx,
    /// Server URL.
    pub url: &'a str,
    /// Connection for `INFO`.
    pub admin: &'a mut MultiplexedConnection,
    /// Command-line arguments.
    pub args: &'a BenchArgs,
}

/// One round's connections: a library client and its workload, and the raw connections.
struct Fresh {
    workload: Arc<dyn Workload>,
    raws: Vec<MultiplexedConnection>,
}

impl Driver<'_> {
    /// New connections for both paths and a workload on them (each task's cycles are complete
    /// between phases, so a new workload continues where the last one stopped).
    async fn fresh(&self) -> anyhow::Result<Fresh> {
        let config = ClientConfig::default().pool_size(self.args.connections);
        let client = Client::connect(self.url, config).await?;
        let ctx = BenchCtx {
            client,
            ..self.ctx.clone()
        };
        let workload = Arc::from((self.bench.setup)(ctx).await?);
        let raw_client = redis::Client::open(self.url)?;
        let mut raws = Vec::new();
        for _ in 0..self.args.connections {
            raws.push(raw_client.get_multiplexed_async_connection().await?);
        }
        Ok(Fresh { workload, raws })
    }
}

/// Runs `args.rounds` rounds in ABBA order, each path `seconds / rounds` per round; returns the
/// raw and library phases, one per round, in round order.
pub async fn rounds(d: &mut Driver<'_>) -> anyhow::Result<(Vec<Phase>, Vec<Phase>)> {
    let (mut raw, mut lib) = (Vec::new(), Vec::new());
    // Each task's next call index per path: cycles continue across rounds (fresh keys stay fresh).
    let mut next = [
        vec![0u64; d.args.concurrency],
        vec![0u64; d.args.concurrency],
    ];
    let each = d.args.seconds / d.args.rounds as f64;
    let fresh = d.fresh().await?;
    for (slot, path) in [Path::Raw, Path::Library].into_iter().enumerate() {
        let secs = WARM_UP.min(each);
        run_phase(d, &fresh, path, "warm-up", secs, &mut next[slot]).await?;
    }
    for round in 0..d.args.rounds {
        let fresh = d.fresh().await?;
        let order = if round % 2 == 0 {
            [Path::Raw, Path::Library]
        } else {
            [Path::Library, Path::Raw]
        };
        for path in order {
            let slot = usize::from(path == Path::Library);
            let label = format!("{}/{}", round + 1, d.args.rounds);
            let phase = run_phase(d, &fresh, path, &label, each, &mut next[slot]).await?;
            match path {
                Path::Raw => raw.push(phase),
                Path::Library => lib.push(phase),
            }
        }
    }
    Ok((raw, lib))
}

/// Drives the workload from every task along `path` for `secs` (then to the end of each task's
/// cycle). `next` holds each task's next call index and is advanced.
async fn run_phase(
    d: &mut Driver<'_>,
    fresh: &Fresh,
    path: Path,
    round: &str,
    secs: f64,
    next: &mut [u64],
) -> anyhow::Result<Phase> {
    let way = if path == Path::Raw { "raw" } else { "library" };
    let progress = progress_bar(&format!("{} {way} {round}", d.bench.name), d.args.json);
    let before = CommandStats::fetch(d.admin).await?;
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(secs);
    let cycle = fresh.workload.cycle().max(1);
    let mut tasks = Vec::new();
    for (t, &first) in next.iter().enumerate() {
        let (workload, progress) = (fresh.workload.clone(), progress.clone());
        let mut conn = (path == Path::Raw).then(|| fresh.raws[t % fresh.raws.len()].clone());
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut i = first;
            // Finish the last cycle so the next phase starts from a clean state.
            while Instant::now() < deadline || i % cycle != 0 {
                let sent = Instant::now();
                match conn.as_mut() {
                    Some(conn) => workload.raw(conn, t, i).await?,
                    None => workload.library(t, i).await?,
                }
                latencies.push(u32::try_from(sent.elapsed().as_micros()).unwrap_or(u32::MAX));
                progress.inc(1);
                i += 1;
            }
            anyhow::Ok((latencies, i))
        }));
    }
    let mut latencies = Vec::new();
    for (task, slot) in tasks.into_iter().zip(next.iter_mut()) {
        let (l, i) = task.await??;
        latencies.extend(l);
        *slot = i;
    }
    let secs = started.elapsed().as_secs_f64();
    let after = CommandStats::fetch(d.admin).await?;
    progress.finish_and_clear();
    let (calls, usec) = before.top_level_since(&after);
    Ok(Phase {
        latencies,
        secs,
        calls,
        usec,
    })
}

fn progress_bar(label: &str, hidden: bool) -> ProgressBar {
    if hidden {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new_spinner();
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{spinner} {prefix:>24} {pos} decisions {elapsed}")
    {
        bar.set_style(style);
    }
    bar.set_prefix(label.to_string());
    bar.enable_steady_tick(Duration::from_millis(100));
    bar
}
