//! Bad fixtures produce exactly the findings their comments expect; good ones none.

use super::fixtures;
use redis_atomic_lint::{lint_dir, lint_file, lint_paths, LintOptions, RULES};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// `(file name, line, rule)` expected by the `-- expect: a b` (this line) and
/// `-- expect@N: a` (line N) comments of every fixture in `dir`.
pub fn expectations(dir: &Path) -> BTreeSet<(String, usize, String)> {
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

/// Every bad fixture produces exactly the findings its comments expect (rule and line), each
/// finding's rule has a why and a fix, and every rule of the table is exercised by at least
/// one fixture.
#[test]
fn bad_fixtures_produce_exactly_the_expected_findings() {
    let dir = fixtures("bad");
    let linted = lint_paths(std::slice::from_ref(&dir), &LintOptions::new()).unwrap();
    assert!(linted.errors.is_empty(), "{:?}", linted.errors);
    let found: BTreeSet<(String, usize, String)> = linted
        .findings
        .iter()
        .map(|f| {
            let rule = f.rule().unwrap();
            assert!(!rule.why.is_empty() && !rule.fix.is_empty(), "{f:?}");
            let path = PathBuf::from(&f.path);
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, f.line, f.rule.to_string())
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

/// Good fixtures (includes, a library, bounded loops, a justified `allow`) lint clean, through
/// either entry point.
#[test]
fn good_fixtures_are_clean() {
    let dir = fixtures("good");
    let linted = lint_paths(std::slice::from_ref(&dir), &LintOptions::new()).unwrap();
    assert!(linted.clean(), "{linted:#?}");
    assert!(linted.files >= 4, "{linted:#?}");
    let findings = lint_dir(&dir).unwrap();
    assert!(findings.is_empty(), "{findings:#?}");
}

/// The finding of a `no-writes` script calling SET: position, rule and message, exactly.
#[test]
fn a_finding_names_position_rule_and_what() {
    let file = fixtures("bad").join("writes_under_no_writes.lua");
    let findings = lint_file(&file, &LintOptions::new()).unwrap();
    let first = &findings[0];
    assert_eq!(
        (first.path.clone(), first.line, first.col, first.rule),
        (file.display().to_string(), 2, 1, "writes-under-no-writes")
    );
    assert_eq!(
        first.message,
        "the script is flagged no-writes but calls SET"
    );
    assert!(first.rule().unwrap().fix.starts_with("drop no-writes"));
}

/// A finding inside an included fragment points into the fragment's file and line; a fragment
/// from another folder is found through [`LintOptions::include_dir`].
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
    let findings = lint_file(&script, &LintOptions::new()).unwrap();
    let f = &findings[0];
    assert!(f.path.ends_with("include/helper.lua"), "{f:?}");
    assert_eq!((f.line, f.rule), (3, "key-not-from-keys"));

    let elsewhere = tempfile::tempdir().unwrap();
    let moved = elsewhere.path().join("s.lua");
    std::fs::copy(&script, &moved).unwrap();
    assert!(lint_file(&moved, &LintOptions::new()).is_err());
    let options = LintOptions::new().include_dir(dir.path().join("include"));
    let findings = lint_file(&moved, &options).unwrap();
    assert_eq!(
        (findings[0].line, findings[0].rule),
        (3, "key-not-from-keys")
    );
}

/// A status word the body returns but `returns:` does not declare, and one declared but never
/// returned, are one `header-body-mismatch` on the `returns:` line naming both words.
#[test]
fn status_word_mismatch_names_both_words() {
    let file = fixtures("bad").join("undeclared_status.lua");
    let findings = lint_file(&file, &LintOptions::new()).unwrap();
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let f = &findings[0];
    assert_eq!((f.line, f.rule), (6, "header-body-mismatch"));
    assert!(
        f.message.contains("`exhausted`") && f.message.contains("`empty`"),
        "{}",
        f.message
    );
}
