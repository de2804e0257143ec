//! `redis-atomic verify` through the real binary: on the embedded server, sabotaged, with bad
//! flags, in a terminal; under faults ([`super::all_faults`]); and on a server it does not own
//! ([`super::verify_url`]).

use crate::{cli, stderr, stdout};
use std::process::Command;

/// `verify` on an embedded server: JSON shape, the lock's check passes with work done.
#[test]
fn verify_embedded_json() {
    let o = cli(&["verify", "--seconds", "1", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(doc["ok"], true);
    assert_eq!(doc["server"]["mode"], "standalone");
    let lock = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["primitive"] == "lock")
        .unwrap();
    assert!(lock["operations"].as_u64().unwrap() > 100);
    assert_eq!(lock["violations"], 0);
    assert_eq!(lock["status"], "ok");
    assert!(
        lock["availability"]["calls"].as_u64().unwrap() > 0,
        "{lock}"
    );
    assert!(lock["availability"]["refused_share"].is_number(), "{lock}");
    assert!(lock["availability"]["longest_outage_ms"].is_u64(), "{lock}");
    let queue = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["primitive"] == "queue")
        .unwrap();
    assert!(queue["operations"].as_u64().unwrap() > 100);
    assert_eq!(queue["violations"], 0);
    for (name, invariant) in [
        ("ratelimit-fw", "admitted ≤ limit per window"),
        (
            "ratelimit-aw",
            "admitted ≤ limit per window, windows by their ends",
        ),
        ("ratelimit-sl", "admitted ≤ limit in any period"),
        (
            "ratelimit-sw",
            "weighted two-window count ≤ limit at each admission",
        ),
        ("ratelimit-tb", "admitted in any t ≤ burst + t / interval"),
        ("ratelimit-gcra", "admitted in any t ≤ burst + t / interval"),
        ("quota", "counter stays within bounds"),
        (
            "cas",
            "final counter = committed increments (no lost update)",
        ),
        ("dedup", "exactly one caller sees each event first"),
    ] {
        let check = doc["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["primitive"] == name)
            .unwrap();
        assert_eq!(check["invariant"], invariant);
        assert!(check["operations"].as_u64().unwrap() > 100, "{name}");
        assert_eq!(check["violations"], 0, "{name}");
    }
}

/// The rows of a `verify --json` report.
pub(crate) fn checks(doc: &serde_json::Value) -> &Vec<serde_json::Value> {
    doc["checks"].as_array().unwrap()
}

/// The check can fail: with the lock bypassed it finds lost updates and overlaps, and exits 1.
#[test]
fn verify_detects_a_broken_lock() {
    let o = cli(&["verify", "--seconds", "1", "--sabotage"]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("VIOLATIONS FOUND"));
    let queue_line = stdout(&o)
        .lines()
        .find(|l| l.starts_with("queue "))
        .map(str::to_string)
        .unwrap();
    assert!(queue_line.ends_with("NO"), "{queue_line}");
}

/// Every limiter algorithm's row catches a limiter script that forgets the cost of every other
/// request, decisively: many violations each (a clean run has none, `verify_embedded_json`). A
/// sabotaged limiter row runs until its record shows 20 violations (bounded), so this holds on
/// a loaded machine too.
#[test]
fn verify_detects_a_broken_limiter_decisively() {
    let o = cli(&["verify", "--seconds", "1", "--sabotage", "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    for name in [
        "ratelimit-fw",
        "ratelimit-aw",
        "ratelimit-sl",
        "ratelimit-sw",
        "ratelimit-tb",
        "ratelimit-gcra",
    ] {
        let row = checks(&doc)
            .iter()
            .find(|c| c["primitive"] == name)
            .unwrap_or_else(|| panic!("no row {name}"));
        let violations = row["violations"].as_u64().unwrap();
        assert!(
            violations >= 20,
            "{name}: only {violations} violations: {row}"
        );
    }
}

/// Bad flags and unreachable servers are usage errors (exit 2) with a message, not panics.
#[test]
fn verify_bad_input() {
    let o = cli(&["verify", "--seconds", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--seconds"));
    let o = cli(&["verify", "--faults", "--url", "redis://127.0.0.1:1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--faults"));
    let o = cli(&["verify", "--url", "redis://127.0.0.1:1", "--seconds", "1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("error"));
}

/// Errors print each cause once. Connecting to a closed port used to print
/// `Connection refused (os error 111)` three times (our error's message, the `redis` error as
/// its source, the I/O error as that one's).
#[test]
fn connection_errors_name_their_cause_once() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("redis://127.0.0.1:{port}");
    for args in [
        vec!["verify", "--url", &url, "--seconds", "1"],
        vec!["bench", "--url", &url],
    ] {
        let o = cli(&args);
        let text = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {text}");
        assert_eq!(text.lines().count(), 1, "{args:?}: {text}");
        assert_eq!(
            text.matches("Connection refused").count(),
            1,
            "{args:?}: {text}"
        );
    }
}

/// In a terminal (progress bars drawn by their own thread) `verify` finishes: it once held the
/// stderr lock for the whole run and hung on the first progress tick. Runs under `script(1)`,
/// which gives the binary a pseudo-terminal; bounded at 120 s.
#[test]
fn verify_in_a_terminal_finishes() {
    let bin = env!("CARGO_BIN_EXE_redis-atomic");
    let log = std::env::temp_dir().join(format!("ra-tty-{}.log", std::process::id()));
    let mut child = Command::new("script")
        .arg("-qec")
        .arg(format!("{bin} verify --seconds 0.5 --concurrency 4"))
        .arg(&log)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("script(1) from util-linux/bsdutils");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("verify in a terminal did not finish within 120 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let out = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_file(&log);
    assert!(status.success(), "{out}");
    assert!(out.contains("all invariants held"), "{out}");
}

/// The server module asked for and not there, or refused by the server: one line, exit 2, no
/// report — never a run on the scripts. `--module` is for the embedded server only.
#[test]
fn verify_module_missing_or_refused() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let so = dir.path().join("libredis_atomic_module.so");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_redis-atomic"))
            .args(args)
            .env("REDIS_ATOMIC_MODULE", &so)
            .output()
            .expect("run the CLI")
    };
    let one_error_line = |o: &std::process::Output, words: &str| {
        assert_eq!(o.status.code(), Some(2), "{}", stderr(o));
        assert!(o.stdout.is_empty(), "{}", stdout(o));
        let err = stderr(o);
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.starts_with("error: ") && err.contains(words), "{err}");
    };
    // Not built: `--module` finds no file, and the variable alone names none.
    one_error_line(
        &run(&["verify", "--module", "--seconds", "0.2"]),
        "not found",
    );
    let path = so.display().to_string();
    one_error_line(&run(&["verify", "--seconds", "0.2"]), &path);
    // A file the server will not load: the server's own reason, on one line.
    std::fs::write(&so, b"not a module").expect("write");
    let refused = run(&["verify", "--module", "--seconds", "0.2"]);
    one_error_line(&refused, &format!("the server module {path}: "));
    let url = run(&["verify", "--module", "--url", "redis://127.0.0.1:1"]);
    one_error_line(&url, "--module");
}
