//! The bench report: a table for people, JSON for machines.

use super::{phase::Phase, stats::quantile, Bench, BenchArgs};
use crate::verify::ServerInfo;
use serde::Serialize;
use std::io::Write;

/// One path (library or raw) of one primitive.
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
    /// Client-sent commands per decision (from commandstats).
    pub round_trips_per_decision: f64,
    /// Server time per decision, µs (commandstats usec of client-sent commands).
    pub server_us_per_decision: f64,
}

impl PathStats {
    /// Summed over the phases of every round: decisions over their total time, percentiles of
    /// all latencies, commandstats totals per decision.
    pub fn new(phases: &[Phase]) -> PathStats {
        let mut sorted: Vec<u32> = phases
            .iter()
            .flat_map(|p| p.latencies.iter())
            .copied()
            .collect();
        sorted.sort_unstable();
        let secs: f64 = phases.iter().map(|p| p.secs).sum();
        let calls: u64 = phases.iter().map(|p| p.calls).sum();
        let usec: u64 = phases.iter().map(|p| p.usec).sum();
        let n = sorted.len() as u64;
        let per = |x: u64| x as f64 / n.max(1) as f64;
        PathStats {
            decisions: n,
            decisions_per_sec: n as f64 / secs.max(f64::EPSILON),
            p50_us: quantile(&sorted, 0.50),
            p99_us: quantile(&sorted, 0.99),
            round_trips_per_decision: per(calls),
            server_us_per_decision: per(usec),
        }
    }
}

/// One primitive.
#[derive(Clone, Debug, Serialize)]
pub struct BenchReport {
    /// Primitive.
    pub primitive: &'static str,
    /// What one decision is.
    pub decision: &'static str,
    /// Through the library.
    pub library: PathStats,
    /// Raw `EVALSHA` of the same scripts.
    pub raw: PathStats,
    /// library / raw decisions per second, each summed over all rounds.
    pub ratio: f64,
    /// Smallest ratio of one round (library / raw phase of that round).
    pub ratio_min: f64,
    /// Largest ratio of one round.
    pub ratio_max: f64,
    /// Each round's ratio, in round order.
    pub round_ratios: Vec<f64>,
    /// `MEMORY USAGE` of one record (all its keys), bytes.
    pub memory_bytes_per_record: u64,
}

impl BenchReport {
    /// Assembles one row from each path's phases, one per round.
    pub fn new(bench: &Bench, library: &[Phase], raw: &[Phase], memory: u64) -> BenchReport {
        let round_ratios: Vec<f64> = library
            .iter()
            .zip(raw)
            .map(|(l, r)| l.rate() / r.rate().max(f64::EPSILON))
            .collect();
        let (library, raw) = (PathStats::new(library), PathStats::new(raw));
        BenchReport {
            primitive: bench.name,
            decision: bench.decision,
            ratio: library.decisions_per_sec / raw.decisions_per_sec.max(f64::EPSILON),
            ratio_min: round_ratios.iter().copied().fold(f64::INFINITY, f64::min),
            ratio_max: round_ratios.iter().copied().fold(0.0, f64::max),
            round_ratios,
            library,
            raw,
            memory_bytes_per_record: memory,
        }
    }
}

/// The whole run.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Server measured.
    pub server: ServerInfo,
    /// CPU cores of this machine (client and embedded server share them).
    pub cores: usize,
    /// Concurrent tasks.
    pub concurrency: usize,
    /// Connections.
    pub connections: usize,
    /// Seconds per path (summed over the rounds).
    pub seconds: f64,
    /// Rounds per primitive (paths in ABBA order).
    pub rounds: usize,
    /// One row per primitive.
    pub benches: Vec<BenchReport>,
}

impl Report {
    /// A report.
    pub fn new(server: ServerInfo, args: &BenchArgs, benches: Vec<BenchReport>) -> Report {
        Report {
            server,
            cores: std::thread::available_parallelism().map_or(0, |n| n.get()),
            concurrency: args.concurrency,
            connections: args.connections,
            seconds: args.seconds,
            rounds: args.rounds,
            benches,
        }
    }

    /// JSON.
    pub fn write_json(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(out, "{}", serde_json::to_string_pretty(self)?)
    }

    /// A table: one row per primitive, library and raw side by side.
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
            "{:<12} {:>10} {:>10} {:>6} {:>11} {:>13} {:>13} {:>10} {:>7} {:>9}",
            "primitive",
            "lib dec/s",
            "raw dec/s",
            "ratio",
            "round range",
            "p50 lib/raw",
            "p99 lib/raw",
            "srv µs/dec",
            "rt/dec",
            "B/record"
        )?;
        for b in &self.benches {
            let (l, r) = (&b.library, &b.raw);
            writeln!(
                out,
                "{:<12} {:>10.0} {:>10.0} {:>6.3} {:>11} {:>13} {:>13} {:>10.1} {:>7.2} {:>9}",
                b.primitive,
                l.decisions_per_sec,
                r.decisions_per_sec,
                b.ratio,
                format!("{:.2}–{:.2}", b.ratio_min, b.ratio_max),
                format!("{}/{} µs", l.p50_us, r.p50_us),
                format!("{}/{} µs", l.p99_us, r.p99_us),
                l.server_us_per_decision,
                l.round_trips_per_decision,
                b.memory_bytes_per_record
            )?;
        }
        for b in &self.benches {
            writeln!(out, "  {}: one decision = {}", b.primitive, b.decision)?;
        }
        Ok(())
    }
}
