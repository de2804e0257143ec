//! `redis-atomic test DIR`: the fixtures of a user's script folder, run against a real server.
//!
//! A Lua unit fixture — given a known state, call, assert the reply and the state after — in the
//! shape of Redis's own `scripting.tcl` cases, written as TOML next to the
//! scripts ([`model`]). Each case runs twice, through `EVALSHA` and through `FCALL` of the
//! folder's Function library ([`run`]), on a flushed database, so both delivery paths are held
//! to it. Every fixture is read and checked against the scripts' headers before a server is
//! started ([`discover`]): a broken fixture is a usage error, never a failing script.
//!
//! With no `--url`, an embedded redis-server is started for the run and stopped after it. With
//! `--url`, the database is flushed before every case, so a database that holds keys is refused
//! unless `--allow-flush` says they may go.
//!
//! Exit codes: 0 every case passed on both paths, 1 any failed, 2 usage (bad fixture, unknown
//! script, wrong key or argument count, no fixtures), connection or server errors.

mod discover;
pub mod expect;
pub mod model;
pub mod run;

use anyhow::{bail, Context as _};
use expect::Mismatch;
use model::Fixture;
use redis_atomic_verify::url_or_embed;
use run::{Path, Runner};
use std::io::Write;
use std::path::PathBuf;

use crate::cmd::scripts::UserFolder;

/// Arguments of `test`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit codes: 0 every case passed on both paths; 1 any failed; 2 usage \
    (bad fixture, unknown script, wrong key or argument count, no fixtures), connection or \
    server errors."
)]
pub struct TestArgs {
    /// The folder: `*.lua` scripts, `library.version`, and `*.test.toml` fixtures under it.
    pub dir: PathBuf,
    /// Server to test against (default: an embedded redis-server started for the run). Its
    /// database is flushed before every case and the library is loaded with REPLACE: point it
    /// at a disposable server.
    #[arg(long)]
    pub url: Option<String>,
    /// TLS files for a rediss:// --url.
    #[command(flatten)]
    pub conn: crate::args::ConnArgs,
    /// With --url: run even when the database holds keys (they are deleted).
    #[arg(long, requires = "url")]
    pub allow_flush: bool,
    /// Library name (default: the folder's name, sanitised to [a-z0-9_]).
    #[arg(long)]
    pub library: Option<String>,
    /// JSON output on stdout.
    #[arg(long)]
    pub json: bool,
}

/// One case run through one path.
struct Outcome<'a> {
    fixture: &'a Fixture,
    case: usize,
    path: Path,
    mismatches: Vec<Mismatch>,
}

/// Runs `test`; returns the exit code.
pub fn run_blocking(args: TestArgs, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    match run_all(&args, out, err) {
        Ok(code) => code,
        Err(e) => {
            let _ = writeln!(err, "error: {}", crate::output::one_line(&e));
            2
        }
    }
}

fn run_all(args: &TestArgs, out: &mut dyn Write, err: &mut dyn Write) -> anyhow::Result<i32> {
    args.conn.require_url(args.url.as_deref())?;
    let folder = UserFolder::load(&args.dir, args.library.as_deref())?;
    let fixtures = match discover::fixtures(&args.dir, &folder) {
        Ok(f) => f,
        Err(problems) => {
            for p in problems {
                writeln!(err, "error: {p}")?;
            }
            return Ok(2);
        }
    };
    let (url, server) = url_or_embed(args.url.as_deref(), false)?;
    let mut runner = Runner::connect(&url, args.conn.tls().as_ref())?;
    if args.url.is_some() && !args.allow_flush {
        let keys = runner.dbsize()?;
        if keys > 0 {
            bail!(
                "the database at {} holds {keys} key(s) and `test` flushes it before every case: \
                 use an empty database or pass --allow-flush",
                run::redact(&url)
            );
        }
    }
    runner.load(&folder)?;
    let mut outcomes = Vec::new();
    for fixture in &fixtures {
        let script = folder
            .find(&fixture.script)
            .context("fixture names a script the folder lacks")?;
        for (i, case) in fixture.cases.iter().enumerate() {
            for path in Path::BOTH {
                let mismatches = runner.run(&folder, script, case, path)?;
                let outcome = Outcome {
                    fixture,
                    case: i,
                    path,
                    mismatches,
                };
                if !args.json {
                    write_line(out, &outcome)?;
                }
                outcomes.push(outcome);
            }
        }
    }
    let failed = outcomes.iter().filter(|o| !o.mismatches.is_empty()).count();
    let against = server.describe().unwrap_or_else(|| run::redact(&url));
    if args.json {
        write_json(out, &folder, &against, &outcomes)?;
    } else {
        writeln!(
            out,
            "\n{} case run(s) ({} cases × evalsha, fcall; library {}) on {against}: {} passed, {failed} failed",
            outcomes.len(),
            outcomes.len() / 2,
            folder.library.name,
            outcomes.len() - failed,
        )?;
    }
    Ok(if failed == 0 { 0 } else { 1 })
}

/// `ok   evalsha session_touch: case name`, and for a failure where it is and each diff.
fn write_line(out: &mut dyn Write, o: &Outcome) -> std::io::Result<()> {
    let case = &o.fixture.cases[o.case];
    let status = if o.mismatches.is_empty() {
        "ok"
    } else {
        "FAIL"
    };
    writeln!(
        out,
        "{status:<4} {:<7} {}: {}",
        o.path.as_str(),
        o.fixture.script,
        case.name
    )?;
    if !o.mismatches.is_empty() {
        writeln!(
            out,
            "       at {}, case {}",
            o.fixture.path.display(),
            o.case + 1
        )?;
    }
    for m in &o.mismatches {
        writeln!(
            out,
            "       {}\n         expected: {}\n         got:      {}",
            m.path, m.expected, m.got
        )?;
        if let Some((expected, got)) = &m.whole {
            writeln!(
                out,
                "         in expected {expected}\n         in got      {got}"
            )?;
        }
    }
    Ok(())
}

fn write_json(
    out: &mut dyn Write,
    folder: &UserFolder,
    against: &str,
    outcomes: &[Outcome],
) -> anyhow::Result<()> {
    let runs: Vec<serde_json::Value> = outcomes
        .iter()
        .map(|o| {
            let mismatches: Vec<serde_json::Value> = o
                .mismatches
                .iter()
                .map(|m| serde_json::json!({"path": m.path, "expected": m.expected, "got": m.got}))
                .collect();
            serde_json::json!({
                "file": o.fixture.path.display().to_string(), "script": o.fixture.script,
                "case": o.fixture.cases[o.case].name, "path": o.path.as_str(),
                "ok": o.mismatches.is_empty(), "mismatches": mismatches,
            })
        })
        .collect();
    let failed = outcomes.iter().filter(|o| !o.mismatches.is_empty()).count();
    let doc = serde_json::json!({
        "library": folder.library.name, "server": against, "runs": runs,
        "passed": outcomes.len() - failed, "failed": failed,
    });
    writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
    Ok(())
}
