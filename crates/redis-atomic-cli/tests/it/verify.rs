//! `redis-atomic verify` through the real binary: on the embedded server and cluster, under
//! faults, sabotaged (every row must fail), with bad flags, in a terminal; and on a server it
//! does not own ([`super::verify_url`]).

use crate::{cli, stderr, stdout};
use std::process::{Command, Output};

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

fn checks(doc: &serde_json::Value) -> &Vec<serde_json::Value> {
    doc["checks"].as_array().unwrap()
}

/// Every fault of `faults` has a row per primitive, with work attempted and no violation (status
/// `ok`: no row could not run), and under every fault nearly every row has outcomes it could
/// judge. A row may end with none when a failover held its one slot for the whole second (seen
/// once: quota, 64 calls, all unknown). Every row says how available its primitive was; the
/// `corrupt-reply` rows how many replies were corrupted, some at least.
fn assert_fault_rows(doc: &serde_json::Value, faults: &[&str]) {
    let primitives: Vec<&str> = checks(doc)
        .iter()
        .filter(|c| c["fault"] == "none")
        .map(|c| c["primitive"].as_str().unwrap())
        .collect();
    assert!(primitives.contains(&"lock"), "{primitives:?}");
    let n = |row: &serde_json::Value, field: &str| row[field].as_u64().unwrap();
    for fault in faults {
        let mut unjudged = Vec::new();
        for p in &primitives {
            let row = checks(doc)
                .iter()
                .find(|c| c["fault"] == *fault && c["primitive"] == *p)
                .unwrap_or_else(|| panic!("no row for {p} under {fault}"));
            assert!(n(row, "operations") + n(row, "unknown") > 0, "{row}");
            assert_eq!(row["violations"], 0, "{row}");
            assert_eq!(row["status"], "ok", "{row}");
            let a = &row["availability"];
            assert!(n(a, "refused") <= n(a, "calls"), "{row}");
            if n(row, "operations") == 0 {
                unjudged.push(*p);
            }
        }
        assert!(
            unjudged.len() <= 1,
            "{fault}: nothing judged for {unjudged:?}"
        );
    }
    let corrupted: u64 = checks(doc)
        .iter()
        .filter(|c| c["fault"] == "corrupt-reply")
        .map(|c| n(c, "corrupted_replies"))
        .sum();
    assert!(corrupted > 0, "no reply corrupted under corrupt-reply");
}

/// The three fault matrices, each a `verify --faults` process of its own, run at the same time:
/// each row lasts its `--seconds` whatever the load, so together they take about as long as the
/// longest one (the cluster's), not the sum (the test harness would run them two at a time).
/// Every matrix is judged exactly as when it ran alone: [`assert_cluster_matrix`],
/// [`assert_standalone_matrix`], [`assert_sabotaged_matrix`].
#[test]
fn verify_fault_matrices() {
    let runs: [&[&str]; 3] = [
        &[
            "verify",
            "--cluster",
            "--faults",
            "--seconds",
            "1",
            "--json",
        ],
        &["verify", "--faults", "--seconds", "1", "--json"],
        &[
            "verify",
            "--faults",
            "--sabotage",
            "--seconds",
            "1",
            "--json",
        ],
    ];
    let [cluster, standalone, sabotaged] = std::thread::scope(|s| {
        let handles = runs.map(|args| s.spawn(move || cli(args)));
        handles.map(|h| h.join().unwrap())
    });
    assert_cluster_matrix(&cluster);
    assert_standalone_matrix(&standalone);
    assert_sabotaged_matrix(&sabotaged);
}

/// `verify --cluster --faults` on an embedded 3+3 cluster: the clean rows and every cluster
/// fault (migration, failover, corrupted replies behind a proxy per node, primary kill
/// included) pass.
fn assert_cluster_matrix(o: &Output) {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: serde_json::Value = serde_json::from_str(&stdout(o)).unwrap();
    assert_eq!(doc["server"]["mode"], "cluster");
    assert_ne!(doc["server"]["version"], "unknown");
    assert_eq!(doc["ok"], true);
    assert_fault_rows(
        &doc,
        &[
            "conn-kill",
            "stall",
            "script-flush",
            "slot-migrate",
            "failover",
            "corrupt-reply",
            "primary-kill",
        ],
    );
}

/// `verify --faults` on the embedded server: every invariant holds through killed
/// connections, lost replies, corrupted replies (a hostile proxy), stalls, script-cache
/// flushes, crashes (SIGKILL on `appendfsync always`: strict, nothing acknowledged may be lost)
/// and a full memory (`noeviction`: refused writes, nothing lost).
fn assert_standalone_matrix(o: &Output) {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: serde_json::Value = serde_json::from_str(&stdout(o)).unwrap();
    assert_eq!(doc["ok"], true);
    assert_fault_rows(
        &doc,
        &[
            "conn-kill",
            "lost-reply",
            "corrupt-reply",
            "stall",
            "script-flush",
            "crash",
            "oom",
        ],
    );
}

/// Under faults the checks still catch a broken primitive: every row of a sabotaged run fails.
/// However loaded the machine: each sabotage's race is held open by a condition (a read waits
/// for another task's read), and a sabotaged limiter runs with a period longer than the run
/// until its record shows the over-admission (a row once made 87 decisions under `conn-kill`
/// on a loaded machine, none of them over-admitted, with the 200 ms period).
fn assert_sabotaged_matrix(o: &Output) {
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(o), stderr(o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(o)).unwrap();
    for row in checks(&doc) {
        assert!(row["violations"].as_u64().unwrap() > 0, "{row}");
    }
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
