//! The bench report: a table for people, JSON for machines.

use super::classic::Classic;
use super::errors::Errors;
use super::phase::{Phase, Phases};
use super::{stats::quantile, Bench, BenchArgs};
use redis_atomic_verify::ServerInfo;
use serde::Serialize;
use std::io::Write;

/// One path (library, raw or reference) of one entry.
#[derive(Clone, Debug, Serialize)]
pub struct PathStats {
    /// Decisions made.
    pub decisions: u64,
    /// Decisions per second.
    pub decisions_per_sec: f64,
    /// Median latency of one decision, µs (client side).
    pub p50_us: u32,
    /// 99th percentile latency, µs.
    pub p99_us: u32,
    /// Client-sent commands per decision (from commandstats): one round trip each for scripts.
    pub round_trips_per_decision: f64,
    /// Server time per decision, µs (commandstats usec of client-sent commands).
    pub server_us_per_decision: f64,
    /// Share of one core the server process used (`INFO cpu`, user + system) while this path
    /// ran: near 1, the server is the limit; well below, the clients are.
    pub server_cpu: f64,
    /// Decisions per second of the server's CPU time (user + system): what one server core
    /// would decide flat out, on a quiet server (0 when no CPU time was measured).
    pub decisions_per_server_cpu_sec: f64,
    /// Attempts that aborted (CAS: `EXEC` found a watched key changed) over all attempts.
    pub abort_rate: f64,
    /// Decisions that ran out of attempts (CAS `Conflict`).
    pub gave_up: u64,
    /// Decisions (and preparations) that failed: not in the figures above, which are of the
    /// decisions made.
    pub errors: u64,
    /// The first error, on one line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl PathStats {
    /// Summed over the phases of every round: decisions over their total time, percentiles of
    /// all latencies, server totals per decision.
    pub fn new(phases: &[Phase]) -> PathStats {
        let mut sorted: Vec<u32> = phases
            .iter()
            .flat_map(|p| p.latencies.iter())
            .copied()
            .collect();
        sorted.sort_unstable();
        let sum = |f: fn(&Phase) -> f64| phases.iter().map(f).sum::<f64>();
        let secs = sum(|p| p.secs).max(f64::EPSILON);
        let n = sorted.len() as u64;
        let per = |x: f64| x / n.max(1) as f64;
        let aborted: u64 = phases.iter().map(|p| p.conflicts.aborted).sum();
        let gave_up = phases.iter().map(|p| p.conflicts.gave_up).sum();
        // Every decision is one attempt that did not abort, unless it gave up.
        let attempts = (n + aborted).saturating_sub(gave_up).max(1);
        let mut errors = Errors::default();
        for p in phases {
            errors.merge(&p.errors);
        }
        PathStats {
            decisions: n,
            decisions_per_sec: n as f64 / secs,
            p50_us: quantile(&sorted, 0.50),
            p99_us: quantile(&sorted, 0.99),
            round_trips_per_decision: per(sum(|p| p.calls as f64)),
            server_us_per_decision: per(sum(|p| p.usec as f64)),
            server_cpu: sum(|p| p.cpu_secs) / secs,
            decisions_per_server_cpu_sec: match sum(|p| p.cpu_secs) {
                cpu if cpu > 0.0 => n as f64 / cpu,
                _ => 0.0,
            },
            abort_rate: aborted as f64 / attempts as f64,
            gave_up,
            errors: errors.count,
            error: errors.first,
        }
    }

    /// One more failed decision (or the record of a row, made through the library).
    pub fn count_error(&mut self, error: &anyhow::Error) {
        let mut errors = Errors {
            count: self.errors,
            first: self.error.take(),
        };
        errors.record(error);
        (self.errors, self.error) = (errors.count, errors.first);
    }

    /// A line about this path's errors, if it had any: how many, the first, and whether every
    /// decision failed.
    fn errors_note(&self, path: &str) -> Option<String> {
        let first = self.error.as_deref().unwrap_or("?");
        match (self.errors, self.decisions) {
            (0, _) => None,
            (e, 0) => Some(format!(
                "    {path}: every decision failed ({e} errors), first: {first}"
            )),
            (e, _) => Some(format!(
                "    {path}: {e} decision(s) failed, first: {first}"
            )),
        }
    }
}

