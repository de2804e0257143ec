//! A user's own script folder through the real binary: `scripts check|lock|list|show` and
//! `test`, on `examples/user-scripts` and on copies of it broken one way at a time. `test` starts
//! its own embedded server; the `--url` test has a server of its own (`test` flushes it).

use crate::{cli, text};
use redis_atomic_testkit::{RedisServer, ServerOptions};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/user-scripts")
}

/// `scripts check DIR --json`: the exit code and the report.
fn check(dir: &Path) -> (i32, Value) {
    let o = cli(&["scripts", "check", dir.to_str().unwrap(), "--json"]);
    let doc = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|_| panic!("stdout {} stderr {}", text(&o.stdout), text(&o.stderr)));
    (o.status.code().unwrap(), doc)
}

/// Every finding of a check report as (item, rule, message); folder findings under `folder`.
fn findings(doc: &Value) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for script in doc["scripts"].as_array().unwrap() {
        for entry in script["checklist"].as_array().unwrap() {
            for f in entry["findings"].as_array().unwrap() {
                out.push((
                    entry["item"].as_str().unwrap().to_string(),
                    f["rule"].as_str().unwrap().to_string(),
                    f["message"].as_str().unwrap().to_string(),
                ));
            }
        }
    }
    for f in doc["folder"].as_array().unwrap() {
        out.push((
            "folder".into(),
            f["rule"].as_str().unwrap().to_string(),
            f["message"].as_str().unwrap().to_string(),
        ));
    }
    out
}

/// A copy of the example folder named `user-scripts` (so its library name, and the lock, stay
/// the same), inside a fresh temporary directory.
fn copy_example() -> (tempfile::TempDir, PathBuf) {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                copy(&entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), target).unwrap();
            }
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("user-scripts");
    copy(&example(), &dir);
    (tmp, dir)
}

/// Replaces `from` (which must occur) by `to` in `dir/file`.
fn edit(dir: &Path, file: &str, from: &str, to: &str) {
    let path = dir.join(file);
    let old = std::fs::read_to_string(&path).unwrap();
    assert!(old.contains(from), "{file} lacks {from:?}");
    std::fs::write(&path, old.replacen(from, to, 1)).unwrap();
}

/// The example folder checks clean: every checklist item of every script kept, lock current.
#[test]
fn check_passes_on_the_example_folder() {
    let (code, doc) = check(&example());
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(doc["clean"], true);
    assert_eq!(doc["lock"], "current");
    assert_eq!(doc["library"]["name"], "user_scripts_v2");
    let scripts = doc["scripts"].as_array().unwrap();
    assert_eq!(scripts.len(), 3);
    for script in scripts {
        for entry in script["checklist"].as_array().unwrap() {
            assert_eq!(entry["status"], "ok", "{}: {entry}", script["name"]);
        }
    }
    let o = cli(&["scripts", "check", example().to_str().unwrap()]);
    assert!(
        text(&o.stdout).contains("[x] bounded loops/reads"),
        "{}",
        text(&o.stdout)
    );
}

/// Each way a script can break its promises fails `check` with exit 1 and a finding on the
/// checklist item it breaks: a key not from KEYS, an unbounded loop, an undeclared status word.
#[test]
fn check_names_each_broken_promise() {
    for (file, from, to, item, rule, says) in [
        (
            "session_touch.lua",
            "return {'touched'",
            "redis.call('SET', 'app:last-touch', session_id, 'EX', ttl)\nreturn {'touched'",
            "keys",
            "key-not-from-keys",
            "",
        ),
        (
            "zadd_unless_smaller.lua",
            "local changed =",
            "while redis.call('ZCARD', KEYS[1]) > 1000 do redis.call('ZPOPMIN', KEYS[1]) end\nlocal changed =",
            "loops",
            "unbounded-loop",
            "",
        ),
        (
            "stock_reserve.lua",
            "return {'unknown_item'}",
            "return {'no_item'}",
            "contract",
            "header-body-mismatch",
            "status `no_item`",
        ),
    ] {
        let (_tmp, dir) = copy_example();
        edit(&dir, file, from, to);
        let (code, doc) = check(&dir);
        assert_eq!(code, 1, "{file}: {doc:#}");
        let found = findings(&doc);
        assert!(
            found
                .iter()
                .any(|(i, r, m)| i == item && r == rule && m.contains(says)),
            "{file}: no {item}/{rule} finding in {found:?}"
        );
    }
}

