//! The verify report: a table for people, JSON for machines (the exact bytes `redis-atomic verify`
//! prints, and `--json`'s document).

use crate::faults::FaultKind;
use redis_atomic::Client;
use redis_atomic_testkit::Verdict;
use serde::Serialize;
use std::io::Write;

/// What a check found: the operations it drove and the testkit's verdicts on their history.
#[derive(Debug, Default)]
pub struct Findings {
    /// Operations performed.
    pub operations: u64,
    /// One verdict per model the history was checked against.
    pub verdicts: Vec<Verdict>,
}

impl Findings {
    /// Findings on `operations`, no verdict yet.
    pub fn new(operations: u64) -> Findings {
        Findings {
            operations,
            verdicts: Vec::new(),
        }
    }

    /// With one more verdict.
    pub fn with(mut self, verdict: Verdict) -> Findings {
        self.verdicts.push(verdict);
        self
    }

    /// Every violation, in verdict order.
    fn violations(&self) -> impl Iterator<Item = &String> {
        self.verdicts.iter().flat_map(|v| &v.violations)
    }
}

/// One primitive's result.
#[derive(Clone, Debug, Serialize)]
pub struct CheckReport {
    /// Primitive name.
    pub primitive: String,
    /// The invariant checked, in one sentence.
    pub invariant: String,
    /// Operations performed.
    pub operations: u64,
    /// Observed violations of the invariant.
    pub violations: u64,
    /// The fault injected meanwhile (`none` for a clean run).
    pub fault: String,
    /// Operations whose outcome was unknown (reply lost, timeout).
    pub unknown: u64,
    /// `violations == 0`.
    pub ok: bool,
    /// The first few violations, described (what was observed, per key): what to look at.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
}

/// Violations described per check (in `--json` and under the table).
const EXAMPLES: usize = 5;

impl CheckReport {
    /// A report; `ok` derived from the violations.
    pub fn new(primitive: &str, invariant: &str, operations: u64, violations: u64) -> Self {
        CheckReport {
            primitive: primitive.into(),
            invariant: invariant.into(),
            operations,
            violations,
            fault: "none".into(),
            unknown: 0,
            ok: violations == 0,
            examples: Vec::new(),
        }
    }

    /// The report of the check `primitive` on `findings`, with the first few violations.
    pub fn judged(primitive: &str, invariant: &str, findings: &Findings) -> Self {
        let violations = findings.violations().count() as u64;
        let mut report = CheckReport::new(primitive, invariant, findings.operations, violations);
        report.examples = findings.violations().take(EXAMPLES).cloned().collect();
        report
    }

    /// The same report, labelled with the fault it ran under and its unknown outcomes.
    pub fn under(mut self, fault: Option<FaultKind>, unknown: u64) -> Self {
        self.fault = fault.map_or("none", FaultKind::name).into();
        self.unknown = unknown;
        self
    }
}

/// The server verified against.
#[derive(Clone, Debug, Serialize)]
pub struct ServerInfo {
    /// `redis_version` (or `valkey_version`).
    pub version: String,
    /// `standalone` or `cluster`.
    pub mode: String,
}

impl ServerInfo {
    /// Reads INFO server.
    pub async fn fetch(client: &Client) -> Result<ServerInfo, redis_atomic::Error> {
        let info = client.command(redis::cmd("INFO").arg("server")).await?;
        let text = match info {
            redis::Value::BulkString(b) => String::from_utf8_lossy(&b).into_owned(),
            redis::Value::VerbatimString { text, .. } => text,
            // A cluster answers per node: any node's text will do.
            redis::Value::Map(nodes) => match nodes.into_iter().next() {
                Some((_, redis::Value::BulkString(b))) => String::from_utf8_lossy(&b).into_owned(),
                Some((_, redis::Value::VerbatimString { text, .. })) => text,
                _ => String::new(),
            },
            other => format!("{other:?}"),
        };
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name).map(|v| v.trim().to_string()))
        };
        Ok(ServerInfo {
            version: field("valkey_version:")
                .or_else(|| field("redis_version:"))
                .unwrap_or_else(|| "unknown".into()),
            mode: if client.is_cluster() {
                "cluster"
            } else {
                "standalone"
            }
            .into(),
        })
    }
}

/// The whole run.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// No check found a violation.
    pub ok: bool,
    /// The server.
    pub server: ServerInfo,
    /// One entry per primitive.
    pub checks: Vec<CheckReport>,
}

impl Report {
    /// A report; `ok` derived from the checks.
    pub fn new(server: ServerInfo, checks: Vec<CheckReport>) -> Self {
        Report {
            ok: checks.iter().all(|c| c.ok),
            server,
            checks,
        }
    }

    /// `{"ok":..,"server":{..},"checks":[..]}`.
    pub fn write_json(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(out, "{}", serde_json::to_string(self)?)
    }

    /// A table: primitive, invariant, operations, violations, ok (plus fault and unknown
    /// outcomes when any row ran under a fault).
    pub fn write_table(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(
            out,
            "redis-atomic verify: Redis {} ({})",
            self.server.version, self.server.mode
        )?;
        let faults = self.checks.iter().any(|c| c.fault != "none");
        if faults {
            writeln!(
                out,
                "{:<14} {:<13} {:<62} {:>10} {:>8} {:>10}  ok",
                "primitive", "fault", "invariant", "operations", "unknown", "violations"
            )?;
        } else {
            writeln!(
                out,
                "{:<14} {:<62} {:>10} {:>10}  ok",
                "primitive", "invariant", "operations", "violations"
            )?;
        }
        for c in &self.checks {
            let ok = if c.ok { "yes" } else { "NO" };
            if faults {
                writeln!(
                    out,
                    "{:<14} {:<13} {:<62} {:>10} {:>8} {:>10}  {ok}",
                    c.primitive, c.fault, c.invariant, c.operations, c.unknown, c.violations
                )?;
            } else {
                writeln!(
                    out,
                    "{:<14} {:<62} {:>10} {:>10}  {ok}",
                    c.primitive, c.invariant, c.operations, c.violations
                )?;
            }
        }
        for c in self.checks.iter().filter(|c| !c.examples.is_empty()) {
            for example in &c.examples {
                writeln!(out, "  {} ({}): {example}", c.primitive, c.fault)?;
            }
        }
        writeln!(
            out,
            "{}",
            if self.ok {
                "all invariants held"
            } else {
                "VIOLATIONS FOUND"
            }
        )
    }
}
