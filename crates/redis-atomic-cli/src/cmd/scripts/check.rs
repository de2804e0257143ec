//! `scripts check DIR`: a user's folder held to the built-ins' rules, every problem reported.
//!
//! Per script: the header parses and agrees with the body (`redis_atomic_scripts::check`, the
//! judge `build.rs` uses: highest `KEYS[n]`/`ARGV[n]`, `no-writes` against the writes, status
//! words against `returns:`), and the expanded body lints clean (the `lint` command's analysis).
//! Per folder: `library.version` holds the library version and `scripts.lock` is current — a
//! script whose bytes changed without a `--- version:` bump is the finding that matters most,
//! since a server may already hold the old bytes under the same name. Unlike `build.rs`, which
//! stops at the first problem, every script is checked and every finding lands on one item of
//! the production checklist ([`super::checklist`]).

use super::checklist::{judged_by_build, Item};
use super::folder::{library_name, script_paths};
use super::lock::check_lock;
use super::report::{Finding, LibraryInfo, Report, ScriptReport};
use anyhow::Context as _;
use redis_atomic_scripts::{check, folder as user, header, include, load, Header, ScriptFile};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Arguments of `scripts check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The folder: `*.lua` scripts, `include/`, `library.version`, `scripts.lock`.
    pub dir: PathBuf,
    /// Library name (default: the folder's name, sanitised to [a-z0-9_]).
    #[arg(long)]
    pub library: Option<String>,
    /// JSON output on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Runs `scripts check`; 0 clean, 1 findings.
pub(super) fn run(
    args: &CheckArgs,
    out: &mut dyn Write,
    _err: &mut dyn Write,
) -> anyhow::Result<i32> {
    let report = check_folder(&args.dir, args.library.as_deref())?;
    if args.json {
        report.write_json(out)?;
    } else {
        report.write_text(out)?;
    }
    Ok(if report.clean() { 0 } else { 1 })
}

/// Checks every script of `dir` and the folder's version and lock files. An error only for
/// usage and unreadable input (exit 2); everything else is a finding in the report.
fn check_folder(dir: &Path, library: Option<&str>) -> anyhow::Result<Report> {
    let paths = script_paths(dir)?;
    let name = library_name(dir, library)?;
    let includes = dir.join("include");
    let (mut scripts, mut files) = (Vec::new(), Vec::new());
    for path in &paths {
        let (report, file) = check_script(path, &includes)?;
        scripts.push(report);
        files.extend(file);
    }
    let mut folder = Vec::new();
    let lib = match user::library_version(dir) {
        Ok(version) => Some(user::user_library(&name, version)),
        Err(message) => {
            folder.push(finding(
                &dir.join(user::VERSION_FILE),
                0,
                "library-version",
                message,
            ));
            None
        }
    };
    let lock = match &lib {
        Some(lib) if files.len() == paths.len() => {
            check_lock(dir, &files, lib, &mut scripts, &mut folder)?
        }
        _ => "not checked (fix the findings above first)",
    };
    Ok(Report {
        dir: dir.display().to_string(),
        library: lib.map(|l| LibraryInfo {
            name: l.name,
            version: l.version,
            function_prefix: l.function_prefix,
        }),
        lock,
        scripts,
        folder,
    })
}

pub(super) fn finding(path: &Path, line: usize, rule: &str, message: impl Into<String>) -> Finding {
    Finding {
        path: path.display().to_string(),
        line,
        col: 0,
        rule: rule.to_string(),
        message: message.into(),
    }
}

/// One script's checklist, and the loaded script when its header parses (for the lock check).
fn check_script(
    path: &Path,
    includes: &Path,
) -> anyhow::Result<(ScriptReport, Option<ScriptFile>)> {
    let stem = path
        .file_stem()
        .map_or(String::new(), |s| s.to_string_lossy().into_owned());
    let mut report = ScriptReport::new(&stem, &path.display().to_string());
    let raw = load::read_text(path).with_context(|| format!("{}: unreadable", path.display()))?;
    let parsed = load::script_name(path).and_then(|name| {
        load::parse_unchecked(path, &name, &raw, &mut include::from_dir(includes))
    });
    let (file, problems) = match parsed {
        Ok(parsed) => parsed,
        Err(e) => {
            report.add(
                Item::Header,
                finding(path, e.line, "header-invalid", e.message),
            );
            // The body can still be judged where it does not need the header.
            match redis_atomic_lint::source::load(path, Some(includes)) {
                Ok(src) => lint_into(&src, &mut report, false),
                Err(e) => report.add(Item::Lint, finding(path, 0, "unreadable", e.to_string())),
            }
            judge_body(&mut report);
            let reason = "not judged: the header does not parse".to_string();
            for item in Item::ALL.into_iter().filter(|i| i.needs_header()) {
                report.entry(item).detail = reason.clone();
            }
            return Ok((report, None));
        }
    };
    let statuses = check::check_statuses(&file.header, header::body(&file.expanded.text));
    let mut flags_problem = false;
    for problem in &problems {
        let item = Item::of_problem(problem, &statuses);
        flags_problem |= item == Item::Flags;
        let line = field_line(&raw, item.header_field(problem));
        report.add(
            item,
            finding(path, line, "header-body-mismatch", problem.clone()),
        );
    }
    lint_into(&file.expanded, &mut report, flags_problem);
    judge_header(&mut report, &file.header);
    judge_body(&mut report);
    Ok((report, Some(file)))
}

/// Lints the expanded source; each finding onto its checklist item.
fn lint_into(src: &include::Expanded, report: &mut ScriptReport, flags_problem: bool) {
    match redis_atomic_lint::lint_expanded(src) {
        Ok(findings) => {
            for f in findings
                .into_iter()
                .filter(|f| !judged_by_build(f.rule, flags_problem))
            {
                let item = Item::of_rule(f.rule);
                report.add(
                    item,
                    Finding {
                        path: f.path,
                        line: f.line,
                        col: f.col,
                        rule: f.rule.to_string(),
                        message: f.message,
                    },
                );
            }
        }
        Err(e) => report.add(
            Item::Lint,
            Finding {
                path: src.files.first().cloned().unwrap_or_default(),
                line: 0,
                col: 0,
                rule: "lua-parse".into(),
                message: e.to_string(),
            },
        ),
    }
}

/// Marks the items judged from the body alone.
fn judge_body(report: &mut ScriptReport) {
    for (item, detail) in [
        (Item::Loops, "no unbounded loop, read or keyspace walk"),
        (Item::Ttl, "every key created gets an expiry"),
        (Item::Lint, "no other findings"),
    ] {
        report.judged(item, detail.to_string());
    }
}

/// Marks the items judged from the header, with what it says about each.
fn judge_header(report: &mut ScriptReport, h: &Header) {
    let list = |names: &[String]| {
        if names.is_empty() {
            "-".to_string()
        } else {
            names.join(" ")
        }
    };
    let retry = match h.retry.as_str() {
        "safe" => "safe: the client resends after a lost reply",
        _ => "unsafe: a lost reply is returned to the caller, never resent",
    };
    let shapes = h.shapes.statuses().join(", ");
    let flags = if h.flags.is_empty() {
        "#!lua (writes)".to_string()
    } else {
        format!("#!lua flags={}", h.flags.join(","))
    };
    for (item, detail) in [
        (Item::Header, h.summary.clone()),
        (Item::Invariant, h.invariant.clone()),
        (
            Item::Keys,
            format!("keys: {}; args: {}", list(&h.keys), list(&h.args)),
        ),
        (Item::Retry, retry.to_string()),
        (
            Item::Contract,
            format!("version {}; returns {shapes}", h.version),
        ),
        (Item::Flags, flags),
    ] {
        report.judged(item, detail);
    }
}

/// 1-based line of the `--- field:` header line in `raw` (1: the shebang, when not found).
fn field_line(raw: &str, field: &str) -> usize {
    if field.is_empty() {
        return 1;
    }
    raw.lines()
        .position(|l| l.starts_with(&format!("--- {field}:")))
        .map_or(1, |i| i + 1)
}
