//! User libraries: `functions deploy|status|diff|rollback --library NAME --dir DIR` on the shared
//! 3+3 cluster and a shared standalone server, each test with its own NAME (function names are
//! global on a server, so names keep the tests apart).

use super::{functions, nodes, query, versions};
use redis_atomic::script::registry::{LIBRARY_NAME, LIBRARY_VERSION};
use redis_atomic_testkit::{RedisCluster, RedisServer};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// The user-script fixture folder (shared with the library's tests).
const USER_LIB: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../redis-atomic/tests/fixtures/user-lib"
);

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
    let any_node = cluster.urls()[0].clone();
    let (v1, v2) = (user_folder(1), user_folder(2));
    let (code, builtin) = functions(&["deploy"], &any_node, true);
    assert_eq!(code, 0, "{builtin:#}");
    let (code, before) = user(&["status"], "shop", v1.path(), &any_node, true);
    assert_eq!(code, 1);
    assert!(nodes(&before).iter().all(|n| n["state"] == "missing"));
    assert_eq!(before["library"]["name"], "shop_v1");

    let (code, deployed) = user(&["deploy"], "shop", v1.path(), &any_node, true);
    assert_eq!(code, 0, "{deployed:#}");
    assert_eq!(nodes(&deployed).len(), 6);
    let (code, deployed) = user(&["deploy"], "shop", v2.path(), &any_node, true);
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
    let (code, status) = user(&["status"], "shop", v2.path(), &any_node, true);
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
    let (code, fixed) = user(&["deploy"], "shop", v2.path(), &any_node, true);
    assert_eq!(code, 0, "{fixed:#}");
    assert!(nodes(&fixed).iter().all(|n| n["state"] == "current"));

    let (code, rolled) = user(
        &["rollback", "--version", "1"],
        "shop",
        v2.path(),
        &any_node,
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
        &any_node,
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
    let url = RedisServer::shared().url();
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

/// Without --library the folder's name names the library; a folder that cannot be deployed is
/// refused before anything is loaded: a bad or reserved library name and a missing folder are
/// usage errors (exit 2, one line); a script changed without a version bump (scripts.lock
/// disagrees) refuses the deploy (exit 1).
#[test]
fn bad_folders_and_names_are_refused() {
    let url = RedisServer::shared().url();
    let dir = user_folder(1);
    let named = dir.path().join("my-lib");
    std::fs::create_dir(&named).unwrap();
    for f in ["session_touch.lua", "library.version"] {
        std::fs::copy(dir.path().join(f), named.join(f)).unwrap();
    }
    std::fs::create_dir(named.join("include")).unwrap();
    std::fs::copy(
        dir.path().join("include/ttl_arg.lua"),
        named.join("include/ttl_arg.lua"),
    )
    .unwrap();
    let (code, status) = functions(&["status", "--dir", named.to_str().unwrap()], &url, false);
    assert_eq!(
        (code, status["library"]["name"].as_str()),
        (1, Some("my_lib_v1")),
        "{status:#}"
    );
    let usage_error = |name: &str, dir: &Path| {
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
            .arg(dir)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2));
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    for (name, words) in [
        ("redis_atomic", "reserved"),
        ("Shop", "[a-z][a-z0-9_]*"),
        ("app1", "ends with a digit"),
    ] {
        let stderr = usage_error(name, dir.path());
        assert!(
            stderr.contains(words) && stderr.lines().count() == 1,
            "{stderr}"
        );
    }
    let stderr = usage_error("shop", Path::new("/nonexistent"));
    assert!(
        stderr.contains("/nonexistent") && stderr.lines().count() == 1,
        "{stderr}"
    );

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
