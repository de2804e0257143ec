//! # redis-atomic-lint
//!
//! Static analysis of Redis 7 Lua scripts and Function libraries: keys not from `KEYS`,
//! `KEYS`/`SCAN` inside scripts, unbounded reads and loops, keys created without a TTL, float
//! returns, globals, shebang flags, and the redis-atomic header against its body.
//!
//! **Who it is for:** anyone who writes Lua for Redis and wants these checks where their code is
//! built and tested — a `build.rs` that refuses a script with a finding, a `#[test]` that lints a
//! folder, a CI step. `redis-atomic lint` and `redis-atomic scripts check` are two callers of
//! this crate; yours is a third.
//!
//! **Why a crate of its own:** the checks are pure code over text (this crate, `full_moon` and
//! `redis-atomic-scripts`, which is std + sha1). Inside the command-line crate they were out of
//! reach of a build script or a test, which would have had to compile a Redis client, an async
//! runtime and an HTTP server to lint a file.
//!
//! Reviews miss dynamic key names and unbounded work; a parser does not. Each file is read and
//! expanded (`--@include`) by the very loader and expander `build.rs` uses
//! (`redis-atomic-scripts`), parsed with `full_moon` (Lua 5.1, what Redis embeds) and walked
//! once; every [`Finding`] names a rule from [`RULES`] with a why and a fix. A deliberate
//! exception is silenced on its line (or the line above) with
//! `-- redis-atomic-lint: allow <rule-id>`, which keeps the reason next to the code.
//!
//! Inputs are bounded before they are parsed: files are regular and at most 1 MiB
//! ([`redis_atomic_scripts::load::read_text`]), nesting is measured by a token scan
//! ([`depth`]) and the parse and walk run on a thread whose stack ([`STACK_BYTES`]) holds the
//! deepest source the scan lets through. Time and memory grow linearly with the file.
//!
//! ```no_run
//! // build.rs, or a test: every script of scripts/ lints clean.
//! let findings = redis_atomic_lint::lint_dir(std::path::Path::new("scripts")).unwrap();
//! for f in &findings {
//!     eprintln!("{}:{}:{}: {}: {}", f.path, f.line, f.col, f.rule, f.message);
//! }
//! assert!(findings.is_empty());
//! ```

mod calls;
pub mod depth;
mod error;
mod expr;
mod file_rules;
mod loops;
mod named;
pub mod rules;
pub mod source;
mod value;
mod walk;

pub use error::LintError;
pub use rules::{Rule, Severity, RULES};
pub use source::{Expanded, Origin};

use redis_atomic_scripts::load;
use serde::Serialize;
use source::Allows;
use std::path::{Path, PathBuf};

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

/// How files are read.
#[derive(Clone, Debug, Default)]
pub struct LintOptions {
    include_dir: Option<PathBuf>,
}

impl LintOptions {
    /// The defaults: `--@include name` fragments from `include/` next to each script.
    pub fn new() -> LintOptions {
        LintOptions::default()
    }

    /// Fragments from `dir` instead of `include/` next to each script.
    pub fn include_dir(mut self, dir: impl Into<PathBuf>) -> LintOptions {
        self.include_dir = Some(dir.into());
        self
    }
}

/// What [`lint_paths`] found: every file was linted, those that could not be are in `errors`.
#[derive(Clone, Debug, Default)]
pub struct Linted {
    /// Files linted (or attempted).
    pub files: usize,
    /// Findings of every file, in file order.
    pub findings: Vec<Finding>,
    /// Files that could not be linted.
    pub errors: Vec<LintError>,
}

impl Linted {
    /// No finding and no error.
    pub fn clean(&self) -> bool {
        self.findings.is_empty() && self.errors.is_empty()
    }
}

/// Lints one source whose includes are already expanded (e.g. a `registry::ALL` entry);
/// `name` names it in findings and errors.
pub fn lint_source(name: &str, source: &str) -> Result<Vec<Finding>, LintError> {
    lint_expanded(&Expanded::plain(name, source))
}

