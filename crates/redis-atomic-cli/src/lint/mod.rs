//! `redis-atomic lint`: static analysis of Redis 7 Lua scripts and Function libraries.
//!
//! Seed 000 asks that server-side code avoid dynamic key names, KEYS/SCAN, unbounded loops and
//! huge replies, and that it be reviewed like a migration. Reviews miss these; a parser does not.
//! Each file is read and expanded (`--@include`) by the very loader and expander `build.rs` uses
//! (`redis-atomic-scripts`), parsed with `full_moon` (Lua 5.1, what Redis embeds) and walked
//! once; every finding names a rule from [`rules::RULES`] with a why and a fix. A deliberate
//! exception is silenced on its line (or the line above) with
//! `-- redis-atomic-lint: allow <rule-id>`, which keeps the reason next to the code.
//!
//! Inputs are bounded before they are parsed: files are regular and at most 1 MiB
//! ([`redis_atomic_scripts::load::read_text`]), nesting is measured by a token scan
//! ([`depth`]) and the parse and walk run on a thread whose stack ([`STACK_BYTES`]) holds the
//! deepest source the scan lets through. Time and memory grow linearly with the file.
//!
//! Exit codes: 0 clean, 1 findings, 2 usage, read or parse errors, or no file linted.

mod calls;
pub mod depth;
mod expr;
mod file_rules;
mod loops;
pub mod rules;
pub mod source;
mod value;
mod walk;

use redis_atomic_scripts::load;
use rules::{Rule, Severity, RULES};
use serde::Serialize;
use source::{Allows, Expanded};
use std::io::Write;
use std::path::{Path, PathBuf};

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

/// One finding.
#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    /// File (an included fragment when the finding is inside one).
    pub path: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub col: usize,
    /// Rule id.
    pub rule: &'static str,
    /// Severity of the rule.
    pub severity: Severity,
    /// What was found.
    pub message: String,
}

impl Finding {
    /// The rule's why and fix.
    pub fn rule(&self) -> Option<&'static Rule> {
        rules::find(self.rule)
    }
}

/// A file that could not be linted (unreadable, unknown include, not Lua).
#[derive(Clone, Debug, Serialize)]
pub struct LintError {
    /// `path:line:col: message`.
    pub message: String,
}

/// Lints one source whose includes are already expanded (e.g. a `registry::ALL` entry).
pub fn lint_source(name: &str, text: &str) -> Result<Vec<Finding>, LintError> {
    lint_expanded(&Expanded::plain(name, text))
}

/// Stack of the thread that parses and walks one source. The deepest source [`depth::check`]
/// passes (199 nested `function` levels, then a chain of unary operators making up the rest of
/// the 5 000 levels: the costliest shape per level) needs 12–16 MiB in a debug build (measured
/// by `tests/lint.rs` `deepest_accepted_source_lints` with smaller stacks); 64 MiB leaves a
/// margin of four, whatever the caller's stack (2 MiB for test and tokio threads). It is
/// reserved, not committed: only the pages a deep source touches are used.
pub const STACK_BYTES: usize = 64 << 20;

/// Lints an expanded source: its nesting is checked first ([`depth::check`]), then it is parsed
/// and walked on a thread of its own with a [`STACK_BYTES`] stack.
pub fn lint_expanded(src: &Expanded) -> Result<Vec<Finding>, LintError> {
    if let Err(e) = depth::check(&src.text) {
        let (file, line) = src.locate(e.line);
        return Err(LintError {
            message: format!("{file}:{line}:1: {}", e.message),
        });
    }
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("lint".into())
            .stack_size(STACK_BYTES)
            .spawn_scoped(scope, || parse_and_walk(src))
            .map_err(|e| LintError {
                message: format!("cannot start the lint thread: {e}"),
            })?
            .join()
            .unwrap_or_else(|_| {
                Err(LintError {
                    message: format!("{}: the linter failed on this file", src.files[0]),
                })
            })
    })
}

