//! `scripts lock DIR` writes `DIR/scripts.lock`; `scripts check` compares the folder with it.
//!
//! Like a migration checksum: the lock records name, version and SHA1 of every script and of the
//! Function library, so bytes that change without a version bump are caught before a server
//! that already holds the old bytes under the same name (`EVALSHA` by a stale SHA, a library
//! `FUNCTION LOAD` refuses) meets them. `lock` therefore never hides such a change: it refuses
//! (exit 1) until the version is bumped. Rendering and comparison belong to
//! `redis_atomic_scripts::lockfile`, the same code that keeps the built-in lock.

use super::check::finding;
use super::checklist::Item;
use super::folder::UserFolder;
use super::report::{Finding, ScriptReport};
use anyhow::Context as _;
use redis_atomic_scripts::codegen::Library;
use redis_atomic_scripts::folder as user;
use redis_atomic_scripts::lockfile::{self, Kind, LockProblem};
use redis_atomic_scripts::{load, ScriptFile};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Arguments of `scripts lock`.
#[derive(Debug, clap::Args)]
pub struct LockArgs {
    /// The folder: `*.lua` scripts, `include/`, `library.version`.
    pub dir: PathBuf,
    /// Library name (default: the folder's name, sanitised to [a-z0-9_]).
    #[arg(long)]
    pub library: Option<String>,
}

/// Runs `scripts lock`: 0 written or already current, 1 refused (bytes changed without a bump).
pub(super) fn run(
    args: &LockArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> anyhow::Result<i32> {
    let folder = UserFolder::load(&args.dir, args.library.as_deref())?;
    let path = args.dir.join(user::LOCK_FILE);
    let old = read_lock(&path)?;
    if let Some(old) = &old {
        let unbumped: Vec<Finding> = problems(&path, &folder.scripts, &folder.library, old)
            .into_iter()
            .map(|(_, f)| f)
            .filter(|f| f.rule == UNBUMPED)
            .collect();
        if !unbumped.is_empty() {
            for f in &unbumped {
                writeln!(err, "{f}")?;
            }
            writeln!(err, "error: {} not written", path.display())?;
            return Ok(1);
        }
    }
    let text = user::render_lock(&folder.scripts, &folder.library);
    let verb = if old.as_deref() == Some(text.as_str()) {
        "current"
    } else {
        std::fs::write(&path, &text).with_context(|| format!("writing {}", path.display()))?;
        "written"
    };
    writeln!(
        out,
        "{}: {verb} ({} script(s), library {})",
        path.display(),
        folder.scripts.len(),
        folder.library.name
    )?;
    Ok(0)
}

/// The rule of a change without a version bump.
const UNBUMPED: &str = "lock-changed-without-bump";

/// The lock's text, or `None` when there is no lock yet.
fn read_lock(path: &Path) -> anyhow::Result<Option<String>> {
    match load::read_text(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("{}: unreadable", path.display())),
    }
}

/// How `files` and `lib` disagree with the lock's text: each finding with the script it
/// concerns (`None`: the library).
fn problems(
    path: &Path,
    files: &[ScriptFile],
    lib: &Library,
    lock: &str,
) -> Vec<(Option<String>, Finding)> {
    let recorded_lib = lockfile::parse(lock)
        .into_iter()
        .find(|e| e.kind == Kind::Library);
    let mut out = Vec::new();
    for problem in lockfile::check(&user::lock_entries(files, lib), lock) {
        let (script, rule, message) = match problem {
            LockProblem::ChangedWithoutBump { name, version } if name == lib.name => {
                let message = match &recorded_lib {
                    Some(r) if r.name != lib.name => format!(
                        "the lock holds library `{}`, this run composes `{name}` (the folder's \
                         name or --library): pass the same --library, or bump library.version",
                        r.name
                    ),
                    _ => format!(
                        "library {name}: its source changed at version {version}: bump \
                         library.version, then `redis-atomic scripts lock`"
                    ),
                };
                (None, UNBUMPED, message)
            }
            LockProblem::ChangedWithoutBump { name, version } => {
                let message = format!(
                    "{name}: bytes changed at version {version}: bump its `--- version:` (and \
                     library.version), then `redis-atomic scripts lock`"
                );
                (Some(name), UNBUMPED, message)
            }
            LockProblem::Stale { detail } => {
                let script = detail
                    .split_once(": ")
                    .map(|(n, _)| n.to_string())
                    .filter(|n| files.iter().any(|f| f.name == *n));
                let message = format!("{detail}: run `redis-atomic scripts lock`");
                (script, "lock-stale", message)
            }
            other => (None, "lock-stale", other.to_string()),
        };
        out.push((script, finding(path, 0, rule, message)));
    }
    out
}

/// `scripts check`'s lock step: each problem onto its script's contract item (or the folder);
/// returns the lock's state for the report.
pub(super) fn check_lock(
    dir: &Path,
    files: &[ScriptFile],
    lib: &Library,
    scripts: &mut [ScriptReport],
    folder: &mut Vec<Finding>,
) -> anyhow::Result<&'static str> {
    let path = dir.join(user::LOCK_FILE);
    let Some(lock) = read_lock(&path)? else {
        let message = format!("missing: run `redis-atomic scripts lock {}`", dir.display());
        folder.push(finding(&path, 0, "lock-missing", message));
        return Ok("missing");
    };
    let problems = problems(&path, files, lib, &lock);
    let state = if problems.is_empty() {
        "current"
    } else {
        "stale"
    };
    for (script, f) in problems {
        match scripts
            .iter_mut()
            .find(|s| Some(&s.name) == script.as_ref())
        {
            Some(report) => report.add(Item::Contract, f),
            None => folder.push(f),
        }
    }
    for report in scripts.iter_mut() {
        let entry = report.entry(Item::Contract);
        if entry.findings.is_empty() {
            entry.detail.push_str("; locked");
        }
    }
    Ok(state)
}
