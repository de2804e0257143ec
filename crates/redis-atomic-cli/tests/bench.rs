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

/// Every primitive of the table is measured both ways in every round; each decision is exactly
/// one client command on the server (library and raw alike); a record has a memory size.
#[test]
fn every_primitive_both_ways_one_round_trip() {
    let o = bench(&[
        "--seconds",
        "0.2",
        "--rounds",
        "2",
        "--concurrency",
        "8",
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["rounds"], 2);
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
        let rounds: Vec<f64> = serde_json::from_value(row["round_ratios"].clone()).unwrap();
        assert_eq!(rounds.len(), 2, "{}", entry.name);
        assert!(rounds.iter().all(|r| *r > 0.0), "{rounds:?}");
        assert_eq!(
            row["ratio_min"].as_f64(),
            rounds.iter().copied().reduce(f64::min)
        );
        assert_eq!(
            row["ratio_max"].as_f64(),
            rounds.iter().copied().reduce(f64::max)
        );
        assert!(row["memory_bytes_per_record"].as_u64().unwrap() > 0);
    }
}

/// Unknown primitives, bad durations and zero rounds are errors (exit 2) with a message.
#[test]
fn bad_input_exits_2() {
    let o = bench(&["--only", "nope", "--seconds", "0.1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("lock"));
    assert_eq!(bench(&["--seconds", "0"]).status.code(), Some(2));
    let o = bench(&["--rounds", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--rounds"));
}
