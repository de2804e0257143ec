//! `scripts.lock`: name, version and SHA1 of every script, plus the Function library.
//!
//! Like a migration checksum: a script whose bytes change must get a new version, otherwise a
//! server could hold two different scripts that claim to be the same version. The check runs in
//! the test suite (`tests/scripts.rs`); `make scripts-lock` rewrites the file after a bump.

use super::registry::{ALL, LIBRARY_NAME, LIBRARY_SHA1, LIBRARY_VERSION};

/// One way the registry and `scripts.lock` disagree.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LockProblem {
    /// Bytes changed but the version did not: bump `--- version:`.
    ChangedWithoutBump {
        /// Script (or library) name.
        name: String,
        /// The unchanged version.
        version: u32,
    },
    /// The registry and the lock differ in a way a regeneration fixes (new script, bumped version,
    /// removed script).
    Stale {
        /// What differs.
        detail: String,
    },
}

/// The lock file's text for the current registry.
pub fn render_lock() -> String {
    let mut out = String::from(
        "# redis-atomic scripts.lock: name version sha1. Regenerate with `make scripts-lock`\n\
         # after bumping `--- version:` (or scripts/library.version). Checked by the tests.\n",
    );
    out.push_str(&format!(
        "library {LIBRARY_NAME} {LIBRARY_VERSION} {LIBRARY_SHA1}\n"
    ));
    for s in ALL {
        out.push_str(&format!("script {} {} {}\n", s.name, s.version, s.sha1));
    }
    out
}

/// Compares the registry with the text of `scripts.lock`.
pub fn check_lock(lock: &str) -> Vec<LockProblem> {
    let current = parse(&render_lock());
    let recorded = parse(lock);
    let mut problems = Vec::new();
    for (name, (version, sha)) in &current {
        match recorded.iter().find(|(n, _)| n == name) {
            Some((_, (v, s))) if v == version && s != sha => {
                problems.push(LockProblem::ChangedWithoutBump {
                    name: name.clone(),
                    version: *version,
                })
            }
            Some((_, (v, _))) if v != version => problems.push(LockProblem::Stale {
                detail: format!("{name}: version {v} in the lock, {version} in the source"),
            }),
            None => problems.push(LockProblem::Stale {
                detail: format!("{name}: not in the lock"),
            }),
            _ => {}
        }
    }
    for (name, _) in &recorded {
        if !current.iter().any(|(n, _)| n == name) {
            problems.push(LockProblem::Stale {
                detail: format!("{name}: in the lock but no longer a script"),
            });
        }
    }
    problems
}

/// `(kind/name, (version, sha1))`; the library is keyed as `library` since its name carries the
/// version.
fn parse(text: &str) -> Vec<(String, (u32, String))> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let (key, version, sha) = match f.as_slice() {
                ["library", _, v, sha] => ("library".to_string(), v, sha),
                ["script", name, v, sha] => (format!("script {name}"), v, sha),
                _ => return None,
            };
            Some((key, (version.parse().ok()?, sha.to_string())))
        })
        .collect()
}
