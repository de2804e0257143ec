//! The verify report: a table for people, JSON for machines (the exact bytes `redis-atomic verify`
//! prints, and `--json`'s document).
//!
//! A row has one of three statuses: `ok` (the invariant held), `violations` (it did not: the
//! first few are described) and `error` (the check could not run to a verdict: the reason is
//! given). Any row not `ok` makes the run not ok (`redis-atomic verify` exits 1). Every row also
//! says how available the primitive was ([`Availability`]) and, under `corrupt-reply`, how many
//! replies were corrupted.

use crate::faults::{FaultKind, ServerCalls};
use crate::tally::Availability;
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
    /// Why the row could not be asked at all (a driver that does not declare it): the row is
    /// `unsupported`, never passed.
    pub unsupported: Option<String>,
}

impl Findings {
    /// Findings on `operations`, no verdict yet.
    pub fn new(operations: u64) -> Findings {
        Findings {
            operations,
            verdicts: Vec::new(),
            unsupported: None,
        }
    }

    /// A row the client under test does not support, and why.
    pub fn unsupported(why: impl Into<String>) -> Findings {
        Findings {
            unsupported: Some(why.into()),
            ..Findings::new(0)
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

/// Whether a row's invariant held.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Status {
    /// No violation.
    Ok,
    /// At least one violation.
    Violations,
    /// The check could not run to a verdict ([`CheckReport::error`] says why).
    Error,
    /// The client under test (a driver) does not support the row ([`CheckReport::error`] says
    /// which rows it does): not a pass.
    Unsupported,
}

/// One primitive's result.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
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
    /// `status == ok`.
    pub ok: bool,
    /// `ok`, `violations`, `error` or `unsupported`.
    pub status: Status,
    /// Why the check could not run (status `error`), or why it was not asked (`unsupported`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How available the primitive was: calls, refused calls, the longest stretch of refusals.
    pub availability: Availability,
    /// Replies the fault replaced (`corrupt-reply` rows only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub corrupted_replies: Option<u64>,
    /// The decisions the fault's servers executed during the row, by path: the server module's
    /// natives or the scripts (rows under a fault only; lower bounds, see [`ServerCalls`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_calls: Option<ServerCalls>,
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
            status: if violations == 0 {
                Status::Ok
            } else {
                Status::Violations
            },
            error: None,
            availability: Availability::default(),
            corrupted_replies: None,
            server_calls: None,
            examples: Vec::new(),
        }
    }

    /// The row of a check that could not run to a verdict, and why (one line).
    pub fn failed(primitive: &str, invariant: &str, reason: String) -> Self {
        CheckReport {
            ok: false,
            status: Status::Error,
            error: Some(reason),
            ..CheckReport::new(primitive, invariant, 0, 0)
        }
    }

    /// The report of the check `primitive` on `findings`, with the first few violations.
    pub fn judged(primitive: &str, invariant: &str, findings: &Findings) -> Self {
        if let Some(why) = &findings.unsupported {
            return CheckReport {
                status: Status::Unsupported,
                ..CheckReport::failed(primitive, invariant, why.clone())
            };
        }
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

    /// The same report with the primitive's availability.
    pub fn with_availability(mut self, availability: Availability) -> Self {
        self.availability = availability;
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
    /// The server module's version when the run's client decides through its natives (detected
    /// at connect, on every node of a cluster, and not `force_lua`); None: the scripts decide.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub module: Option<String>,
}

impl ServerInfo {
    /// Reads INFO server, and which path the client's decisions take
    /// ([`Client::capabilities`]).
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
        let caps = client.capabilities().await;
        let module = caps
            .module
            .filter(|m| !caps.forced_lua && m.mismatched().len() < m.natives.len())
            .map(|m| m.version);
        Ok(ServerInfo {
            module,
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
    /// Every row is ok — no violation, no check that could not run — but for rows a driver does
    /// not support, and at least one row is ok.
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
            ok: checks
                .iter()
                .all(|c| c.ok || c.status == Status::Unsupported)
                && checks.iter().any(|c| c.ok),
            server,
            checks,
        }
    }

    /// `{"ok":..,"server":{..},"checks":[..]}`.
    pub fn write_json(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(out, "{}", serde_json::to_string(self)?)
    }

    /// A table: primitive (and fault, when any row ran under one), invariant, operations, unknown
    /// outcomes, availability (refused calls, their share, the longest stretch of refusals and
    /// the longest with no call served, in ms), replies corrupted (when a row ran under `corrupt-reply`), violations, ok (`yes`, `NO`,
    /// `ERROR`); then each row's violations described and each error's reason, and a last line.
    pub fn write_table(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let decisions = match &self.server.module {
            Some(version) => format!(" with module ratomic {version}; decisions: module natives"),
            None => "; decisions: scripts".into(),
        };
        writeln!(
            out,
            "redis-atomic verify: Redis {} ({}){decisions}",
            self.server.version, self.server.mode
        )?;
        let columns = Columns {
            fault: self.checks.iter().any(|c| c.fault != "none"),
            corrupted: self.checks.iter().any(|c| c.corrupted_replies.is_some()),
            natives: self
                .checks
                .iter()
                .any(|c| c.server_calls.is_some_and(|n| n.natives > 0)),
        };
        writeln!(out, "{}", columns.header())?;
        for c in &self.checks {
            writeln!(out, "{}", columns.row(c))?;
        }
        for c in &self.checks {
            for example in &c.examples {
                writeln!(out, "  {} ({}): {example}", c.primitive, c.fault)?;
            }
            if let (Some(why), Status::Unsupported) = (&c.error, c.status) {
                writeln!(out, "  {} ({}): unsupported: {why}", c.primitive, c.fault)?;
            } else if let Some(error) = &c.error {
                writeln!(
                    out,
                    "  {} ({}): could not run: {error}",
                    c.primitive, c.fault
                )?;
            }
        }
        let count = |s: Status| self.checks.iter().filter(|c| c.status == s).count();
        let last = match (count(Status::Violations), count(Status::Error)) {
            (0, 0) if count(Status::Ok) == 0 => "NO ROW WAS JUDGED".to_string(),
            (0, 0) => match count(Status::Unsupported) {
                0 => "all invariants held".to_string(),
                n => format!("all invariants held; {n} row(s) unsupported"),
            },
            (_, 0) => "VIOLATIONS FOUND".to_string(),
            (0, e) => format!("{e} CHECK(S) COULD NOT RUN"),
            (_, e) => format!("VIOLATIONS FOUND; {e} CHECK(S) COULD NOT RUN"),
        };
        writeln!(out, "{last}")
    }
}

/// The table's optional columns (`natives`: a fault row's decisions by the server module, when
/// any row ran one).
struct Columns {
    fault: bool,
    corrupted: bool,
    natives: bool,
}

impl Columns {
    fn header(&self) -> String {
        self.line(
            ["primitive", "fault", "invariant", "operations", "unknown"].map(String::from),
            [
                "refused",
                "refused%",
                "outage ms",
                "unserved ms",
                "corrupted",
                "natives",
                "violations",
                "ok",
            ]
            .map(String::from),
        )
    }

    fn row(&self, c: &CheckReport) -> String {
        let a = &c.availability;
        let ok = match c.status {
            Status::Ok => "yes",
            Status::Violations => "NO",
            Status::Error => "ERROR",
            Status::Unsupported => "unsupported",
        };
        self.line(
            [
                c.primitive.clone(),
                c.fault.clone(),
                c.invariant.clone(),
                c.operations.to_string(),
                c.unknown.to_string(),
            ],
            [
                a.refused.to_string(),
                format!("{:.1}%", a.refused_share * 100.0),
                a.longest_outage_ms.to_string(),
                a.longest_unserved_ms.to_string(),
                c.corrupted_replies.map_or("-".into(), |n| n.to_string()),
                match c.server_calls {
                    Some(n) if n.natives + n.scripts > 0 => {
                        format!(
                            "{:.1}%",
                            100.0 * n.natives as f64 / (n.natives + n.scripts) as f64
                        )
                    }
                    _ => "-".into(),
                },
                c.violations.to_string(),
                ok.to_string(),
            ],
        )
    }

    fn line(&self, [p, f, i, ops, unknown]: [String; 5], rest: [String; 8]) -> String {
        let [refused, share, outage, unserved, corrupted, natives, violations, ok] = rest;
        let mut line = format!("{p:<14} ");
        if self.fault {
            line.push_str(&format!("{f:<13} "));
        }
        line.push_str(&format!(
            "{i:<62} {ops:>10} {unknown:>8} {refused:>8} {share:>8} {outage:>9} {unserved:>11}"
        ));
        if self.corrupted {
            line.push_str(&format!(" {corrupted:>9}"));
        }
        if self.natives {
            line.push_str(&format!(" {natives:>7}"));
        }
        line.push_str(&format!(" {violations:>10}  {ok}"));
        line
    }
}
