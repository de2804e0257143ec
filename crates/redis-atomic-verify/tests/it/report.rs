//! The report's bytes: the table and the JSON `redis-atomic verify` prints, exactly, so scripts
//! that read them keep working.

use redis_atomic_verify::{CheckReport, Report, ServerInfo};

fn server() -> ServerInfo {
    ServerInfo {
        version: "7.2.4".into(),
        mode: "standalone".into(),
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
        "redis-atomic verify: Redis 7.2.4 (standalone)\n\
         primitive      invariant                                                      operations violations  ok\n\
         lock           one holder at a time; fences strictly increase                       1234          0  yes\n\
         all invariants held\n"
    );
    let mut json = Vec::new();
    report.write_json(&mut json).unwrap();
    assert_eq!(
        String::from_utf8(json).unwrap(),
        "{\"ok\":true,\"server\":{\"version\":\"7.2.4\",\"mode\":\"standalone\"},\"checks\":[\
         {\"primitive\":\"lock\",\"invariant\":\"one holder at a time; fences strictly increase\",\
         \"operations\":1234,\"violations\":0,\"fault\":\"none\",\"unknown\":0,\"ok\":true}]}\n"
    );
}

/// A row under a fault adds the fault and unknown columns; a violation's examples follow the
/// table; the last line says so.
#[test]
fn faulted_table_with_violations() {
    let mut row = CheckReport::new("queue", "each job acked once", 10, 2);
    row.fault = "crash".into();
    row.unknown = 3;
    row.examples = vec!["job 7 acked twice".into()];
    let report = Report::new(server(), vec![row]);
    let mut table = Vec::new();
    report.write_table(&mut table).unwrap();
    assert_eq!(
        String::from_utf8(table).unwrap(),
        "redis-atomic verify: Redis 7.2.4 (standalone)\n\
         primitive      fault         invariant                                                      operations  unknown violations  ok\n\
         queue          crash         each job acked once                                                    10        3          2  NO\n  \
         queue (crash): job 7 acked twice\n\
         VIOLATIONS FOUND\n"
    );
    assert!(!report.ok);
}
