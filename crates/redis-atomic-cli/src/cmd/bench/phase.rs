//! One phase of a benchmark: every task drives one path (raw, library or reference) for a fixed
//! time.
//!
//! Why rounds: on a small shared machine throughput drifts over seconds (other processes, CPU
//! frequency, the server's allocator), so "all raw, then all library" puts that drift into the
//! ratio. [`rounds`] alternates the paths in ABBA order (raw, library, library, raw, ...; with a
//! reference, raw, library, reference, reference, library, raw, ...) with short phases and fresh
//! connections every round, so drift hits every path alike, and keeps each round's ratio to show
//! the spread. A short unmeasured warm-up of each path comes first: the first phase of a run is
//! otherwise slower (fresh connections, a cold server allocator) and would count against
//! whichever path runs first.
//!
//! Before each phase, unmeasured, the workload may prepare (fill a backlog for about 1.5× the
//! decisions the path made per second in its last phase): see [`super::Workload::prepare`].
//!
//! A decision (or a preparation) that fails is counted as an error of its path and the phase
//! goes on ([`errors`]); only a failure to connect or to read the server's counters ends a run.

use super::errors::{self, Errors};
use super::stats::ServerStats;
use super::workload::{BenchCtx, Conflicts, Conn, Decided, Path, Stop, Workload};
use super::{Bench, BenchArgs};
use indicatif::{ProgressBar, ProgressStyle};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Longest warm-up per path, seconds (at most one round's phase).
const WARM_UP: f64 = 0.25;
/// Decisions per second assumed before a path has run (sizes the warm-up's preparation).
const FIRST_GUESS_RATE: f64 = 10_000.0;
/// Preparation headroom over the last phase's rate.
const HEADROOM: f64 = 1.5;

/// What one phase measured.
#[derive(Clone, Debug, Default)]
pub struct Phase {
    /// One latency per decision, µs (unsorted).
    pub latencies: Vec<u32>,
    /// Wall time of the phase.
    pub secs: f64,
    /// Client-sent commands (commandstats).
    pub calls: u64,
    /// Server µs of those commands.
    pub usec: u64,
    /// CPU seconds the server process used.
    pub cpu_secs: f64,
    /// Conflicts of the phase's decisions.
    pub conflicts: Conflicts,
    /// Decisions (and preparations) that failed.
    pub errors: Errors,
}

impl Phase {
    /// Decisions per second.
    pub fn rate(&self) -> f64 {
        self.latencies.len() as f64 / self.secs.max(f64::EPSILON)
    }
}

/// Each path's phases, one per round, in round order (`reference` empty without one).
#[derive(Debug, Default)]
pub struct Phases {
    /// Raw `EVALSHA`.
    pub raw: Vec<Phase>,
    /// The library.
    pub library: Vec<Phase>,
    /// The reference script.
    pub reference: Vec<Phase>,
}

/// Everything the phases of one entry need.
pub struct Driver<'a> {
    /// The entry.
    pub bench: &'a Bench,
    /// The context its workloads are built from (its client is replaced per round).
    pub ctx: BenchCtx,
    /// Server URL.
    pub url: &'a str,
    /// Connection for `INFO`.
    pub admin: &'a mut Conn,
    /// Command-line arguments.
    pub args: &'a BenchArgs,
}

/// One round's connections: a library client and its workload, and the raw connections.
struct Fresh {
    workload: Arc<dyn Workload>,
    raws: Vec<Conn>,
}

impl Driver<'_> {
    /// New connections for every path and a workload on them (each task's cycles are complete
    /// between phases, so a new workload continues where the last one stopped).
    async fn fresh(&self) -> anyhow::Result<Fresh> {
        let ctx = BenchCtx {
            client: super::library_client(self.args, self.url).await?,
            ..self.ctx.clone()
        };
        let workload = Arc::from((self.bench.setup)(ctx)?);
        let mut raws = Vec::new();
        for _ in 0..self.args.connections {
            raws.push(super::raw_connection(self.args, self.url).await?);
        }
        Ok(Fresh { workload, raws })
    }
}

impl Fresh {
    fn paths(&self) -> Vec<Path> {
        let mut paths = vec![Path::Raw, Path::Library];
        paths.extend(self.workload.reference_script().map(|_| Path::Reference));
        paths
    }
}

/// Each path's next call index per task, and its last phase's rate.
struct Progress {
    next: [Vec<u64>; 3],
    rate: [Option<f64>; 3],
}

