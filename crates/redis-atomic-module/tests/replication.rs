//! Replication: a primary running the natives and a replica that does NOT load the module (so a
//! replicated native would fail there: only effects can arrive), its clock frozen 5 s ahead of
//! the primary's (so anything it recomputed with its own clock would differ). After a mix of
//! decisions every key holds the same value (`DUMP`) on both, and the same absolute expiry: the
//! replica's `PTTL` is the primary's less the 5 s (on Valkey, whose clock cannot be frozen, at
//! most that).

mod common;

use common::{freezable, server};
use redis::Value;
use redis_atomic_testkit::faults::replicate;
use redis_atomic_testkit::ClockShift;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const AHEAD_MS: i64 = 5_000;

/// Decisions covering every native's writing branches (allowed, refused with a new expiry, a
/// lease taken, re-taken, extended and released, a permit, a quota add, a claim, policies). The windowed
/// limits decide at `window` (a test clock 1 s into a minute), so their state outlives the
/// replica's 5 s lead whatever the real time.
fn decisions(window: &str) -> Vec<Vec<String>> {
    let rows: Vec<Vec<&str>> = vec![
        vec![
            "RATOMIC.RL_FIXED_WINDOW",
            "fw",
            "1",
            "3",
            "60000000",
            "1",
            window,
        ],
        vec!["RATOMIC.RL_GCRA", "gcra", "1", "3", "60000000", "2", window],
        vec!["RATOMIC.RL_ANCHORED_WINDOW", "aw", "1", "3", "60000"],
    ];
    let mut out: Vec<Vec<&str>> = (0..4).flat_map(|_| rows.clone()).collect();
    out.extend([
        vec!["SET", "persisted", "7"],
        vec!["RATOMIC.RL_ANCHORED_WINDOW", "persisted", "1", "3", "60000"],
        vec!["RATOMIC.LOCK_ACQUIRE", "lock", "fence", "t1", "30000"],
        vec!["RATOMIC.LOCK_ACQUIRE", "lock", "fence", "t1", "40000"],
        vec!["RATOMIC.LOCK_ACQUIRE", "lock2", "fence", "t2", "30000"],
        vec!["RATOMIC.LOCK_RELEASE", "lock2", "t2", ""],
        vec!["RATOMIC.LOCK_ACQUIRE", "lock3", "fence", "t3", "30000"],
        vec![
            "RATOMIC.SEM_ACQUIRE",
            "permits",
            "holders",
            "fence",
            "h1",
            "2",
            "30000",
        ],
        vec![
            "RATOMIC.SEM_ACQUIRE",
            "permits",
            "holders",
            "fence",
            "h2",
            "2",
            "40000",
        ],
        vec![
            "RATOMIC.QUOTA_ADD",
            "quota",
            "3",
            "0",
            "10",
            "refuse",
            "50000",
        ],
        vec!["RATOMIC.IDEM_BEGIN", "idem", "t1", "f1", "30000", "60000"],
    ]);
    // Policies: a fixed window and a sliding log with a request record (then its replay), an
    // anchored window (the server's clock), the entries form with a check-only limit.
    let policy = [
        "RATOMIC.RL_POLICY",
        "preq",
        "2",
        "p1",
        "p2",
        "1",
        "req1",
        "60000000",
        window,
        "fw",
        "3",
        "60000000",
        "1",
        "sl",
        "3",
        "60000000",
        "1",
    ];
    let anchored = [
        "RATOMIC.RL_POLICY",
        "preq2",
        "1",
        "p3",
        "1",
        "",
        "",
        "",
        "aw",
        "3",
        "60000000",
        "1",
    ];
    let entries = [
        "RATOMIC.RL_POLICY",
        "preq3",
        "2",
        "p4",
        "p5",
        "1",
        "",
        "",
        window,
        "tb",
        "3",
        "60000000",
        "2",
        "1",
        "h",
        "gcra",
        "3",
        "60000000",
        "2",
        "0",
        "s",
    ];
    out.extend([
        policy.to_vec(),
        policy.to_vec(),
        anchored.to_vec(),
        entries.to_vec(),
    ]);
    out.into_iter()
        .map(|row| row.into_iter().map(str::to_string).collect())
        .collect()
}

#[test]
fn a_replica_holds_the_primarys_state() {
    let primary = server(true, true);
    let replica = server(false, true);
    let at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970");
    let ahead = Duration::from_millis(AHEAD_MS as u64);
    let frozen = freezable(&primary);
    if frozen {
        primary.freeze_clock(Some(at)).expect("freeze");
        replica.freeze_clock(Some(at + ahead)).expect("freeze");
    } else {
        // Valkey's clock cannot be frozen: the replica's runs 5 s ahead instead.
        replica
            .set_clock_offset(ahead, ClockShift::Ahead)
            .expect("shift the replica's clock");
    }
    replicate(&replica, &primary).expect("replicate");
    let mut p = primary.client().get_connection().expect("connect");
    let mut fence = String::new();
    let minute = at.as_micros() / 60_000_000 * 60_000_000 + 1_000_000;
    for args in decisions(&minute.to_string()) {
        let mut cmd = redis::cmd(&args[0]);
        cmd.arg(&args[1..]);
        let reply: Value = cmd.query(&mut p).expect("a decision");
        if args[1] == "lock3" {
            if let Value::Array(items) = reply {
                fence = redis::from_redis_value(items[1].clone()).expect("a fence");
            }
        }
    }
    let extended: Value = redis::cmd("RATOMIC.LOCK_EXTEND")
        .arg(&["lock3", "t3", fence.as_str(), "50000"])
        .query(&mut p)
        .expect("extend");
    assert!(format!("{extended:?}").contains("extended"), "{extended:?}");
    let acked: i64 = redis::cmd("WAIT")
        .arg(1)
        .arg(5000)
        .query(&mut p)
        .expect("WAIT");
    assert_eq!(acked, 1);
    let mut r = replica.client().get_connection().expect("connect");
    let keys = [
        "fw",
        "gcra",
        "aw",
        "persisted",
        "lock",
        "lock2",
        "lock3",
        "fence",
        "permits",
        "holders",
        "quota",
        "idem",
        "preq",
        "p1",
        "p2",
        "p3",
        "p4",
    ];
    for key in keys {
        let dump = |c: &mut redis::Connection| -> Value {
            redis::cmd("DUMP").arg(key).query(c).expect("DUMP")
        };
        let pttl = |c: &mut redis::Connection| -> i64 {
            redis::cmd("PTTL").arg(key).query(c).expect("PTTL")
        };
        assert_eq!(dump(&mut p), dump(&mut r), "{key}");
        let (on_primary, on_replica) = (pttl(&mut p), pttl(&mut r));
        match key {
            "lock2" => assert_eq!((on_primary, on_replica), (-2, -2)),
            _ if frozen => assert_eq!(on_replica, on_primary - AHEAD_MS, "{key}: {on_primary}"),
            // Running clocks: read after the primary's, the replica's PTTL is at most the
            // primary's less 5 s only if the absolute expiry was replicated.
            _ => assert!(
                on_primary > 0 && on_replica <= on_primary - AHEAD_MS,
                "{key}: {on_primary} {on_replica}"
            ),
        }
    }
}