fn parse_and_walk(src: &Expanded) -> Result<Vec<Finding>, LintError> {
    let ast = full_moon::parse(&src.text).map_err(|errors| {
        let (message, line, col) = errors.first().map_or(("unknown".into(), 1, 1), |e| {
            let p = e.range().0;
            (e.error_message().to_string(), p.line(), p.character())
        });
        let (file, line) = src.locate(line);
        LintError {
            message: format!("{file}:{line}:{col}: parse error: {message}"),
        }
    })?;
    let mut raw = Vec::new();
    let kind = file_rules::shebang(&src.text, &mut raw);
    if !kind.library {
        file_rules::header_rules(&src.text, &mut raw);
    }
    file_rules::constant_tags(ast.nodes(), &mut raw);
    let mut walker = walk::Walker::new(kind.library, kind.flags);
    walker.block(ast.nodes());
    raw.extend(walker.finish());
    let allows = Allows::of(src);
    let mut findings: Vec<Finding> = raw
        .into_iter()
        .filter(|f| !allows.allowed(f.pos.line, f.rule))
        .map(|f| {
            let (path, line) = src.locate(f.pos.line);
            Finding {
                path: path.to_string(),
                line,
                col: f.pos.col,
                rule: f.rule,
                severity: rules::find(f.rule).map_or(Severity::Error, |r| r.severity),
                message: f.message,
            }
        })
        .collect();
    findings.sort_by(|a, b| (&a.path, a.line, a.col).cmp(&(&b.path, b.line, b.col)));
    findings.dedup_by(|a, b| (&a.path, a.line, a.col, a.rule) == (&b.path, b.line, b.col, b.rule));
    Ok(findings)
}

/// The files to lint: each path as given, a directory as the `*.lua` regular files directly
/// inside it (a folder is listed as `build.rs` lists its own `scripts/`).
fn files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for path in paths {
        if path.is_dir() {
            out.extend(load::script_paths(path).map_err(|e| e.to_string())?);
        } else {
            out.push(path.clone());
        }
    }
    Ok(out)
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
    let files = match files(&args.paths) {
        Ok(f) if f.is_empty() => {
            let _ = writeln!(
                err,
                "error: no *.lua file in the given paths: nothing linted"
            );
            return 2;
        }
        Ok(f) => f,
        Err(e) => {
            let _ = writeln!(err, "error: {e}");
            return 2;
        }
    };
    let (mut findings, mut errors) = (Vec::new(), Vec::new());
    for file in &files {
        let result = source::load(file, args.include_dir.as_deref())
            .map_err(|message| LintError { message })
            .and_then(|src| lint_expanded(&src));
        match result {
            Ok(f) => findings.extend(f),
            Err(e) => errors.push(e),
        }
    }
    let printed = if args.json {
        write_json(out, files.len(), &findings, &errors)
    } else {
        write_text(out, err, files.len(), &findings, &errors)
    };
    match (printed, errors.is_empty(), findings.is_empty()) {
        (Err(_), _, _) | (_, false, _) => 2,
        (_, true, false) => 1,
        (_, true, true) => 0,
    }
}

fn write_json(
    out: &mut dyn Write,
    files: usize,
    findings: &[Finding],
    errors: &[LintError],
) -> std::io::Result<()> {
    let findings: Vec<serde_json::Value> = findings
        .iter()
        .map(|f| {
            let rule = f.rule();
            serde_json::json!({
                "path": f.path, "line": f.line, "col": f.col, "rule": f.rule,
                "severity": f.severity, "message": f.message,
                "why": rule.map(|r| r.why), "fix": rule.map(|r| r.fix),
            })
        })
        .collect();
    let doc = serde_json::json!({"files": files, "findings": findings, "errors": errors});
    writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)
}

fn write_text(
    out: &mut dyn Write,
    err: &mut dyn Write,
    files: usize,
    findings: &[Finding],
    errors: &[LintError],
) -> std::io::Result<()> {
    for e in errors {
        writeln!(err, "{}", e.message)?;
    }
    for f in findings {
        writeln!(
            out,
            "{}:{}:{}: {}: {}",
            f.path, f.line, f.col, f.rule, f.message
        )?;
    }
    let mut hit: Vec<&str> = findings.iter().map(|f| f.rule).collect();
    hit.sort_unstable();
    hit.dedup();
    for rule in hit.iter().filter_map(|id| rules::find(id)) {
        writeln!(
            out,
            "\n{} ({:?}): {}\n  fix: {}",
            rule.id, rule.severity, rule.why, rule.fix
        )?;
    }
    let status = if findings.is_empty() && errors.is_empty() {
        "clean"
    } else {
        "not clean"
    };
    writeln!(
        err,
        "{files} file(s), {} finding(s), {} error(s): {status}",
        findings.len(),
        errors.len()
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

/// Lints the files under `dir` with the defaults (used by tests and `make test`).
pub fn lint_dir(dir: &Path) -> Result<Vec<Finding>, LintError> {
    let files = files(&[dir.to_path_buf()]).map_err(|message| LintError { message })?;
    let mut all = Vec::new();
    for file in files {
        let src = source::load(&file, None).map_err(|message| LintError { message })?;
        all.extend(lint_expanded(&src)?);
    }
    Ok(all)
}
