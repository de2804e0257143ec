//! `redis-atomic functions`, driven as an operator would, against real servers: a 2+2 cluster
//! that grows a shard after the deploy, and a standalone server holding conflicting code.
#![allow(clippy::unwrap_used)]

use redis_atomic::script::registry::{LIBRARY_NAME, LIBRARY_SHA1, LIBRARY_SOURCE, LIBRARY_VERSION};
use redis_atomic_testkit::{ClusterOptions, RedisCluster, RedisServer, ServerOptions};
use serde_json::Value;
use std::path::Path;
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
    let doc = serde_json::from_slice(&o.stdout).unwrap_or_else(|_| {
        panic!(
            "stdout {} stderr {}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    });
    (o.status.code().unwrap(), doc)
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
    let seed = cluster.urls()[0].clone();
    let old = LIBRARY_VERSION - 1;
    for url in cluster.primary_urls() {
        query(&url, &["FUNCTION", "LOAD", &old_library(old)]).unwrap();
    }
    let (code, before) = functions(&["status"], &seed, true);
    assert_eq!(code, 1);
    assert_eq!(nodes(&before).len(), 4);
    assert!(nodes(&before).iter().all(|n| n["state"] == "missing"));

    let (code, plan) = functions(&["diff"], &seed, true);
    assert_eq!(code, 1);
    let loads = nodes(&plan)
        .iter()
        .filter(|n| n["action"].as_str().unwrap().starts_with("would load"))
        .count();
    assert_eq!(loads, 2, "{plan:#}");

    let (code, deployed) = functions(&["deploy"], &seed, true);
    assert_eq!(code, 0, "{deployed:#}");
    let both = vec![u64::from(old), u64::from(LIBRARY_VERSION)];
    assert!(
        versions(&deployed).iter().all(|(_, v)| *v == both),
        "{deployed:#}"
    );
    assert!(nodes(&deployed).iter().all(|n| n["state"] == "current"));
    let (code, again) = functions(&["deploy"], &seed, true);
    assert_eq!(code, 0);
    let unchanged = nodes(&again)
        .iter()
        .filter(|n| n["action"] == "unchanged")
        .count();
    assert_eq!(unchanged, 2, "{again:#}");

    let added = cluster.add_primary().unwrap().url();
    let (code, status) = functions(&["status"], &seed, true);
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
    let (_, plan) = functions(&["diff"], &seed, true);
    let shard_note = nodes(&plan)
        .iter()
        .filter(|n| n["action"].as_str().unwrap().contains("new shard"))
        .count();
    assert_eq!(shard_note, 1, "{plan:#}");
    let (code, fixed) = functions(&["deploy"], &seed, true);
    assert_eq!(code, 0, "{fixed:#}");
    assert!(nodes(&fixed).iter().all(|n| n["state"] == "current"));

    let (code, rolled) = functions(&["rollback", "--version", &old.to_string()], &seed, true);
    assert_eq!(code, 0, "{rolled:#}");
    let only_new = vec![u64::from(LIBRARY_VERSION)];
    assert!(
        versions(&rolled).iter().all(|(_, v)| *v == only_new),
        "{rolled:#}"
    );

    let current = LIBRARY_VERSION.to_string();
    let (code, refused) = functions(&["rollback", "--version", &current], &seed, true);
    assert_eq!(code, 1);
    assert!(refused["problems"][0]
        .as_str()
        .unwrap()
        .contains("last redis-atomic library"));
    assert!(versions(&refused).iter().all(|(_, v)| *v == only_new));
    let (code, forced) = functions(&["rollback", "--version", &current, "--force"], &seed, true);
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

// ---- user libraries: `--library NAME --dir DIR` --------------------------------------------

/// The user-script fixture folder (shared with the library's tests).
const USER_LIB: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../redis-atomic/tests/fixtures/user-lib"
);

/// One standalone server for the user-library tests of this binary (each uses its own NAME).
fn shared_server() -> &'static RedisServer {
    RedisServer::shared()
}

/// A copy of the fixture folder whose `library.version` is `version`.
fn user_folder(version: u32) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(USER_LIB);
    std::fs::create_dir(dir.path().join("include")).unwrap();
    for sub in ["", "include"] {
        for entry in std::fs::read_dir(src.join(sub)).unwrap() {
            let path = entry.unwrap().path();
            if path.is_file() {
                let to = dir.path().join(sub).join(path.file_name().unwrap());
                std::fs::copy(&path, to).unwrap();
            }
        }
    }
    std::fs::write(dir.path().join("library.version"), version.to_string()).unwrap();
    dir
}