/// The reference script's path of one entry.
#[derive(Clone, Debug, Serialize)]
pub struct ReferenceReport {
    /// Which script.
    pub script: &'static str,
    /// Its path, measured like the others.
    pub stats: PathStats,
    /// Server µs per decision of the raw path (ours) over the reference's: below 1, ours costs
    /// the server less.
    pub server_us_ratio: f64,
}

/// One entry.
#[derive(Clone, Debug, Serialize)]
pub struct BenchReport {
    /// Entry name (`--only`).
    pub primitive: &'static str,
    /// What one decision is.
    pub decision: &'static str,
    /// Concurrent tasks.
    pub tasks: usize,
    /// Through the library.
    pub library: PathStats,
    /// Raw `EVALSHA` of the same scripts.
    pub raw: PathStats,
    /// The reference script, for entries that have one.
    pub reference: Option<ReferenceReport>,
    /// library / raw decisions per second, each summed over all rounds.
    pub ratio: f64,
    /// Smallest ratio of one round (library / raw phase of that round).
    pub ratio_min: f64,
    /// Largest ratio of one round.
    pub ratio_max: f64,
    /// Each round's ratio, in round order.
    pub round_ratios: Vec<f64>,
    /// `MEMORY USAGE` of one record (all its keys), bytes; 0 when no record could be made (an
    /// error of the library path).
    pub memory_bytes_per_record: u64,
}

impl BenchReport {
    /// Assembles one row from each path's phases, one per round.
    pub fn new(
        bench: &Bench,
        tasks: usize,
        phases: &Phases,
        reference: Option<&'static Classic>,
        memory: u64,
    ) -> BenchReport {
        let round_ratios: Vec<f64> = phases
            .library
            .iter()
            .zip(&phases.raw)
            .map(|(l, r)| l.rate() / r.rate().max(f64::EPSILON))
            .collect();
        let (library, raw) = (PathStats::new(&phases.library), PathStats::new(&phases.raw));
        let reference = reference.map(|classic| {
            let stats = PathStats::new(&phases.reference);
            ReferenceReport {
                script: classic.name,
                server_us_ratio: raw.server_us_per_decision
                    / stats.server_us_per_decision.max(f64::EPSILON),
                stats,
            }
        });
        BenchReport {
            primitive: bench.name,
            decision: bench.decision,
            tasks,
            ratio: library.decisions_per_sec / raw.decisions_per_sec.max(f64::EPSILON),
            ratio_min: round_ratios.iter().copied().fold(f64::INFINITY, f64::min),
            ratio_max: round_ratios.iter().copied().fold(0.0, f64::max),
            round_ratios,
            library,
            raw,
            reference,
            memory_bytes_per_record: memory,
        }
    }

    /// The lines under the table: what a decision is, the reference, conflicts.
    fn notes(&self, default_tasks: usize, out: &mut dyn Write) -> std::io::Result<()> {
        let tasks = match self.tasks {
            n if n == default_tasks => String::new(),
            1 => " (1 task)".to_string(),
            n => format!(" ({n} tasks)"),
        };
        writeln!(
            out,
            "  {}{tasks}: one decision = {}",
            self.primitive, self.decision
        )?;
        if let Some(r) = &self.reference {
            writeln!(
                out,
                "    reference, {}: {:.0} dec/s, {:.1} srv µs/dec, {:.2} rt/dec; raw ÷ reference srv µs {:.2}",
                r.script,
                r.stats.decisions_per_sec,
                r.stats.server_us_per_decision,
                r.stats.round_trips_per_decision,
                r.server_us_ratio
            )?;
        }
        let mut paths = vec![("library", &self.library), ("raw", &self.raw)];
        paths.extend(self.reference.as_ref().map(|r| ("reference", &r.stats)));
        for (name, stats) in paths {
            if let Some(note) = stats.errors_note(name) {
                writeln!(out, "{note}")?;
            }
        }
        let l = &self.library;
        if l.abort_rate > 0.0 || l.gave_up > 0 {
            writeln!(
                out,
                "    library: {:.1} % of attempts aborted, {} decision(s) gave up",
                l.abort_rate * 100.0,
                l.gave_up
            )?;
        }
        Ok(())
    }
}

