//! The real `redis-atomic` binary, driven as a user would.
#![allow(clippy::unwrap_used)]

use std::process::{Command, Output};

fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_redis-atomic"))
        .args(args)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// What a failing run said, for the assertion message.
fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `scripts list --json` lists every script with its header facts.
#[test]
fn scripts_list_json() {
    let o = cli(&["scripts", "list", "--json"]);
    assert!(o.status.success());
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let scripts = doc["scripts"].as_array().unwrap();
    assert_eq!(scripts.len(), redis_atomic::script::registry::ALL.len());
    let acquire = scripts
        .iter()
        .find(|s| s["name"] == "lock_acquire")
        .unwrap();
    assert_eq!(acquire["keys"], serde_json::json!(["lock", "fence"]));
    assert_eq!(acquire["retry"], "safe");
    assert_eq!(
        acquire["sha1"],
        redis_atomic::script::registry::LOCK_ACQUIRE.sha1
    );
    let table = stdout(&cli(&["scripts", "list"]));
    assert!(table.contains("lock_inspect") && table.contains("no-writes"));
}

/// `scripts show` prints the exact source Redis runs; an unknown name is a usage error.
#[test]
fn scripts_show() {
    let o = cli(&["scripts", "show", "lock_release"]);
    assert!(o.status.success());
    assert_eq!(
        stdout(&o),
        redis_atomic::script::registry::LOCK_RELEASE.source
    );
    let lib = cli(&["scripts", "show", "library"]);
    assert!(stdout(&lib).starts_with("#!lua name=redis_atomic_v"));
    let o = cli(&["scripts", "show", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("lock_acquire"));
}

/// `slot` prints CLUSTER KEYSLOT values; `--check-same` exits 1 across slots.
#[test]
fn slot_check_same() {
    let o = cli(&["slot", "--check-same", "a:{x}:1", "b:{x}:2"]);
    assert!(o.status.success());
    assert!(stdout(&o).contains(&redis_atomic::keys::slot(b"x").to_string()));
    assert_eq!(
        cli(&["slot", "--check-same", "{a}", "{b}"]).status.code(),
        Some(1)
    );
    assert_eq!(cli(&["slot", "foo"]).status.code(), Some(0));
    assert!(stdout(&cli(&["slot", "foo"])).contains("12182"));
}

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

/// Every fault of `faults` has a row per primitive, with work attempted and no violation, and
/// under every fault nearly every row has outcomes it could judge. A row may end with none when a
/// failover held its one slot for the whole second (seen once: quota, 64 calls, all unknown).
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
            if n(row, "operations") == 0 {
                unjudged.push(*p);
            }
        }
        assert!(
            unjudged.len() <= 1,
            "{fault}: nothing judged for {unjudged:?}"
        );
    }
}

/// `verify --cluster --faults` on an embedded 3+3 cluster: the clean rows and every cluster
/// fault (migration, failover, primary kill included) pass.
#[test]
fn verify_embedded_cluster_under_faults() {
    let o = cli(&[
        "verify",
        "--cluster",
        "--faults",
        "--seconds",
        "1",
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
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
            "primary-kill",
        ],
    );
}

/// `verify --faults` on the embedded server: every invariant holds through killed
/// connections, lost replies, stalls, script-cache flushes, crashes (SIGKILL on `appendfsync
/// always`: strict, nothing acknowledged may be lost) and a full memory (`noeviction`: refused
/// writes, nothing lost).
#[test]
fn verify_under_faults() {
    let o = cli(&["verify", "--faults", "--seconds", "1", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(doc["ok"], true);
    assert_fault_rows(
        &doc,
        &[
            "conn-kill",
            "lost-reply",
            "stall",
            "script-flush",
            "crash",
            "oom",
        ],
    );
}

/// Under faults the checks still catch a broken primitive: every row of a sabotaged run fails.
#[test]
fn verify_under_faults_detects_a_broken_primitive() {
    let o = cli(&[
        "verify",
        "--faults",
        "--sabotage",
        "--seconds",
        "1",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
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
/// request, decisively: many violations each (a clean run has none, `verify_embedded_json`).
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

/// Issue 15: errors print each cause once. Connecting to a closed port used to print
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

/// `scripts acl` prints a SETUSER line with the key pattern and the commands scripts call.
#[test]
fn scripts_acl() {
    let o = cli(&["scripts", "acl", "--namespace", "billing"]);
    assert!(o.status.success());
    let line = stdout(&o);
    assert!(
        line.starts_with("ACL SETUSER app on >PASSWORD resetkeys ~billing:* "),
        "{line}"
    );
    for cmd in ["+evalsha", "+fcall", "+get", "+set", "+pexpire", "+time"] {
        assert!(
            line.split_whitespace().any(|w| w == cmd),
            "{cmd} missing: {line}"
        );
    }
}

/// Issue 15: `scripts acl --namespace 'a*'` printed the widened pattern `~a*:*`, which grants the
/// keys of every namespace starting with `a`. A namespace with a glob character or whitespace is
/// now a one-line usage error (exit 2) and nothing is printed.
#[test]
fn scripts_acl_refuses_glob_namespaces() {
    for ns in ["a*", "a?", "a[bc]", "a\\b", "a b", ""] {
        let o = cli(&["scripts", "acl", "--namespace", ns]);
        assert_eq!(o.status.code(), Some(2), "{ns:?}");
        assert!(o.stdout.is_empty(), "{ns:?}: {}", stdout(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{ns:?}: {}", stderr(&o));
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
