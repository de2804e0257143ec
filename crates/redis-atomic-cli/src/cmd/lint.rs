//! `redis-atomic lint`: the `redis-atomic-lint` crate's analysis of Lua scripts and Function
//! libraries, from the command line: which files, which include folder, and the printing (one
//! `path:line:col: rule: message` line per finding, each hit rule's why and fix, or JSON).
//!
//! Exit codes: 0 clean, 1 findings, 2 usage, read or parse errors, or no file linted.

use redis_atomic_lint::{lint_paths, Finding, LintError, LintOptions, Linted, RULES};
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `lint`.
#[derive(Debug, clap::Args)]
pub struct LintArgs {
    /// Lua scripts or libraries; a directory means every `*.lua` directly inside it.
    pub paths: Vec<PathBuf>,
    /// JSON output on stdout.
    #[arg(long)]
    pub json: bool,
    /// Where `--@include name` fragments live (default: `include/` next to each script).
    #[arg(long)]
    pub include_dir: Option<PathBuf>,
    /// List every rule with its why and fix, then exit.
    #[arg(long)]
    pub rules: bool,
}

/// Runs `lint`; returns the exit code.
pub fn run(args: LintArgs, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    if args.rules {
        return match write_rules(out) {
            Ok(()) => 0,
            Err(_) => 2,
        };
    }
    if args.paths.is_empty() {
        let _ = writeln!(err, "error: lint needs at least one PATH (or --rules)");
        return 2;
    }
    let mut options = LintOptions::new();
    if let Some(dir) = &args.include_dir {
        options = options.include_dir(dir);
    }
    let linted = match lint_paths(&args.paths, &options) {
        Ok(linted) => linted,
        Err(e) => {
            let _ = writeln!(err, "error: {e}");
            return 2;
        }
    };
    let printed = if args.json {
        write_json(out, &linted)
    } else {
        write_text(out, err, &linted)
    };
    match (
        printed,
        linted.errors.is_empty(),
        linted.findings.is_empty(),
    ) {
        (Err(_), _, _) | (_, false, _) => 2,
        (_, true, false) => 1,
        (_, true, true) => 0,
    }
}

fn write_json(out: &mut dyn Write, linted: &Linted) -> std::io::Result<()> {
    let findings: Vec<serde_json::Value> = linted.findings.iter().map(finding_json).collect();
    let errors: Vec<serde_json::Value> = linted
        .errors
        .iter()
        .map(|e: &LintError| serde_json::json!({ "message": e.to_string() }))
        .collect();
    let doc = serde_json::json!({"files": linted.files, "findings": findings, "errors": errors});
    writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)
}

fn finding_json(f: &Finding) -> serde_json::Value {
    let rule = f.rule();
    serde_json::json!({
        "path": f.path, "line": f.line, "col": f.col, "rule": f.rule,
        "severity": f.severity, "message": f.message,
        "why": rule.map(|r| r.why), "fix": rule.map(|r| r.fix),
    })
}

fn write_text(out: &mut dyn Write, err: &mut dyn Write, linted: &Linted) -> std::io::Result<()> {
    for e in &linted.errors {
        writeln!(err, "{e}")?;
    }
    for f in &linted.findings {
        writeln!(
            out,
            "{}:{}:{}: {}: {}",
            f.path, f.line, f.col, f.rule, f.message
        )?;
    }
    let mut hit: Vec<&str> = linted.findings.iter().map(|f| f.rule).collect();
    hit.sort_unstable();
    hit.dedup();
    for rule in hit
        .iter()
        .filter_map(|id| redis_atomic_lint::rules::find(id))
    {
        writeln!(
            out,
            "\n{} ({:?}): {}\n  fix: {}",
            rule.id, rule.severity, rule.why, rule.fix
        )?;
    }
    let status = if linted.clean() { "clean" } else { "not clean" };
    writeln!(
        err,
        "{} file(s), {} finding(s), {} error(s): {status}",
        linted.files,
        linted.findings.len(),
        linted.errors.len()
    )
}

fn write_rules(out: &mut dyn Write) -> std::io::Result<()> {
    for rule in RULES {
        writeln!(
            out,
            "{} ({:?})\n  why: {}\n  fix: {}",
            rule.id, rule.severity, rule.why, rule.fix
        )?;
    }
    Ok(())
}