/// Runs `args.rounds` rounds in ABBA order, each path `seconds / rounds` per round.
pub async fn rounds(d: &mut Driver<'_>) -> anyhow::Result<Phases> {
    let mut phases = Phases::default();
    let tasks = d.ctx.tasks;
    // Each task's next call index per path: cycles continue across rounds (fresh keys stay fresh).
    let mut progress = Progress {
        next: [vec![0; tasks], vec![0; tasks], vec![0; tasks]],
        rate: [None; 3],
    };
    let each = d.args.seconds / d.args.rounds as f64;
    let fresh = d.fresh().await?;
    let paths = fresh.paths();
    for &path in &paths {
        let secs = WARM_UP.min(each);
        run_phase(d, &fresh, path, "warm-up", secs, &mut progress).await?;
    }
    for round in 0..d.args.rounds {
        let fresh = d.fresh().await?;
        let mut order = paths.clone();
        if round % 2 == 1 {
            order.reverse();
        }
        for path in order {
            let label = format!("{}/{}", round + 1, d.args.rounds);
            let phase = run_phase(d, &fresh, path, &label, each, &mut progress).await?;
            match path {
                Path::Raw => phases.raw.push(phase),
                Path::Library => phases.library.push(phase),
                Path::Reference => phases.reference.push(phase),
            }
        }
    }
    Ok(phases)
}

/// Prepares, then drives the workload from every task along `path` for `secs` (then to where
/// each task may stop); advances each task's call index and the path's rate.
async fn run_phase(
    d: &mut Driver<'_>,
    fresh: &Fresh,
    path: Path,
    round: &str,
    secs: f64,
    progress: &mut Progress,
) -> anyhow::Result<Phase> {
    let expected = progress.rate[path.index()].unwrap_or(FIRST_GUESS_RATE) * secs * HEADROOM;
    let mut errors = Errors::default();
    if let Err(e) = fresh.workload.prepare(path, expected.ceil() as u64).await {
        errors.record(&e);
    }
    let bar = progress_bar(
        &format!("{} {} {round}", d.bench.name, path.name()),
        d.args.json,
    );
    let before = ServerStats::fetch(d.admin).await?;
    let conflicts = fresh.workload.conflicts();
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(secs);
    let mut tasks = Vec::new();
    for (t, &first) in progress.next[path.index()].iter().enumerate() {
        let (workload, bar) = (fresh.workload.clone(), bar.clone());
        let mut conn = fresh.raws[t % fresh.raws.len()].clone();
        tasks.push(tokio::spawn(async move {
            let (mut latencies, mut errors) = (Vec::new(), Errors::default());
            let mut i = first;
            loop {
                match workload.stop(t, i) {
                    Stop::Now => break,
                    // A task mid-cycle whose calls keep failing still stops, a while later.
                    Stop::No if Instant::now() >= deadline + errors::TIMEOUT => break,
                    // Every task decides at least once, however late a loaded machine starts it.
                    Stop::AtDeadline if i > first && Instant::now() >= deadline => break,
                    Stop::AtDeadline | Stop::No => {}
                }
                let sent = Instant::now();
                match decide(workload.as_ref(), path, &mut conn, t, i).await {
                    Ok(()) => latencies
                        .push(u32::try_from(sent.elapsed().as_micros()).unwrap_or(u32::MAX)),
                    Err(e) => {
                        errors.record(&e);
                        tokio::time::sleep(errors::PAUSE).await;
                    }
                }
                bar.inc(1);
                i += 1;
            }
            (latencies, errors, i)
        }));
    }
    let mut latencies = Vec::new();
    for (task, slot) in tasks
        .into_iter()
        .zip(progress.next[path.index()].iter_mut())
    {
        let (l, e, i) = task.await?;
        latencies.extend(l);
        errors.merge(&e);
        *slot = i;
    }
    let secs = started.elapsed().as_secs_f64();
    let after = ServerStats::fetch(d.admin).await?;
    bar.finish_and_clear();
    let direct = match path {
        Path::Library => fresh.workload.sent_directly(),
        Path::Raw | Path::Reference => &[],
    };
    let server = before.since(&after, direct);
    let phase = Phase {
        latencies,
        secs,
        calls: server.calls,
        usec: server.usec,
        cpu_secs: server.cpu_secs,
        conflicts: fresh.workload.conflicts().since(conflicts),
        errors,
    };
    progress.rate[path.index()] = Some(phase.rate());
    Ok(phase)
}

/// One decision along `path`.
fn decide<'a>(
    workload: &'a dyn Workload,
    path: Path,
    conn: &'a mut Conn,
    task: usize,
    i: u64,
) -> Decided<'a> {
    match path {
        Path::Raw => workload.raw(conn, task, i),
        Path::Library => workload.library(task, i),
        Path::Reference => workload.reference(conn, task, i),
    }
}

fn progress_bar(label: &str, hidden: bool) -> ProgressBar {
    if hidden {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new_spinner();
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{spinner} {prefix:>30} {pos} decisions {elapsed}")
    {
        bar.set_style(style);
    }
    bar.set_prefix(label.to_string());
    bar.enable_steady_tick(Duration::from_millis(100));
    bar
}
