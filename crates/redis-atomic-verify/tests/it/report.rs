//! The report's bytes: the table and the JSON `redis-atomic verify` prints, exactly, so scripts
//! that read them keep working.

use redis_atomic_verify::{Availability, CheckReport, Report, ServerInfo, Status};

fn server() -> ServerInfo {
    ServerInfo {
        version: "7.2.4".into(),
        mode: "standalone".into(),
        module: None,
    }
}

/// A clean run: one line per primitive, then "all invariants held"; JSON without examples.
#[test]
fn clean_table_and_json() {
    let report = Report::new(
        server(),
        vec![CheckReport::new(
            "lock",
            "one holder at a time; fences strictly increase",
            1234,
            0,
        )],
    );
    let mut table = Vec::new();
    report.write_table(&mut table).unwrap();
    assert_eq!(
        String::from_utf8(table).unwrap(),
        "redis-atomic verify: Redis 7.2.4 (standalone); decisions: scripts\n\
         primitive      invariant                                                      operations  unknown  refused refused% outage ms unserved ms violations  ok\n\
         lock           one holder at a time; fences strictly increase                       1234        0        0     0.0%         0           0          0  yes\n\
         all invariants held\n"
    );
    let mut json = Vec::new();
    report.write_json(&mut json).unwrap();
    assert_eq!(
        String::from_utf8(json).unwrap(),
        "{\"ok\":true,\"server\":{\"version\":\"7.2.4\",\"mode\":\"standalone\"},\"checks\":[\
         {\"primitive\":\"lock\",\"invariant\":\"one holder at a time; fences strictly increase\",\
         \"operations\":1234,\"violations\":0,\"fault\":\"none\",\"unknown\":0,\"ok\":true,\
         \"status\":\"ok\",\"availability\":{\"calls\":0,\"refused\":0,\"refused_share\":0.0,\
         \"longest_outage_ms\":0,\"longest_unserved_ms\":0}}]}\n"
    );
}

/// A row under a fault adds the fault column, a `corrupt-reply` row the corrupted column; a
/// violation's examples and an error's reason follow the table; the last line says so.
#[test]
fn faulted_table_with_violations_and_errors() {
    let mut row = CheckReport::new("queue", "each job acked once", 10, 2);
    row.fault = "crash".into();
    row.unknown = 3;
    row.examples = vec!["job 7 acked twice".into()];
    let mut availability = Availability::default();
    availability.calls = 40;
    availability.refused = 10;
    availability.refused_share = 0.25;
    availability.longest_outage_ms = 1234;
    availability.longest_unserved_ms = 2345;
    row.availability = availability;
    let mut corrupt = CheckReport::failed("lock", "one holder", "no TIME reply".into());
    corrupt.fault = "corrupt-reply".into();
    corrupt.corrupted_replies = Some(17);
    let report = Report::new(server(), vec![row, corrupt]);
    let mut table = Vec::new();
    report.write_table(&mut table).unwrap();
    assert_eq!(
        String::from_utf8(table).unwrap(),
        "redis-atomic verify: Redis 7.2.4 (standalone); decisions: scripts\n\
         primitive      fault         invariant                                                      operations  unknown  refused refused% outage ms unserved ms corrupted violations  ok\n\
         queue          crash         each job acked once                                                    10        3       10    25.0%      1234        2345         -          2  NO\n\
         lock           corrupt-reply one holder                                                              0        0        0     0.0%         0           0        17          0  ERROR\n  \
         queue (crash): job 7 acked twice\n  \
         lock (corrupt-reply): could not run: no TIME reply\n\
         VIOLATIONS FOUND; 1 CHECK(S) COULD NOT RUN\n"
    );
    assert!(!report.ok);
    let mut json = Vec::new();
    report.write_json(&mut json).unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let lock = &doc["checks"][1];
    assert_eq!(lock["status"], "error");
    assert_eq!(lock["error"], "no TIME reply");
    assert_eq!(lock["corrupted_replies"], 17);
    assert_eq!(doc["checks"][0]["status"], "violations");
    assert_eq!(doc["checks"][0]["availability"]["longest_outage_ms"], 1234);
    assert!(doc["checks"][0].get("corrupted_replies").is_none());
    assert_eq!(report.checks[1].status, Status::Error);
}
