//! The bench report: a table for people, JSON for machines.

use super::{stats::quantile, Bench, BenchArgs};
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
    /// From sorted latencies, the elapsed seconds and (top-level calls, their µs).
    pub fn new(sorted: &[u32], secs: f64, (calls, usec): (u64, u64)) -> PathStats {
        let n = sorted.len() as u64;
        let per = |x: u64| x as f64 / n.max(1) as f64;
        PathStats {
            decisions: n,
            decisions_per_sec: n as f64 / secs.max(f64::EPSILON),
            p50_us: quantile(sorted, 0.50),
            p99_us: quantile(sorted, 0.99),
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
    /// library / raw decisions per second.
    pub ratio: f64,
    /// `MEMORY USAGE` of one record (all its keys), bytes.
    pub memory_bytes_per_record: u64,
}

impl BenchReport {
    /// Assembles one row.
    pub fn new(bench: &Bench, library: PathStats, raw: PathStats, memory: u64) -> BenchReport {
        BenchReport {
            primitive: bench.name,
            decision: bench.decision,
            ratio: library.decisions_per_sec / raw.decisions_per_sec.max(f64::EPSILON),
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
    /// Seconds per path.
    pub seconds: f64,
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
            "redis-atomic bench: Redis {} ({}), {} cores, {} tasks, {} connection(s), {} s per path",
            self.server.version,
            self.server.mode,
            self.cores,
            self.concurrency,
            self.connections,
            self.seconds
        )?;
        writeln!(
            out,
            "{:<12} {:>10} {:>10} {:>6} {:>13} {:>13} {:>10} {:>7} {:>9}",
            "primitive",
            "lib dec/s",
            "raw dec/s",
            "ratio",
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
                "{:<12} {:>10.0} {:>10.0} {:>6.3} {:>13} {:>13} {:>10.1} {:>7.2} {:>9}",
                b.primitive,
                l.decisions_per_sec,
                r.decisions_per_sec,
                b.ratio,
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
