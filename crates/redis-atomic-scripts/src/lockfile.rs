//! `scripts.lock`: name, version and SHA1 of every script, plus the Function library.
//!
//! Like a migration checksum: a script whose bytes change must get a new version, otherwise a
//! server could hold two different scripts that claim to be the same version. The same format
//! serves the built-in scripts (checked by the library's tests, rewritten by `make
//! scripts-lock`) and a user's folder (`redis-atomic scripts check|lock`).
//!
//! ```text
//! # comments
//! library redis_atomic_v6 6 <sha1>
//! script lock_acquire 2 <sha1>
//! ```

/// One locked artifact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockEntry {
    /// `script` or `library`.
    pub kind: Kind,
    /// Script name, or the library's name.
    pub name: String,
    /// Its version.
    pub version: u32,
    /// SHA1 of its bytes.
    pub sha1: String,
}

/// What a lock entry locks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Kind {
    /// One script.
    Script,
    /// The Function library composed from the scripts (its name carries its version).
    Library,
}

impl Kind {
    fn word(self) -> &'static str {
        match self {
            Kind::Script => "script",
            Kind::Library => "library",
        }
    }
}

impl LockEntry {
    /// A script entry.
    pub fn script(name: &str, version: u32, sha1: &str) -> LockEntry {
        LockEntry {
            kind: Kind::Script,
            name: name.to_string(),
            version,
            sha1: sha1.to_string(),
        }
    }

    /// The library entry.
    pub fn library(name: &str, version: u32, sha1: &str) -> LockEntry {
        LockEntry {
            kind: Kind::Library,
            ..LockEntry::script(name, version, sha1)
        }
    }

    /// What identifies the entry across versions: the library is one entry whatever its name.
    fn identity(&self) -> String {
        match self.kind {
            Kind::Library => "library".to_string(),
            Kind::Script => format!("script {}", self.name),
        }
    }
}

/// One way the current scripts and a lock file disagree.
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
    /// The scripts and the lock differ in a way a regeneration fixes (new script, bumped
    /// version, removed script).
    Stale {
        /// What differs.
        detail: String,
    },
}

impl std::fmt::Display for LockProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LockProblem::ChangedWithoutBump { name, version } => write!(
                f,
                "{name}: bytes changed at version {version}: bump its `--- version:`"
            ),
            LockProblem::Stale { detail } => write!(f, "{detail}: regenerate the lock"),
        }
    }
}

/// The lock file's text: `comment` (each line prefixed with `# `), then one line per entry.
pub fn render(comment: &str, entries: &[LockEntry]) -> String {
    let mut out = String::new();
    for line in comment.lines() {
        out.push_str("# ");
        out.push_str(line);
        out.push('\n');
    }
    for e in entries {
        out.push_str(&format!(
            "{} {} {} {}\n",
            e.kind.word(),
            e.name,
            e.version,
            e.sha1
        ));
    }
    out
}

/// Compares `current` with the text of a lock file.
pub fn check(current: &[LockEntry], lock: &str) -> Vec<LockProblem> {
    let recorded = parse(lock);
    let mut problems = Vec::new();
    for e in current {
        let id = e.identity();
        match recorded.iter().find(|r| r.identity() == id) {
            Some(r) if r.version == e.version && r.sha1 != e.sha1 => {
                problems.push(LockProblem::ChangedWithoutBump {
                    name: e.name.clone(),
                    version: e.version,
                })
            }
            Some(r) if r.version != e.version => problems.push(LockProblem::Stale {
                detail: format!(
                    "{}: version {} in the lock, {} in the source",
                    e.name, r.version, e.version
                ),
            }),
            None => problems.push(LockProblem::Stale {
                detail: format!("{}: not in the lock", e.name),
            }),
            _ => {}
        }
    }
    for r in &recorded {
        if !current.iter().any(|e| e.identity() == r.identity()) {
            problems.push(LockProblem::Stale {
                detail: format!("{}: in the lock but no longer a script", r.name),
            });
        }
    }
    problems
}

/// The entries of a lock file; lines that are not entries are ignored.
pub fn parse(text: &str) -> Vec<LockEntry> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let (kind, name, version, sha) = match f.as_slice() {
                ["library", n, v, sha] => (Kind::Library, n, v, sha),
                ["script", n, v, sha] => (Kind::Script, n, v, sha),
                _ => return None,
            };
            Some(LockEntry {
                kind,
                name: name.to_string(),
                version: version.parse().ok()?,
                sha1: sha.to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries() -> Vec<LockEntry> {
        vec![
            LockEntry::library("lib_v2", 2, "aa"),
            LockEntry::script("one", 1, "bb"),
        ]
    }

    /// A rendered lock checks clean and parses back.
    #[test]
    fn round_trip() {
        let text = render("header", &entries());
        assert!(text.starts_with("# header\n"));
        assert_eq!(parse(&text), entries());
        assert!(check(&entries(), &text).is_empty());
    }

    /// A changed SHA1 at the same version is the one problem a regeneration must not hide.
    #[test]
    fn unbumped_change_and_staleness() {
        let text = render("", &entries()).replace("bb", "cc");
        assert!(matches!(
            check(&entries(), &text)[..],
            [LockProblem::ChangedWithoutBump { .. }]
        ));
        let mut bumped = entries();
        bumped[1].version = 2;
        bumped.push(LockEntry::script("two", 1, "dd"));
        let problems = check(&bumped, &render("", &entries()));
        assert_eq!(problems.len(), 2);
        assert!(problems
            .iter()
            .all(|p| matches!(p, LockProblem::Stale { .. })));
        let lib_renamed = vec![LockEntry::library("lib_v3", 3, "ee")];
        assert_eq!(check(&lib_renamed, &render("", &entries()[..1])).len(), 1);
    }
}