/// Bytes changed without a version bump: `check` names it, `lock` refuses to hide it (exit 1,
/// lock untouched); after bumping the script's and the library's version, `lock` writes and the
/// folder checks clean again.
#[test]
fn unbumped_change_then_bump_and_lock() {
    let (_tmp, dir) = copy_example();
    edit(
        &dir,
        "session_touch.lua",
        "return {'touched'",
        "-- touched\nreturn {'touched'",
    );
    let (code, doc) = check(&dir);
    assert_eq!(code, 1);
    let found = findings(&doc);
    assert!(
        found.iter().any(|(i, r, m)| i == "contract"
            && r == "lock-changed-without-bump"
            && m.starts_with("session_touch: bytes changed at version 2")),
        "{found:?}"
    );
    let lock = std::fs::read_to_string(dir.join("scripts.lock")).unwrap();
    let o = cli(&["scripts", "lock", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("bump"), "{}", text(&o.stderr));
    assert_eq!(
        std::fs::read_to_string(dir.join("scripts.lock")).unwrap(),
        lock
    );

    edit(
        &dir,
        "session_touch.lua",
        "--- version: 2",
        "--- version: 3",
    );
    std::fs::write(dir.join("library.version"), "3\n").unwrap();
    let o = cli(&["scripts", "lock", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let (code, doc) = check(&dir);
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(doc["library"]["name"], "user_scripts_v3");
    let lock = std::fs::read_to_string(dir.join("scripts.lock")).unwrap();
    assert!(
        lock.contains("script session_touch 3 ") && lock.contains("library user_scripts_v3 3 ")
    );
}

/// A folder without a lock has one finding saying how to write it; `lock` writes it.
#[test]
fn missing_lock_is_a_finding() {
    let (_tmp, dir) = copy_example();
    std::fs::remove_file(dir.join("scripts.lock")).unwrap();
    let (code, doc) = check(&dir);
    assert_eq!(code, 1);
    assert_eq!(findings(&doc).len(), 1, "{doc:#}");
    assert_eq!(findings(&doc)[0].1, "lock-missing");
    assert_eq!(
        cli(&["scripts", "lock", dir.to_str().unwrap()])
            .status
            .code(),
        Some(0)
    );
    assert_eq!(check(&dir).0, 0);
}

/// `test` on the example folder: every case passes through both EVALSHA and FCALL.
#[test]
fn test_passes_on_the_example_folder() {
    let o = cli(&["test", example().to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(doc["failed"], 0);
    assert!(runs.len() >= 40, "{}", runs.len());
    for path in ["evalsha", "fcall"] {
        let n = runs.iter().filter(|r| r["path"] == path).count();
        assert_eq!(n * 2, runs.len(), "{path}");
    }
    for script in ["session_touch", "zadd_unless_smaller", "stock_reserve"] {
        assert!(runs.iter().any(|r| r["script"] == script), "{script}");
    }
}

/// A wrong expectation fails on both paths with exit 1 and a diff naming the path into the
/// reply; the other cases still pass.
#[test]
fn wrong_expectation_fails_with_a_diff() {
    let (_tmp, dir) = copy_example();
    edit(
        &dir,
        "zadd_unless_smaller.test.toml",
        "reply = [\"changed\", 2]",
        "reply = [\"changed\", 3]",
    );
    edit(
        &dir,
        "stock_reserve.test.toml",
        "reply = \"7\" },\n",
        "reply = \"6\" },\n",
    );
    let o = cli(&["test", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    for path in ["evalsha", "fcall"] {
        assert!(
            out.contains(&format!(
                "FAIL {path:<7} zadd_unless_smaller: absent members are added"
            )),
            "{out}"
        );
    }
    assert!(
        out.contains("reply[1]\n         expected: 3\n         got:      2"),
        "{out}"
    );
    assert!(out.contains("in got      [\"changed\", 2]"), "{out}");
    assert!(
        out.contains("after[0] of GET shop:stock:{sku-42}\n         expected: \"6\""),
        "{out}"
    );
    assert!(
        out.contains("52 passed, 4 failed") || out.contains(" 4 failed"),
        "{out}"
    );
}

/// Usage errors exit 2 before any server starts: bad TOML, an unknown script, a wrong key count,
/// no fixtures, a folder without scripts; each names the file (and case).
#[test]
fn usage_errors_exit_2() {
    let cases: [(&str, &str, &str, &str); 4] = [
        ("stock_reserve.test.toml", "[[case]]", "[[case]", "line "),
        (
            "stock_reserve.test.toml",
            "script = \"stock_reserve\"",
            "script = \"stock\"",
            "unknown script `stock`",
        ),
        (
            "stock_reserve.test.toml",
            "keys = [\"shop:stock:{sku-42}\", \"shop:reservation:{sku-42}:req-1\"]",
            "keys = [\"shop:stock:{sku-42}\"]",
            "case 1 \"a reservation takes stock",
        ),
        (
            "session_touch.test.toml",
            "reply = [\"touched\", 1]",
            "reply = 1.5",
            "float",
        ),
    ];
    for (file, from, to, says) in cases {
        let (_tmp, dir) = copy_example();
        edit(&dir, file, from, to);
        let o = cli(&["test", dir.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{to}");
        let err = text(&o.stderr);
        assert!(err.contains(file) && err.contains(says), "{says}: {err}");
    }
    let (_tmp, dir) = copy_example();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.to_str().unwrap().ends_with(".test.toml") {
            std::fs::remove_file(path).unwrap();
        }
    }
    let o = cli(&["test", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("no *.test.toml"));
    let empty = tempfile::tempdir().unwrap();
    for args in [
        vec!["scripts", "check", empty.path().to_str().unwrap()],
        vec!["scripts", "lock", empty.path().to_str().unwrap()],
        vec!["test", empty.path().to_str().unwrap()],
        vec!["scripts", "check", "/no/such/folder"],
        vec![
            "scripts",
            "check",
            example().to_str().unwrap(),
            "--library",
            "Bad-Name",
        ],
    ] {
        let o = cli(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert_eq!(
            text(&o.stderr).lines().count(),
            1,
            "{args:?}: {}",
            text(&o.stderr)
        );
    }
}

/// With `--url`, a database holding keys is refused (test flushes it); with `--allow-flush` the
/// run goes ahead, and the folder's library is loaded on that server.
#[test]
fn url_with_keys_needs_allow_flush() {
    let server = RedisServer::start(ServerOptions::default()).unwrap();
    let url = format!("{}/3", server.url());
    let mut conn = redis::Client::open(url.as_str())
        .unwrap()
        .get_connection()
        .unwrap();
    let _: () = redis::cmd("SET")
        .arg("precious")
        .arg("1")
        .query(&mut conn)
        .unwrap();
    let dir = example();
    let o = cli(&["test", dir.to_str().unwrap(), "--url", &url]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("holds 1 key(s)"),
        "{}",
        text(&o.stderr)
    );
    let kept: Option<String> = redis::cmd("GET").arg("precious").query(&mut conn).unwrap();
    assert_eq!(kept.as_deref(), Some("1"));
    let o = cli(&[
        "test",
        dir.to_str().unwrap(),
        "--url",
        &url,
        "--allow-flush",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let libs: redis::Value = redis::cmd("FUNCTION")
        .arg("LIST")
        .arg("LIBRARYNAME")
        .arg("user_scripts_v2")
        .query(&mut conn)
        .unwrap();
    assert!(
        format!("{libs:?}").contains("user_scripts2_session_touch"),
        "{libs:?}"
    );
}

/// `scripts list DIR` and `scripts show NAME --dir DIR` describe the folder as they describe the
/// built-ins; `--library` renames the library and its functions.
#[test]
fn list_and_show_a_folder() {
    let dir = example();
    let o = cli(&["scripts", "list", dir.to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["library"]["name"], "user_scripts_v2");
    let touch = &doc["scripts"][0];
    assert_eq!(touch["name"], "session_touch");
    assert_eq!(touch["function"], "user_scripts2_session_touch");
    assert_eq!(
        touch["keys"],
        serde_json::json!(["session", "user_sessions"])
    );
    assert_eq!(touch["statuses"][1]["status"], "other_user");
    let o = cli(&[
        "scripts",
        "show",
        "session_touch",
        "--dir",
        dir.to_str().unwrap(),
    ]);
    assert!(text(&o.stdout).starts_with("#!lua\n--- summary: touch a session"));
    assert!(
        text(&o.stdout).contains("local function now_ms()"),
        "includes expanded"
    );
    let o = cli(&[
        "scripts",
        "show",
        "library",
        "--dir",
        dir.to_str().unwrap(),
        "--library",
        "shop",
    ]);
    assert!(text(&o.stdout).starts_with("#!lua name=shop_v2\n"));
    assert!(text(&o.stdout).contains("function_name='shop2_stock_reserve'"));
    let o = cli(&["scripts", "show", "nope", "--dir", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("session_touch"));
}
