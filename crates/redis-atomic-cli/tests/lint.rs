//! `redis-atomic lint`, driven as a user would: fixtures that must be clean, fixtures whose
//! `-- expect: rule` comments list exactly the findings each line must produce, and our own
//! scripts, which must lint clean.
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use redis_atomic_cli::lint::{self, rules::RULES};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Command, Output};

fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_redis-atomic"))
        .args(args)
        .output()
        .unwrap()
}

fn fixtures(kind: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/lint/{kind}"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `(file name, line, rule)` expected by the `-- expect: a b` (this line) and
/// `-- expect@N: a` (line N) comments of every fixture in `dir`.
fn expectations(dir: &PathBuf) -> BTreeSet<(String, usize, String)> {
    let mut out = BTreeSet::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|x| x != "lua") {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        for (i, line) in std::fs::read_to_string(&path).unwrap().lines().enumerate() {
            let Some((_, spec)) = line.split_once("-- expect") else {
                continue;
            };
            let (at, rules) = spec.split_once(':').unwrap();
            let at = at.strip_prefix('@').map_or(i + 1, |n| n.parse().unwrap());
            for rule in rules.split_whitespace() {
                out.insert((name.clone(), at, rule.to_string()));
            }
        }
    }
    out
}

/// Every bad fixture produces exactly the findings its comments expect (rule and line), the
/// exit code is 1, and every rule of the table is exercised by at least one fixture.
#[test]
fn bad_fixtures_produce_exactly_the_expected_findings() {
    let dir = fixtures("bad");
    let o = cli(&["lint", "--json", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let found: BTreeSet<(String, usize, String)> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            assert!(f["why"].is_string() && f["fix"].is_string(), "{f}");
            let path = PathBuf::from(f["path"].as_str().unwrap());
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (
                name,
                f["line"].as_u64().unwrap() as usize,
                f["rule"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expected = expectations(&dir);
    let missing: Vec<_> = expected.difference(&found).collect();
    let unexpected: Vec<_> = found.difference(&expected).collect();
    assert!(
        missing.is_empty() && unexpected.is_empty(),
        "missing {missing:#?}\nunexpected {unexpected:#?}"
    );
    let exercised: BTreeSet<&str> = expected.iter().map(|(_, _, r)| r.as_str()).collect();
    for rule in RULES {
        assert!(
            exercised.contains(rule.id),
            "no fixture exercises {}",
            rule.id
        );
    }
}

/// Good fixtures (includes, a library, bounded loops, a justified `allow`) lint clean: exit 0,
/// nothing on stdout.
#[test]
fn good_fixtures_are_clean() {
    let o = cli(&["lint", fixtures("good").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    assert!(o.stdout.is_empty());
    assert!(text(&o.stderr).contains("clean"));
}

/// Our own scripts lint clean, both as files (includes expanded from `scripts/include/`) and as
/// the final sources and Function library the registry ships.
#[test]
fn our_scripts_lint_clean() {
    let scripts = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../redis-atomic/scripts");
    let o = cli(&["lint", scripts.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    let registry = redis_atomic::script::registry::ALL;
    for def in registry {
        let findings = lint::lint_source(def.name, def.source).unwrap();
        assert!(findings.is_empty(), "{}: {findings:#?}", def.name);
    }
    let library = redis_atomic::script::registry::LIBRARY_SOURCE;
    let findings = lint::lint_source("library", library).unwrap();
    assert!(findings.is_empty(), "library: {findings:#?}");
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

/// A finding inside an included fragment points into the fragment's file and line.
#[test]
fn findings_in_includes_point_into_the_fragment() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("include")).unwrap();
    std::fs::write(
        dir.path().join("include/helper.lua"),
        "-- helper\nlocal function helper()\n  return redis.call('GET', 'fixed')\nend\n",
    )
    .unwrap();
    let script = dir.path().join("s.lua");
    std::fs::write(
        &script,
        "#!lua flags=no-writes\n--@include helper\nreturn helper()\n",
    )
    .unwrap();
    let o = cli(&["lint", "--json", script.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let f = &doc["findings"][0];
    assert!(
        f["path"].as_str().unwrap().ends_with("include/helper.lua"),
        "{f}"
    );
    assert_eq!(
        (f["line"].as_u64(), f["rule"].as_str()),
        (Some(3), Some("key-not-from-keys"))
    );
}

/// Parse errors, unreadable files, unknown includes and a missing PATH exit 2 with a message.
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
    assert_eq!(cli(&["lint", "/nonexistent/x.lua"]).status.code(), Some(2));
    assert_eq!(cli(&["lint"]).status.code(), Some(2));
    let o = cli(&["lint", "--rules"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(text(&o.stdout).matches("\n  why: ").count(), RULES.len());
}

/// A status word the body returns but `returns:` does not declare, and one declared but never
/// returned, are one `header-body-mismatch` on the `returns:` line naming both words.
#[test]
fn status_word_mismatch_names_both_words() {
    let file = fixtures("bad").join("undeclared_status.lua");
    let o = cli(&["lint", "--json", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let findings = doc["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let f = &findings[0];
    assert_eq!(
        (f["line"].as_u64(), f["rule"].as_str()),
        (Some(6), Some("header-body-mismatch"))
    );
    let message = f["message"].as_str().unwrap();
    assert!(
        message.contains("`exhausted`") && message.contains("`empty`"),
        "{message}"
    );
}

/// Includes are resolved as `build.rs` resolves them: a fragment that includes another, or a
/// name that is not lower snake case (it could leave `include/`), is an error (exit 2) naming
/// the including line.
#[test]
fn include_rules_are_the_builds() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("include")).unwrap();
    std::fs::write(dir.path().join("include/outer.lua"), "--@include inner\n").unwrap();
    std::fs::write(dir.path().join("include/inner.lua"), "local x = 1\n").unwrap();
    std::fs::write(dir.path().join("secret.lua"), "local y = 2\n").unwrap();
    for (include, error) in [
        ("outer", "fragments may not include others"),
        ("../secret", "unknown include `../secret`"),
    ] {
        let script = dir.path().join("s.lua");
        std::fs::write(&script, format!("#!lua\n--@include {include}\nreturn 1\n")).unwrap();
        let o = cli(&["lint", script.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{include}");
        let stderr = text(&o.stderr);
        let at = format!("{}:2:1: ", script.display());
        assert!(stderr.contains(&at) && stderr.contains(error), "{stderr}");
    }
}

/// Files are read only when they are regular and at most 1 MiB: an oversized script, a FIFO
/// (which would block the read forever) or a FIFO fragment is an error (exit 2), not a hang.
#[test]
fn only_regular_bounded_files_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.lua");
    std::fs::write(&big, "-- x\n".repeat(300_000)).unwrap();
    let o = cli(&["lint", big.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("larger than"),
        "{}",
        text(&o.stderr)
    );

    std::fs::create_dir(dir.path().join("include")).unwrap();
    let fifo = dir.path().join("fifo.lua");
    let frag = dir.path().join("include/piped.lua");
    for path in [&fifo, &frag] {
        let made = Command::new("mkfifo").arg(path).status().unwrap();
        assert!(made.success());
    }
    let o = cli(&["lint", fifo.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("not a regular file"),
        "{}",
        text(&o.stderr)
    );
    let script = dir.path().join("s.lua");
    std::fs::write(&script, "#!lua\n--@include piped\nreturn 1\n").unwrap();
    for path in [script.to_str().unwrap(), "/dev/zero"] {
        let o = cli(&["lint", path]);
        assert_eq!(o.status.code(), Some(2), "{path}");
        assert!(
            text(&o.stderr).contains("not a regular file"),
            "{}",
            text(&o.stderr)
        );
    }
}

/// Sources nested deeper than Redis itself accepts (2 000 `(`, 20 000 nested `if`) or with an
/// absurd operator chain are refused before parsing: exit 2 and one line naming the file and
/// line, not a stack overflow.
#[test]
fn deep_nesting_is_refused_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "parens",
            format!(
                "#!lua\nreturn {}1{}\n",
                "(".repeat(2_000),
                ")".repeat(2_000)
            ),
            2,
        ),
        (
            "ifs",
            format!(
                "#!lua\n{}return 1\n{}",
                "if x then\n".repeat(20_000),
                "end\n".repeat(20_000)
            ),
            202,
        ),
        (
            "chain",
            format!("#!lua\nreturn 1{}\n", "\n+ 1".repeat(60_000)),
            lint::depth::MAX_LEVELS + 3,
        ),
    ];
    for (name, source, line) in cases {
        let path = dir.path().join(format!("{name}.lua"));
        std::fs::write(&path, source).unwrap();
        let o = cli(&["lint", path.to_str().unwrap()]);
        let stderr = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {stderr}");
        let first = stderr.lines().next().unwrap();
        assert!(
            first.starts_with(&format!("{}:{line}:1: ", path.display()))
                && first.contains("levels"),
            "{name}: {stderr}"
        );
    }
}

/// The deepest source the nesting check lets through (199 nested functions — the `(` of a
/// 200th would be level 201 —, then a chain making up the rest of the levels) lints without
/// overflowing, even when called from a thread with a small stack: the parse runs on a thread
/// sized for it.
#[test]
fn deepest_accepted_source_lints() {
    let depth = lint::depth::MAX_NESTING - 1;
    let chain = lint::depth::MAX_LEVELS - depth;
    let source = format!(
        "#!lua flags=no-writes\nlocal f = {}{}x{}\nreturn 1\n",
        "function() return ".repeat(depth),
        "not ".repeat(chain),
        " end".repeat(depth),
    );
    assert!(lint::depth::check(&source).is_ok());
    let one_more = source.replacen("not ", "not not ", 1);
    assert!(lint::depth::check(&one_more).is_err());
    let findings = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || lint::lint_source("deep.lua", &source))
        .unwrap()
        .join()
        .unwrap();
    assert!(findings.is_ok(), "{findings:?}");
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    /// Whatever a file holds, lint answers with findings or an error, never a panic: soups of
    /// Lua's keywords and symbols reach the parser and the walk.
    #[test]
    fn lint_never_panics(
        parts in proptest::collection::vec(
            prop_oneof![
                Just("local "), Just("function "), Just("end "), Just("if "), Just("then "),
                Just("return "), Just("redis.call("), Just("KEYS["), Just("ARGV["), Just("]"),
                Just(")"), Just("("), Just("{"), Just("}"), Just("'x'"), Just(", "), Just("= "),
                Just("for i = 1, 2 do "), Just("while "), Just("do "), Just("not "), Just(".. "),
                Just("1 "), Just("x "), Just("\n"), Just("--[[ "), Just("]] "), Just("#!lua\n"),
            ],
            0..40,
        )
    ) {
        let _ = lint::lint_source("soup.lua", &parts.concat());
    }
}