/// `functions VERB --library NAME --dir DIR ...`.
fn user(verb: &[&str], name: &str, dir: &Path, url: &str, cluster: bool) -> (i32, Value) {
    let mut args = verb.to_vec();
    let dir = dir.to_str().unwrap();
    args.extend(["--library", name, "--dir", dir]);
    functions(&args, url, cluster)
}

/// Every library name on the node at `url`.
fn libraries(url: &str) -> Vec<String> {
    let mut conn = redis::Client::open(url).unwrap().get_connection().unwrap();
    let list: Vec<Vec<redis::Value>> = redis::cmd("FUNCTION").arg("LIST").query(&mut conn).unwrap();
    let mut names: Vec<String> = list
        .iter()
        .map(|lib| redis::from_redis_value_ref(&lib[1]).unwrap())
        .collect();
    names.sort();
    names
}

/// A user library on the shared 3+3 cluster: deployed to every node beside the built-in
/// library, its next version deployed beside it, a primary that lost it (as a new shard would)
/// found by status and fixed by deploy, the old version rolled back everywhere while the new one
/// and `redis_atomic_v<N>` stay, and a version never loaded refused.
#[test]
fn user_library_lifecycle_on_the_cluster() {
    let cluster = RedisCluster::shared();
    let seed = cluster.urls()[0].clone();
    let (v1, v2) = (user_folder(1), user_folder(2));
    let (code, builtin) = functions(&["deploy"], &seed, true);
    assert_eq!(code, 0, "{builtin:#}");
    let (code, before) = user(&["status"], "shop", v1.path(), &seed, true);
    assert_eq!(code, 1);
    assert!(nodes(&before).iter().all(|n| n["state"] == "missing"));
    assert_eq!(before["library"]["name"], "shop_v1");

    let (code, deployed) = user(&["deploy"], "shop", v1.path(), &seed, true);
    assert_eq!(code, 0, "{deployed:#}");
    assert_eq!(nodes(&deployed).len(), 6);
    let (code, deployed) = user(&["deploy"], "shop", v2.path(), &seed, true);
    assert_eq!(code, 0, "{deployed:#}");
    assert!(
        versions(&deployed).iter().all(|(_, v)| *v == [1, 2]),
        "{deployed:#}"
    );
    let ours = LIBRARY_NAME.to_string();
    for url in cluster.urls() {
        let libs = libraries(&url);
        assert!(
            libs.contains(&ours) && libs.contains(&"shop_v1".into()),
            "{url}: {libs:?}"
        );
    }

    let lost = &cluster.primary_urls()[1];
    query(lost, &["FUNCTION", "DELETE", "shop_v2"]).unwrap();
    let (code, status) = user(&["status"], "shop", v2.path(), &seed, true);
    assert_eq!(code, 1);
    let missing: Vec<&str> = nodes(&status)
        .iter()
        .filter(|n| n["state"] == "missing" && n["role"] == "primary")
        .map(|n| n["addr"].as_str().unwrap())
        .collect();
    assert!(
        matches!(&missing[..], [addr] if lost.ends_with(addr)),
        "{status:#}"
    );
    let (code, fixed) = user(&["deploy"], "shop", v2.path(), &seed, true);
    assert_eq!(code, 0, "{fixed:#}");
    assert!(nodes(&fixed).iter().all(|n| n["state"] == "current"));

    let (code, rolled) = user(
        &["rollback", "--version", "1"],
        "shop",
        v2.path(),
        &seed,
        true,
    );
    assert_eq!(code, 0, "{rolled:#}");
    assert!(
        versions(&rolled).iter().all(|(_, v)| *v == [2]),
        "{rolled:#}"
    );
    for url in cluster.urls() {
        let libs = libraries(&url);
        assert!(
            libs.contains(&ours) && !libs.contains(&"shop_v1".into()),
            "{url}: {libs:?}"
        );
    }
    let (code, unknown) = user(
        &["rollback", "--version", "999"],
        "shop",
        v2.path(),
        &seed,
        true,
    );
    assert_eq!(code, 1);
    assert!(
        unknown["problems"][0]
            .as_str()
            .unwrap()
            .contains("version 999 is not loaded on any primary"),
        "{unknown:#}"
    );
}