/// The whole run.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Server measured.
    pub server: ServerInfo,
    /// The native commands the library uses on it (`Client::capabilities`), or Lua.
    pub native: String,
    /// The server module's version when the library uses it: then the library path of every
    /// entry it covers runs its natives and the raw path the scripts (lib/raw: module vs script).
    pub module: Option<String>,
    /// CPU cores of this machine (client and embedded server share them).
    pub cores: usize,
    /// Concurrent tasks (entries with a fixed count say so in their `tasks`).
    pub concurrency: usize,
    /// Connections.
    pub connections: usize,
    /// Rate-limit entries: identities each decision draws from (`--identities`); `None`, one
    /// per task.
    pub identities: Option<u64>,
    /// Seconds per path (summed over the rounds).
    pub seconds: f64,
    /// Rounds per entry (paths in ABBA order).
    pub rounds: usize,
    /// Whether the library path batched decisions that queued up (`--no-batching`: not).
    pub batching: bool,
    /// One row per entry.
    pub benches: Vec<BenchReport>,
}

impl Report {
    /// A report.
    pub fn new(
        server: ServerInfo,
        native: String,
        module: Option<String>,
        args: &BenchArgs,
        benches: Vec<BenchReport>,
    ) -> Report {
        Report {
            server,
            native,
            module,
            cores: std::thread::available_parallelism().map_or(0, |n| n.get()),
            concurrency: args.concurrency,
            connections: args.connections,
            identities: args.identities,
            seconds: args.seconds,
            rounds: args.rounds,
            batching: !args.no_batching,
            benches,
        }
    }

    /// A table: one row per entry, library and raw side by side, then notes.
    pub fn write_table(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(
            out,
            "redis-atomic bench: Redis {} ({}), {} cores, {} tasks, {} connection(s), {} s per path in {} rounds (ABBA)",
            self.server.version,
            self.server.mode,
            self.cores,
            self.concurrency,
            self.connections,
            self.seconds,
            self.rounds
        )?;
        writeln!(
            out,
            "native: {}; library batching: {} (rt < 1: decisions per call = 1 / rt)",
            self.native,
            if self.batching { "on" } else { "off" }
        )?;
        writeln!(
            out,
            "{:<16} {:>9} {:>9} {:>6} {:>10} {:>13} {:>15} {:>11} {:>6} {:>11} {:>13} {:>8}",
            "entry",
            "lib dec/s",
            "raw dec/s",
            "ratio",
            "rounds",
            "p50 lib/raw",
            "p99 lib/raw",
            "srv µs",
            "rt",
            "srv cpu",
            "dec/cpu-s",
            "B/rec"
        )?;
        for b in &self.benches {
            let (l, r) = (&b.library, &b.raw);
            writeln!(
                out,
                "{:<16} {:>9.0} {:>9.0} {:>6.3} {:>10} {:>13} {:>15} {:>11} {:>6.2} {:>11} {:>13} {:>8}",
                b.primitive,
                l.decisions_per_sec,
                r.decisions_per_sec,
                b.ratio,
                format!("{:.2}–{:.2}", b.ratio_min, b.ratio_max),
                format!("{}/{} µs", l.p50_us, r.p50_us),
                format!("{}/{} µs", l.p99_us, r.p99_us),
                format!(
                    "{:.1}/{:.1}",
                    l.server_us_per_decision, r.server_us_per_decision
                ),
                l.round_trips_per_decision,
                format!("{:.0}/{:.0} %", l.server_cpu * 100.0, r.server_cpu * 100.0),
                format!(
                    "{:.0}k/{:.0}k",
                    l.decisions_per_server_cpu_sec / 1e3,
                    r.decisions_per_server_cpu_sec / 1e3
                ),
                b.memory_bytes_per_record
            )?;
        }
        writeln!(
            out,
            "(srv µs: server µs per decision, library/raw; rt: client-sent commands per library decision; srv cpu: share of one core the server used; dec/cpu-s: decisions per second of server CPU, library/raw)"
        )?;
        if let Some(version) = &self.module {
            writeln!(
                out,
                "(module {version} loaded: the library path runs the natives of the scripts it covers, the raw path their scripts (EVALSHA): library/raw is module/script there)"
            )?;
        }
        for b in &self.benches {
            b.notes(self.concurrency, out)?;
        }
        Ok(())
    }
}
