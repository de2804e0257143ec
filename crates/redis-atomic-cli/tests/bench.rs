//! `redis-atomic bench` on an embedded server, briefly: the report's shape and the one
//! property it measures that must hold exactly — one round trip per decision. (Throughput and
//! latency figures are for people; tests never assert timing.)
#![allow(clippy::unwrap_used)]

use redis_atomic_cli::bench::BENCHES;
use std::process::Command;

fn bench(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_redis-atomic"))
        .arg("bench")
        .args(args)
        .output()
        .unwrap()
}

/// Every primitive of the table is measured both ways; each decision is exactly one client
/// command on the server (library and raw alike); a record has a memory size.
#[test]
fn every_primitive_both_ways_one_round_trip() {
    let o = bench(&["--seconds", "0.3", "--concurrency", "8", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = doc["benches"].as_array().unwrap();
    assert_eq!(rows.len(), BENCHES.len());
    for (row, entry) in rows.iter().zip(BENCHES) {
        assert_eq!(row["primitive"], entry.name);
        for path in ["library", "raw"] {
            let p = &row[path];
            assert!(p["decisions"].as_u64().unwrap() > 0, "{row:#}");
            assert_eq!(p["round_trips_per_decision"], 1.0, "{}: {path}", entry.name);
            assert!(p["p99_us"].as_u64().unwrap() >= p["p50_us"].as_u64().unwrap());
        }
        assert!(row["ratio"].as_f64().unwrap() > 0.0);
        assert!(row["memory_bytes_per_record"].as_u64().unwrap() > 0);
    }
}

/// Unknown primitives and bad durations are errors (exit 2) with a message.
#[test]
fn bad_input_exits_2() {
    let o = bench(&["--only", "nope", "--seconds", "0.1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("lock"));
    assert_eq!(bench(&["--seconds", "0"]).status.code(), Some(2));
}