/// On a standalone server: a user library deploys and is current; a function name another
/// library owns is refused naming the function and its owner, for a user library and for the
/// built-in one alike, and nothing is loaded; rolling back a version never loaded fails.
#[test]
fn collisions_are_refused_naming_the_owner() {
    let url = shared_server().url();
    let v1 = user_folder(1);
    let (code, deployed) = user(&["deploy"], "crm", v1.path(), &url, false);
    assert_eq!(code, 0, "{deployed:#}");
    let (code, status) = user(&["status"], "crm", v1.path(), &url, false);
    assert_eq!(
        (code, nodes(&status)[0]["state"].as_str()),
        (0, Some("current"))
    );

    let squatter = "#!lua name=squatter\nredis.register_function('crm2_session_touch', function() return 1 end)\n";
    query(&url, &["FUNCTION", "LOAD", squatter]).unwrap();
    let v2 = user_folder(2);
    let (code, refused) = user(&["deploy"], "crm", v2.path(), &url, false);
    assert_eq!(code, 1, "{refused:#}");
    let problem = refused["problems"][0].as_str().unwrap();
    assert!(
        problem.contains("function crm2_session_touch already belongs to library squatter"),
        "{refused:#}"
    );
    assert_eq!(nodes(&refused)[0]["state"], "collision");
    assert!(!libraries(&url).contains(&"crm_v2".to_string()));
    let (code, plan) = user(&["diff"], "crm", v2.path(), &url, false);
    assert_eq!(code, 1);
    assert!(nodes(&plan)[0]["action"]
        .as_str()
        .unwrap()
        .starts_with("COLLISION"));

    let builtin_squatter = format!(
        "#!lua name=builtin_squatter\nredis.register_function('ra{LIBRARY_VERSION}_lock_acquire', function() return 1 end)\n"
    );
    query(&url, &["FUNCTION", "LOAD", &builtin_squatter]).unwrap();
    let (code, refused) = functions(&["deploy"], &url, false);
    assert_eq!(code, 1, "{refused:#}");
    let expected = format!(
        "function ra{LIBRARY_VERSION}_lock_acquire already belongs to library builtin_squatter"
    );
    assert!(
        refused["problems"][0].as_str().unwrap().contains(&expected),
        "{refused:#}"
    );
    assert!(!libraries(&url).contains(&LIBRARY_NAME.to_string()));

    for (name, folder) in [("crm", Some(v1.path())), ("", None)] {
        let (code, unknown) = match folder {
            Some(dir) => user(&["rollback", "--version", "999"], name, dir, &url, false),
            None => functions(&["rollback", "--version", "999"], &url, false),
        };
        assert_eq!(code, 1, "{unknown:#}");
        let problem = unknown["problems"][0].as_str().unwrap();
        assert!(
            problem.contains("version 999 is not loaded on any primary"),
            "{unknown:#}"
        );
    }
}

/// A folder that cannot be deployed is refused before anything is loaded: a bad or reserved
/// library name and a missing folder are usage errors (exit 2, one line); a script changed
/// without a version bump (scripts.lock disagrees) refuses the deploy (exit 1).
#[test]
fn bad_folders_and_names_are_refused() {
    let url = shared_server().url();
    let dir = user_folder(1);
    for (name, words) in [
        ("redis_atomic", "reserved"),
        ("Shop", "[a-z][a-z0-9_]*"),
        ("app1", "ends with a digit"),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_redis-atomic"))
            .args([
                "functions",
                "deploy",
                "--url",
                &url,
                "--library",
                name,
                "--dir",
            ])
            .arg(dir.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(words) && stderr.lines().count() == 1,
            "{stderr}"
        );
    }
    let (code, _) = {
        let o = Command::new(env!("CARGO_BIN_EXE_redis-atomic"))
            .args([
                "functions",
                "status",
                "--url",
                &url,
                "--library",
                "x",
                "--dir",
                "/nonexistent",
            ])
            .output()
            .unwrap();
        (o.status.code(), o.stderr)
    };
    assert_eq!(code, Some(2));

    let touch = dir.path().join("session_touch.lua");
    let text = std::fs::read_to_string(&touch).unwrap();
    std::fs::write(&touch, text.replace("a touch sets", "a touch resets")).unwrap();
    let (code, refused) = user(&["deploy"], "stale", dir.path(), &url, false);
    assert_eq!(code, 1, "{refused:#}");
    assert!(
        refused["problems"][0]
            .as_str()
            .unwrap()
            .contains("session_touch: bytes changed"),
        "{refused:#}"
    );
    assert!(!libraries(&url).contains(&"stale_v1".to_string()));
}
