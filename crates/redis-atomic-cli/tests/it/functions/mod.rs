//! `redis-atomic functions`, driven as an operator would, against real servers: a 2+2 cluster
//! that grows a shard after the deploy, and a standalone server holding conflicting code; user
//! libraries (`--library NAME --dir DIR`) in [`user`].

mod user;

use redis_atomic::script::registry::{LIBRARY_NAME, LIBRARY_SHA1, LIBRARY_SOURCE, LIBRARY_VERSION};
use redis_atomic_testkit::{ClusterOptions, RedisCluster, RedisServer, ServerOptions};
use serde_json::Value;
use std::process::Command;

/// Runs the binary with `--json`; returns the exit code and the parsed report.
fn functions(args: &[&str], url: &str, cluster: bool) -> (i32, Value) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_redis-atomic"));
    cmd.arg("functions")
        .args(args)
        .args(["--url", url, "--json"]);
    if cluster {
        cmd.arg("--cluster");
    }
    let o = cmd.output().unwrap();
    crate::exit_and_json(&o)
}

fn nodes(doc: &Value) -> &Vec<Value> {
    doc["nodes"].as_array().unwrap()
}

/// The versions loaded on each node, by address.
fn versions(doc: &Value) -> Vec<(String, Vec<u64>)> {
    nodes(doc)
        .iter()
        .map(|n| {
            let v = n["versions"].as_array().unwrap();
            (
                n["addr"].as_str().unwrap().to_string(),
                v.iter().map(|l| l["version"].as_u64().unwrap()).collect(),
            )
        })
        .collect()
}

fn query(url: &str, args: &[&str]) -> redis::RedisResult<Value> {
    let mut conn = redis::Client::open(url)?.get_connection()?;
    let mut cmd = redis::cmd(args[0]);
    cmd.arg(&args[1..]);
    let v: redis::Value = cmd.query(&mut conn)?;
    Ok(Value::String(format!("{v:?}")))
}

/// An older version of our library: same functions under `ra<old>_*`.
fn old_library(old: u32) -> String {
    LIBRARY_SOURCE
        .replace(LIBRARY_NAME, &format!("redis_atomic_v{old}"))
        .replace(&format!("'ra{LIBRARY_VERSION}_"), &format!("'ra{old}_"))
}

