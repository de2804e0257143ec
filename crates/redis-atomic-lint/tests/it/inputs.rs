//! What cannot be linted is a typed error naming the file (and line), never a hang, a crash or
//! "clean": parse errors, unknown or escaping includes, oversized files, FIFOs and devices,
//! sources nested deeper than Redis accepts, and nothing to lint.

use proptest::prelude::*;
use redis_atomic_lint::{depth, lint_dir, lint_file, lint_paths, lint_source};
use redis_atomic_lint::{LintError, LintOptions};
use std::path::Path;
use std::process::Command;

fn lint(path: &Path) -> Result<Vec<redis_atomic_lint::Finding>, LintError> {
    lint_file(path, &LintOptions::new())
}

/// Parse errors, unknown includes and missing files are errors of their kind, one line each.
#[test]
fn unlintable_files_are_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.lua");
    std::fs::write(&broken, "#!lua\nlocal x = \nreturn 1 +\n").unwrap();
    let e = lint(&broken).unwrap_err();
    assert!(matches!(e, LintError::Parse { .. }), "{e:?}");
    assert!(e.to_string().contains("parse error"), "{e}");
    assert!(!e.to_string().contains('\n'), "{e}");
    let inc = dir.path().join("inc.lua");
    std::fs::write(&inc, "#!lua\n--@include nope\nreturn 1\n").unwrap();
    let e = lint(&inc).unwrap_err();
    assert!(matches!(e, LintError::Include { line: 2, .. }), "{e:?}");
    assert!(e.to_string().contains("unknown include `nope`"), "{e}");
    let e = lint(Path::new("/nonexistent/x.lua")).unwrap_err();
    assert!(matches!(e, LintError::Read { .. }), "{e:?}");
    // A batch carries on past them: each is an error of the run, the others are linted.
    let good = dir.path().join("good.lua");
    std::fs::write(&good, "#!lua flags=no-writes\nreturn 1\n").unwrap();
    let linted = lint_paths(&[broken, good, inc], &LintOptions::new()).unwrap();
    assert_eq!((linted.files, linted.errors.len()), (3, 2), "{linted:#?}");
    assert!(linted.findings.is_empty() && !linted.clean());
}

/// Includes are resolved as `build.rs` resolves them: a fragment that includes another, or a
/// name that is not lower snake case (it could leave `include/`), is an error naming the
/// including line.
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
        let e = lint(&script).unwrap_err().to_string();
        let at = format!("{}:2:1: ", script.display());
        assert!(e.contains(&at) && e.contains(error), "{include}: {e}");
    }
}

/// Files are read only when they are regular and at most 1 MiB: an oversized script, a FIFO
/// (which would block the read forever), a FIFO fragment or a device is an error, not a hang.
#[test]
fn only_regular_bounded_files_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.lua");
    std::fs::write(&big, "-- x\n".repeat(300_000)).unwrap();
    let e = lint(&big).unwrap_err();
    assert!(e.to_string().contains("larger than"), "{e}");

    std::fs::create_dir(dir.path().join("include")).unwrap();
    let fifo = dir.path().join("fifo.lua");
    let frag = dir.path().join("include/piped.lua");
    for path in [&fifo, &frag] {
        let made = Command::new("mkfifo").arg(path).status().unwrap();
        assert!(made.success());
    }
    let script = dir.path().join("s.lua");
    std::fs::write(&script, "#!lua\n--@include piped\nreturn 1\n").unwrap();
    for path in [fifo.as_path(), script.as_path(), Path::new("/dev/zero")] {
        let e = lint(path).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
    }
}

/// Sources nested deeper than Redis itself accepts (2 000 `(`, 20 000 nested `if`) or with an
/// absurd operator chain are refused before parsing, naming the file and line, not a stack
/// overflow.
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
            depth::MAX_LEVELS + 3,
        ),
    ];
    for (name, source, line) in cases {
        let path = dir.path().join(format!("{name}.lua"));
        std::fs::write(&path, source).unwrap();
        let e = lint(&path).unwrap_err();
        assert!(matches!(e, LintError::TooDeep { .. }), "{name}: {e:?}");
        let text = e.to_string();
        assert!(
            text.starts_with(&format!("{}:{line}:1: ", path.display())) && text.contains("levels"),
            "{name}: {text}"
        );
    }
}

/// The deepest source the nesting check lets through (199 nested functions — the `(` of a
/// 200th would be level 201 —, then a chain making up the rest of the levels) lints without
/// overflowing, even when called from a thread with a small stack: the parse runs on a thread
/// sized for it.
#[test]
fn deepest_accepted_source_lints() {
    let nesting = depth::MAX_NESTING - 1;
    let chain = depth::MAX_LEVELS - nesting;
    let source = format!(
        "#!lua flags=no-writes\nlocal f = {}{}x{}\nreturn 1\n",
        "function() return ".repeat(nesting),
        "not ".repeat(chain),
        " end".repeat(nesting),
    );
    assert!(depth::check(&source).is_ok());
    let one_more = source.replacen("not ", "not not ", 1);
    assert!(depth::check(&one_more).is_err());
    let findings = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || lint_source("deep.lua", &source))
        .unwrap()
        .join()
        .unwrap();
    assert!(findings.is_ok(), "{findings:?}");
}

/// Linting nothing (an empty folder, a folder without `*.lua`) is an error, not "clean".
#[test]
fn linting_nothing_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "x").unwrap();
    let e = lint_dir(dir.path()).unwrap_err();
    assert_eq!(e, LintError::NothingToLint);
    assert!(e.to_string().contains("nothing linted"), "{e}");
    let e = lint_paths(&[], &LintOptions::new()).unwrap_err();
    assert_eq!(e, LintError::NothingToLint);
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
        let _ = lint_source("soup.lua", &parts.concat());
    }
}
