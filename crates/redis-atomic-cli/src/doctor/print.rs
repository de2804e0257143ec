//! The doctor's report: a table for people (one line per finding, its fix under it), JSON for
//! machines.

use super::Target;
use redis_atomic::doctor::{Report, Status};
use std::io::Write;

/// `all N` when a finding holds on every node, else the nodes.
fn nodes(list: &[String], total: usize) -> String {
    if total > 1 && list.len() == total {
        return format!("all {total}");
    }
    list.join(",")
}

pub(super) fn table(out: &mut dyn Write, target: &Target, report: &Report) -> std::io::Result<()> {
    writeln!(
        out,
        "redis-atomic doctor: {} ({}, {} node{})",
        target.what,
        target.mode,
        target.nodes,
        if target.nodes == 1 { "" } else { "s" }
    )?;
    let width = report
        .rows
        .iter()
        .map(|r| nodes(&r.nodes, target.nodes).len())
        .max()
        .unwrap_or(5)
        .clamp(5, 48);
    writeln!(
        out,
        "{:<22} {:<6} {:<width$} found",
        "check", "status", "nodes"
    )?;
    for row in &report.rows {
        let status = match row.status {
            Status::Fail => "FAIL",
            other => other.as_str(),
        };
        let nodes = nodes(&row.nodes, target.nodes);
        writeln!(
            out,
            "{:<22} {:<6} {:<width$} {}",
            row.check, status, nodes, row.found
        )?;
        if !row.fix.is_empty() {
            writeln!(out, "{:<22} {:<6} {:<width$} fix: {}", "", "", "", row.fix)?;
        }
    }
    let count = |s: Status| report.rows.iter().filter(|r| r.status == s).count();
    let (fails, warns) = (count(Status::Fail), count(Status::Warn));
    match fails {
        0 => writeln!(out, "ok: no check failed ({warns} warning(s))"),
        n => writeln!(out, "NOT OK: {n} check(s) failed, {warns} warning(s)"),
    }
}

pub(super) fn json(out: &mut dyn Write, target: &Target, report: &Report) -> std::io::Result<()> {
    let rows: Vec<serde_json::Value> = report
        .rows
        .iter()
        .map(|r| {
            serde_json::json!({
                "check": r.check, "status": r.status.as_str(), "nodes": r.nodes,
                "found": r.found, "fix": r.fix,
            })
        })
        .collect();
    let doc = serde_json::json!({
        "ok": report.ok(),
        "target": {
            "what": target.what, "embedded": target.embedded, "mode": target.mode,
            "nodes": target.nodes,
        },
        "rows": rows,
    });
    writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)
}