/// On a cluster: deploy loads every primary, keeps the older version, reaches replicas and is
/// idempotent; a primary added afterwards is flagged by status and diff and fixed by deploy;
/// rollback removes an old version everywhere and refuses the last one without --force.
#[test]
fn cluster_lifecycle_with_a_new_shard() {
    let mut cluster = RedisCluster::start(ClusterOptions {
        primaries: 2,
        replicas_per_primary: 1,
        ..ClusterOptions::default()
    })
    .unwrap();
    let any_node = cluster.urls()[0].clone();
    let old = LIBRARY_VERSION - 1;
    for url in cluster.primary_urls() {
        query(&url, &["FUNCTION", "LOAD", &old_library(old)]).unwrap();
    }
    let (code, before) = functions(&["status"], &any_node, true);
    assert_eq!(code, 1);
    assert_eq!(nodes(&before).len(), 4);
    assert!(nodes(&before).iter().all(|n| n["state"] == "missing"));

    let (code, plan) = functions(&["diff"], &any_node, true);
    assert_eq!(code, 1);
    let loads = nodes(&plan)
        .iter()
        .filter(|n| n["action"].as_str().unwrap().starts_with("would load"))
        .count();
    assert_eq!(loads, 2, "{plan:#}");

    let (code, deployed) = functions(&["deploy"], &any_node, true);
    assert_eq!(code, 0, "{deployed:#}");
    let both = vec![u64::from(old), u64::from(LIBRARY_VERSION)];
    assert!(
        versions(&deployed).iter().all(|(_, v)| *v == both),
        "{deployed:#}"
    );
    assert!(nodes(&deployed).iter().all(|n| n["state"] == "current"));
    let (code, again) = functions(&["deploy"], &any_node, true);
    assert_eq!(code, 0);
    let unchanged = nodes(&again)
        .iter()
        .filter(|n| n["action"] == "unchanged")
        .count();
    assert_eq!(unchanged, 2, "{again:#}");

    let added = cluster.add_primary().unwrap().url();
    let (code, status) = functions(&["status"], &any_node, true);
    assert_eq!(code, 1);
    let new_node = nodes(&status)
        .iter()
        .find(|n| added.ends_with(n["addr"].as_str().unwrap()))
        .unwrap();
    assert_eq!(
        (new_node["state"].as_str(), new_node["slots"].as_u64()),
        (Some("missing"), Some(0))
    );
    assert_eq!(
        nodes(&status)
            .iter()
            .filter(|n| n["state"] == "missing")
            .count(),
        1
    );
    let (_, plan) = functions(&["diff"], &any_node, true);
    let shard_note = nodes(&plan)
        .iter()
        .filter(|n| n["action"].as_str().unwrap().contains("new shard"))
        .count();
    assert_eq!(shard_note, 1, "{plan:#}");
    let (code, fixed) = functions(&["deploy"], &any_node, true);
    assert_eq!(code, 0, "{fixed:#}");
    assert!(nodes(&fixed).iter().all(|n| n["state"] == "current"));

    let (code, rolled) = functions(
        &["rollback", "--version", &old.to_string()],
        &any_node,
        true,
    );
    assert_eq!(code, 0, "{rolled:#}");
    let only_new = vec![u64::from(LIBRARY_VERSION)];
    assert!(
        versions(&rolled).iter().all(|(_, v)| *v == only_new),
        "{rolled:#}"
    );

    let current = LIBRARY_VERSION.to_string();
    let (code, refused) = functions(&["rollback", "--version", &current], &any_node, true);
    assert_eq!(code, 1);
    assert!(refused["problems"][0]
        .as_str()
        .unwrap()
        .contains("last redis-atomic library"));
    assert!(versions(&refused).iter().all(|(_, v)| *v == only_new));
    let (code, forced) = functions(
        &["rollback", "--version", &current, "--force"],
        &any_node,
        true,
    );
    assert_eq!(code, 0, "{forced:#}");
    assert!(
        versions(&forced).iter().all(|(_, v)| v.is_empty()),
        "{forced:#}"
    );
}

/// A different library under our name and version is never replaced: deploy refuses and
/// changes nothing, status says conflict, diff shows the differing lines.
#[test]
fn conflicting_code_is_refused() {
    let server = RedisServer::start(ServerOptions::default()).unwrap();
    let url = server.url();
    let impostor = format!(
        "#!lua name={LIBRARY_NAME}\nredis.register_function('ra{LIBRARY_VERSION}_x', function() return 1 end)\n"
    );
    query(&url, &["FUNCTION", "LOAD", &impostor]).unwrap();
    let (code, refused) = functions(&["deploy"], &url, false);
    assert_eq!(code, 1);
    assert!(
        refused["problems"][0]
            .as_str()
            .unwrap()
            .contains("refusing"),
        "{refused:#}"
    );
    let sha = nodes(&refused)[0]["versions"][0]["sha1"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(sha, LIBRARY_SHA1);
    let listed = query(&url, &["FUNCTION", "LIST", "WITHCODE"]).unwrap();
    assert!(listed.as_str().unwrap().contains("return 1"), "{listed}");
    let (code, status) = functions(&["status"], &url, false);
    assert_eq!(
        (code, nodes(&status)[0]["state"].as_str()),
        (1, Some("conflict"))
    );
    let (code, diff) = functions(&["diff"], &url, false);
    assert_eq!(code, 1);
    let lines = diff["diffs"][0]["lines"].as_array().unwrap();
    assert!(
        lines.iter().any(|l| l.as_str().unwrap().starts_with('-')),
        "{diff:#}"
    );
    assert!(lines.iter().any(|l| l.as_str().unwrap().starts_with('+')));
}

/// An unreachable server is an error (exit 2), not a report.
#[test]
fn unreachable_is_exit_2() {
    let o = Command::new(env!("CARGO_BIN_EXE_redis-atomic"))
        .args(["functions", "status", "--url", "redis://127.0.0.1:1"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("error"));
}
