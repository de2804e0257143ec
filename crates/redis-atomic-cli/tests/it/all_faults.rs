//! `redis-atomic verify --faults` through the real binary: the standalone, cluster and sabotaged
//! fault matrices, the longest test of this binary (minutes). Named to sort first: the test
//! harness starts tests in name order, so this one starts at once and the rest of the binary
//! runs beside it on the other thread, instead of it starting last and running alone.

use crate::verify::checks;
use crate::{cli, stderr, stdout};
use std::process::Output;

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

/// Why a matrix that should have passed did not: its exit code, stderr, and every row of its
/// document that is not `ok` or saw a violation (the whole stdout when it is no JSON).
fn failed(o: &Output) -> String {
    let rows = match serde_json::from_str::<serde_json::Value>(&stdout(o)) {
        Ok(doc) => checks(&doc)
            .iter()
            .filter(|c| c["status"] != "ok" || c["violations"] != 0)
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join("\n"),
        Err(_) => stdout(o),
    };
    format!(
        "exit {:?}\nstderr: {}\nrows:\n{rows}",
        o.status.code(),
        stderr(o)
    )
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
    assert!(o.status.success(), "{}", failed(o));
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
    assert!(o.status.success(), "{}", failed(o));
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
