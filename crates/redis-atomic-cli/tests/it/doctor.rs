//! `redis-atomic doctor`, driven as an operator would, against real servers: the embedded
//! default, an evicting server, a durable one, a cluster, an unreachable URL; and `verify --url`
//! printing the doctor's failures first.

use crate::cli;
use redis_atomic_testkit::{Fsync, RedisCluster, RedisServer, ServerOptions};
use serde_json::Value;

/// `doctor --json` with `args`: exit code and report.
fn doctor(args: &[&str]) -> (i32, Value) {
    let o = cli(&[&["doctor", "--json"], args].concat());
    crate::exit_and_json(&o)
}

/// The statuses of `check`'s rows.
fn statuses<'a>(doc: &'a Value, check: &str) -> Vec<&'a str> {
    doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["check"] == check)
        .map(|r| r["status"].as_str().unwrap())
        .collect()
}

/// Without --url: the embedded server (and the output says so); no persistence fails (exit 1).
#[test]
fn embedded_server_says_so_and_fails_persistence() {
    let (code, doc) = doctor(&[]);
    assert_eq!(code, 1, "{doc:#}");
    assert_eq!(doc["target"]["embedded"], true);
    assert!(doc["target"]["what"].as_str().unwrap().contains("embedded"));
    assert_eq!(statuses(&doc, "persistence"), ["fail"]);
    assert_eq!(statuses(&doc, "maxmemory-policy"), ["ok"]);
    let table = String::from_utf8(cli(&["doctor"]).stdout).unwrap();
    assert!(table.contains("embedded redis-server"), "{table}");
    assert!(table.contains("NOT OK"), "{table}");
}

/// allkeys-lru with a memory limit fails maxmemory-policy, with the fix.
#[test]
fn evicting_server_fails_maxmemory_policy() {
    let server = RedisServer::start(ServerOptions {
        maxmemory: Some(100 << 20),
        maxmemory_policy: Some("allkeys-lru".into()),
        ..Default::default()
    })
    .unwrap();
    let (code, doc) = doctor(&["--url", &server.url()]);
    assert_eq!(code, 1);
    assert_eq!(doc["target"]["embedded"], false);
    let row = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == "maxmemory-policy")
        .unwrap();
    assert_eq!(row["status"], "fail");
    assert!(row["fix"].as_str().unwrap().contains("noeviction"), "{row}");
}

/// AOF with fsync always: nothing fails, so exit 0 (warnings such as "no replica" allowed).
#[test]
fn durable_server_exits_0() {
    let server = RedisServer::start(ServerOptions {
        appendonly: true,
        appendfsync: Some(Fsync::Always),
        ..Default::default()
    })
    .unwrap();
    let (code, doc) = doctor(&["--url", &server.url()]);
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(statuses(&doc, "replication"), ["warn"]);
}

/// With --cluster every node is audited (6), all slots served; primaries warn that replication
/// is asynchronous, replicas are linked.
#[test]
fn cluster_audits_every_node() {
    let cluster = RedisCluster::shared();
    let (code, doc) = doctor(&["--url", &cluster.urls()[0], "--cluster"]);
    assert_eq!(
        code, 1,
        "persistence is off on the testkit's nodes: {doc:#}"
    );
    assert_eq!(doc["target"]["nodes"], 6);
    assert_eq!(statuses(&doc, "cluster-slots"), ["ok"]);
    let rows = doc["rows"].as_array().unwrap();
    let slots = rows.iter().find(|r| r["check"] == "cluster-slots").unwrap();
    assert_eq!(slots["nodes"].as_array().unwrap().len(), 6);
    let mut replication = statuses(&doc, "replication");
    replication.sort();
    assert_eq!(replication, ["ok", "warn"]);
}

/// An unreachable server is a connection error: exit 2, one line.
#[test]
fn unreachable_exits_2() {
    let o = cli(&["doctor", "--url", "redis://127.0.0.1:1"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with("error:") && err.lines().count() == 1,
        "{err}"
    );
}

/// `verify --url` prints the doctor's failures before it runs.
#[test]
fn verify_url_prints_the_doctors_failures() {
    let server = RedisServer::shared();
    let o = cli(&[
        "verify",
        "--url",
        &server.url(),
        "--seconds",
        "0.2",
        "--concurrency",
        "2",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("doctor: persistence FAIL"), "{err}");
    assert_eq!(o.status.code(), Some(0), "{err}");
}