/// Reads `path`, expands its includes and lints it.
pub fn lint_file(path: &Path, options: &LintOptions) -> Result<Vec<Finding>, LintError> {
    lint_expanded(&source::load(path, options.include_dir.as_deref())?)
}

/// Lints every `*.lua` file directly inside `dir` with the default options; the first file that
/// cannot be linted is the error, and so is a folder without one (nothing linted is not clean).
pub fn lint_dir(dir: &Path) -> Result<Vec<Finding>, LintError> {
    let mut all = Vec::new();
    for file in files(&[dir.to_path_buf()])? {
        all.extend(lint_file(&file, &LintOptions::default())?);
    }
    Ok(all)
}

/// Lints each path (a directory: the `*.lua` regular files directly inside it) and carries on
/// past files that cannot be linted. An error only when a folder cannot be listed or there is
/// nothing to lint.
pub fn lint_paths(paths: &[PathBuf], options: &LintOptions) -> Result<Linted, LintError> {
    let files = files(paths)?;
    let mut linted = Linted {
        files: files.len(),
        ..Linted::default()
    };
    for file in &files {
        match lint_file(file, options) {
            Ok(f) => linted.findings.extend(f),
            Err(e) => linted.errors.push(e),
        }
    }
    Ok(linted)
}

/// The files to lint: each path as given, a directory as the `*.lua` regular files directly
/// inside it (a folder is listed as `build.rs` lists its own `scripts/`). None is an error.
pub fn files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, LintError> {
    let mut out = Vec::new();
    for path in paths {
        if path.is_dir() {
            let listed = load::script_paths(path).map_err(|e| LintError::List {
                reason: e.to_string(),
            })?;
            out.extend(listed);
        } else {
            out.push(path.clone());
        }
    }
    if out.is_empty() {
        return Err(LintError::NothingToLint);
    }
    Ok(out)
}

/// Stack of the thread that parses and walks one source. The deepest source [`depth::check`]
/// passes (199 nested `function` levels, then a chain of unary operators making up the rest of
/// the 5 000 levels: the costliest shape per level) needs far more than a test or tokio
/// thread's 2 MiB in a debug build (measured by the `deepest_accepted_source_lints` test with
/// smaller stacks; the figure: docs/performance.md, "Tools"); 64 MiB leaves a margin of about
/// four over it, whatever the caller's stack. It is reserved, not committed: only the pages a
/// deep source touches are used.
pub const STACK_BYTES: usize = 64 << 20;

/// Lints an expanded source: its nesting is checked first ([`depth::check`]), then it is parsed
/// and walked on a thread of its own with a [`STACK_BYTES`] stack.
pub fn lint_expanded(src: &Expanded) -> Result<Vec<Finding>, LintError> {
    if let Err(e) = depth::check(&src.text) {
        let (file, line) = src.locate(e.line);
        return Err(LintError::TooDeep {
            file: file.to_string(),
            line,
            message: e.message,
        });
    }
    let name = || src.files.first().cloned().unwrap_or_default();
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("lint".into())
            .stack_size(STACK_BYTES)
            .spawn_scoped(scope, || parse_and_walk(src))
            .map_err(|e| LintError::Internal {
                file: name(),
                reason: format!("cannot start the lint thread: {e}"),
            })?
            .join()
            .unwrap_or_else(|_| {
                Err(LintError::Internal {
                    file: name(),
                    reason: "the linter failed on this file".into(),
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
        LintError::Parse {
            file: file.to_string(),
            line,
            col,
            message,
        }
    })?;
    let mut raw = Vec::new();
    let kind = file_rules::shebang(&src.text, &mut raw);
    if !kind.library {
        file_rules::header_rules(&src.text, &mut raw);
    }
    file_rules::constant_tags(ast.nodes(), &mut raw);
    let mut walker = walk::Walker::new(kind.library, kind.flags);
    walker.chunk(ast.nodes());
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
