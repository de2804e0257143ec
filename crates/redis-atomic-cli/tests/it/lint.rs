//! `redis-atomic lint`, driven as a user would: the command's contract — exit codes (0 clean, 1
//! findings, 2 errors), the text format, the JSON document with each rule's why and fix, one
//! error line per file that cannot be linted. Which findings each fixture produces, and why a
//! file cannot be linted, are the lint crate's tests; its fixtures are used here.

use crate::{cli, text};
use redis_atomic_lint::RULES;
use std::path::PathBuf;

fn fixtures(kind: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../redis-atomic-lint/tests/fixtures/lint/{kind}"))
}

/// Bad fixtures: exit 1, and every finding in the JSON carries its rule's why and fix; the
/// findings are the library's, one for one.
#[test]
fn bad_fixtures_exit_1_with_why_and_fix() {
    let dir = fixtures("bad");
    let o = cli(&["lint", "--json", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let findings = doc["findings"].as_array().unwrap();
    for f in findings {
        assert!(f["why"].is_string() && f["fix"].is_string(), "{f}");
    }
    let linted = redis_atomic_lint::lint_paths(&[dir], &Default::default()).unwrap();
    assert_eq!(findings.len(), linted.findings.len());
    assert_eq!(doc["files"], linted.files);
    for (json, f) in findings.iter().zip(&linted.findings) {
        assert_eq!(
            (
                json["path"].as_str(),
                json["line"].as_u64(),
                json["rule"].as_str()
            ),
            (Some(f.path.as_str()), Some(f.line as u64), Some(f.rule))
        );
    }
}

/// Good fixtures (includes, a library, bounded loops, a justified `allow`) lint clean: exit 0,
/// nothing on stdout, "clean" on stderr.
#[test]
fn good_fixtures_are_clean() {
    let o = cli(&["lint", fixtures("good").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    assert!(o.stdout.is_empty());
    assert!(text(&o.stderr).contains("clean"));
}

/// Our own scripts lint clean through the command (includes from `scripts/include/`).
#[test]
fn our_scripts_lint_clean() {
    let scripts = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../redis-atomic/scripts");
    let o = cli(&["lint", scripts.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
}

/// The text format is `path:line:col: rule-id: message`, followed by each hit rule's why/fix.
#[test]
fn text_output_format() {
    let file = fixtures("bad").join("writes_under_no_writes.lua");
    let o = cli(&["lint", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let out = text(&o.stdout);
    let first = out.lines().next().unwrap();
    assert_eq!(
        first,
        format!(
            "{}:2:1: writes-under-no-writes: the script is flagged no-writes but calls SET",
            file.display()
        )
    );
    assert!(out.contains("fix: drop no-writes"), "{out}");
}

/// `--include-dir` finds fragments elsewhere; the JSON finding points into the fragment.
#[test]
fn include_dir_and_findings_in_fragments() {
    let dir = tempfile::tempdir().unwrap();
    let frags = dir.path().join("frags");
    std::fs::create_dir(&frags).unwrap();
    std::fs::write(
        frags.join("helper.lua"),
        "-- helper\nlocal function helper()\n  return redis.call('GET', 'fixed')\nend\n",
    )
    .unwrap();
    let script = dir.path().join("s.lua");
    std::fs::write(
        &script,
        "#!lua flags=no-writes\n--@include helper\nreturn helper()\n",
    )
    .unwrap();
    let script = script.to_str().unwrap();
    assert_eq!(cli(&["lint", script]).status.code(), Some(2));
    let o = cli(&[
        "lint",
        "--json",
        "--include-dir",
        frags.to_str().unwrap(),
        script,
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let f = &doc["findings"][0];
    assert!(
        f["path"].as_str().unwrap().ends_with("frags/helper.lua"),
        "{f}"
    );
    assert_eq!(
        (f["line"].as_u64(), f["rule"].as_str()),
        (Some(3), Some("key-not-from-keys"))
    );
}

/// Parse errors, unreadable files, unknown includes, devices, deep nesting and a missing PATH
/// exit 2 with one line per file naming it; the other files are still linted; `--rules` lists
/// every rule.
#[test]
fn errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.lua");
    std::fs::write(&broken, "#!lua\nlocal x = \nreturn 1 +\n").unwrap();
    let o = cli(&["lint", broken.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("parse error"),
        "{}",
        text(&o.stderr)
    );
    let inc = dir.path().join("inc.lua");
    std::fs::write(&inc, "#!lua\n--@include nope\nreturn 1\n").unwrap();
    let o = cli(&["lint", inc.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("unknown include `nope`"));
    let deep = dir.path().join("deep.lua");
    std::fs::write(&deep, format!("#!lua\nreturn {}1\n", "(".repeat(2_000))).unwrap();
    for path in ["/nonexistent/x.lua", "/dev/zero", deep.to_str().unwrap()] {
        let o = cli(&["lint", path]);
        assert_eq!(o.status.code(), Some(2), "{path}");
        assert!(
            text(&o.stderr).starts_with(path),
            "{path}: {}",
            text(&o.stderr)
        );
    }
    let good = fixtures("good").join("counter.lua");
    let o = cli(&[
        "lint",
        "--json",
        broken.to_str().unwrap(),
        good.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["files"], 2);
    let errors = doc["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{doc}");
    assert!(errors[0]["message"]
        .as_str()
        .unwrap()
        .contains("parse error"));
    assert_eq!(cli(&["lint"]).status.code(), Some(2));
    let o = cli(&["lint", "--rules"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(text(&o.stdout).matches("\n  why: ").count(), RULES.len());
}

/// Linting nothing (an empty folder, a folder without `*.lua`) is an error, not "clean".
#[test]
fn linting_nothing_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "x").unwrap();
    let o = cli(&["lint", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("nothing linted"),
        "{}",
        text(&o.stderr)
    );
}
