//! `redis-atomic bench` on an embedded server, briefly: the report's shape and the properties it
//! measures that must hold exactly — one round trip per decision for every script path, and for
//! CAS exactly the commands its attempts send. (Throughput and latency figures are for people;
//! tests never assert timing.) A decision that fails on a loaded machine is counted, not the end
//! of the run: where a path had errors, its round trips are judged within what they allow.

use redis_atomic_cli::cmd::bench::BENCHES;
use serde_json::Value;
use std::process::Command;

const CONCURRENCY: u64 = 8;

fn bench(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_redis-atomic"))
        .arg("bench")
        .args(args)
        .output()
        .unwrap()
}

fn f64_of(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

/// A path's shape: decisions made, percentiles in order, errors counted.
fn check_path(name: &str, path: &str, p: &Value) {
    assert!(p["decisions"].as_u64().unwrap() > 0, "{name} {path}: {p:#}");
    assert!(p["p99_us"].as_u64().unwrap() >= p["p50_us"].as_u64().unwrap());
    assert!(f64_of(&p["server_cpu"]) >= 0.0, "{name} {path}");
    assert_eq!(
        p["errors"].as_u64() == Some(0),
        p.get("error").is_none(),
        "{p:#}"
    );
}

/// A path's client-sent commands per decision are `want`: exactly, when no decision failed;
/// otherwise at least the decisions' own, and at most one more per failed decision (a failed
/// one may or may not have reached the server) — unbounded for CAS, whose failed update may
/// have sent several attempts.
fn assert_round_trips(name: &str, path: &str, p: &Value, want: f64) {
    let got = f64_of(&p["round_trips_per_decision"]);
    let (n, errors) = (f64_of(&p["decisions"]), f64_of(&p["errors"]));
    if errors == 0.0 {
        assert!(
            (got - want).abs() < 1e-6,
            "{name} {path}: {got}, want {want}"
        );
        return;
    }
    let (calls, own) = (got * n, want * n);
    let most = if name.starts_with("cas-") {
        f64::INFINITY
    } else {
        own + errors
    };
    assert!(
        calls >= own - 1e-6 && calls <= most + 1e-6,
        "{name} {path}: {calls} calls for {n} decisions and {errors} errors: {p:#}"
    );
}

/// With batching (the default), the library path's decisions that queue up behind the calls in
/// flight leave together: 16 tasks on 4 call slots make fewer client commands than decisions,
/// while the raw path stays at one per decision.
#[test]
fn library_batches_what_queues() {
    let o = bench(&[
        "--only",
        "ratelimit-aw",
        "--seconds",
        "0.2",
        "--rounds",
        "2",
        "--concurrency",
        "16",
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["batching"], true);
    let row = &doc["benches"][0];
    let lib = &row["library"];
    check_path("ratelimit-aw", "library", lib);
    assert_eq!(lib["errors"], 0, "{lib:#}");
    let rt = f64_of(&lib["round_trips_per_decision"]);
    assert!(rt > 0.0 && rt < 1.0, "library: {rt} commands per decision");
    assert_round_trips("ratelimit-aw", "raw", &row["raw"], 1.0);
}

/// CAS commands per decision, from the decisions, aborts and give-ups the report counts: a
/// committed attempt executes WATCH, GET, MULTI, SET and EXEC; an aborted one all but the SET
/// (queued, never executed, so not in commandstats).
fn cas_commands_per_decision(p: &Value) -> f64 {
    let (n, gave_up) = (f64_of(&p["decisions"]), f64_of(&p["gave_up"]));
    let rate = f64_of(&p["abort_rate"]);
    let commits = n - gave_up;
    let aborted = rate * commits / (1.0 - rate);
    (5.0 * commits + 4.0 * aborted) / n
}

/// Every entry of the table is measured both ways in every round; without batching, each
/// script decision is exactly one client command on the server (library, raw and reference
/// alike); CAS sends exactly its attempts' commands; a record has a memory size.
#[test]
fn every_entry_both_ways_one_round_trip() {
    let o = bench(&[
        "--no-batching",
        "--seconds",
        "0.2",
        "--rounds",
        "2",
        "--concurrency",
        &CONCURRENCY.to_string(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["rounds"], 2);
    let rows = doc["benches"].as_array().unwrap();
    assert_eq!(rows.len(), BENCHES.len());
    for (row, entry) in rows.iter().zip(BENCHES) {
        let name = entry.name;
        assert_eq!(row["primitive"], name);
        let tasks = entry.tasks.map_or(CONCURRENCY, |n| n as u64);
        assert_eq!(row["tasks"].as_u64(), Some(tasks), "{name}");
        for path in ["library", "raw"] {
            check_path(name, path, &row[path]);
        }
        assert_round_trips(name, "raw", &row["raw"], 1.0);
        let lib = &row["library"];
        let want = if name.starts_with("cas-") {
            cas_commands_per_decision(lib)
        } else {
            assert_eq!(lib["abort_rate"], 0.0, "{name}");
            1.0
        };
        assert_round_trips(name, "library", lib, want);
        if let Some(reference) = row["reference"].as_object() {
            check_path(name, "reference", &reference["stats"]);
            assert_round_trips(name, "reference", &reference["stats"], 1.0);
            assert!(f64_of(&reference["server_us_ratio"]) > 0.0, "{name}");
        }
        assert!(f64_of(&row["ratio"]) > 0.0);
        let rounds: Vec<f64> = serde_json::from_value(row["round_ratios"].clone()).unwrap();
        assert_eq!(rounds.len(), 2, "{name}");
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
    let references: Vec<&str> = rows
        .iter()
        .filter(|r| r["reference"].is_object())
        .map(|r| r["primitive"].as_str().unwrap())
        .collect();
    assert_eq!(
        references,
        [
            "lock",
            "ratelimit",
            "ratelimit-fw",
            "ratelimit-aw",
            "ratelimit-sl",
            "ratelimit-sw",
            "ratelimit-tb"
        ]
    );
}

/// `--identities N` (what tools/peer-bench.py passes): the rate-limit paths run on identities
/// drawn from N, the report says N; 0 is an error.
#[test]
fn identities_spread_rate_limit_decisions() {
    let o = bench(&[
        "--only",
        "ratelimit-fw",
        "--identities",
        "5",
        "--seconds",
        "0.2",
        "--rounds",
        "1",
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["identities"], 5);
    let row = &doc["benches"][0];
    for path in ["library", "raw"] {
        check_path("ratelimit-fw", path, &row[path]);
    }
    check_path("ratelimit-fw", "reference", &row["reference"]["stats"]);
    let o = bench(&["--identities", "0", "--seconds", "0.1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--identities"));
}

/// Unknown entries, bad durations and zero rounds are errors (exit 2) with a message.
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

/// `--help` lists every entry.
#[test]
fn help_lists_every_entry() {
    let o = bench(&["--help"]);
    assert!(o.status.success());
    let help = String::from_utf8_lossy(&o.stdout);
    for entry in BENCHES {
        assert!(
            help.contains(entry.name),
            "{} missing from --help",
            entry.name
        );
    }
}

/// A bench against a server whose every script reply is corrupted on the way (the testkit's
/// proxy): no decision can be made, and the run still ends with its report (exit 0), every
/// path reported as failing, with its errors counted and the first described.
#[test]
fn a_path_that_only_errs_is_reported_as_such() {
    use redis_atomic_testkit::{Fault, FaultProxy, RedisServer, ServerOptions};
    let server = RedisServer::start(ServerOptions::default()).unwrap();
    let proxy = FaultProxy::start(server.addr().unwrap()).unwrap();
    proxy.set(Fault::CorruptReplies {
        percent: 100,
        seed: 3,
    });
    let url = proxy.url();
    let args = [
        "--url",
        &url,
        "--only",
        "lock",
        "--seconds",
        "0.2",
        "--rounds",
        "1",
    ];
    let o = bench(&[&args[..], &["--concurrency", "2", "--json"]].concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let row = &doc["benches"][0];
    for path in [&row["library"], &row["raw"], &row["reference"]["stats"]] {
        assert_eq!(path["decisions"], 0, "{path:#}");
        assert!(path["errors"].as_u64().unwrap() > 0, "{path:#}");
        assert!(path["error"].is_string(), "{path:#}");
    }
    assert!(proxy.stats().replies_corrupted > 0);
    let o = bench(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("library: every decision failed"), "{table}");
    assert!(table.contains("raw: every decision failed"), "{table}");
}
