//! A script as the server will see it, and the lint-only reading of it.
//!
//! Expansion is not done here: `--@include name` lines are replaced by the one expander
//! `build.rs` uses ([`redis_atomic_scripts::include`]), so the linter parses exactly the bytes
//! the library ships, and its line map makes findings inside a fragment point into the
//! fragment. Files are read with [`redis_atomic_scripts::load::read_text`], which refuses FIFOs,
//! devices and files over a megabyte instead of reading them without limit.
//!
//! What stays here is lint's own: `-- redis-atomic-lint: allow <rule>` suppression comments
//! ([`Allows`]), which mean nothing to the server or the build.

use crate::LintError;
use redis_atomic_scripts::{include, load};
use std::path::Path;

pub use redis_atomic_scripts::include::{Expanded, Origin};

/// The suppression comments of one expanded source: `-- redis-atomic-lint: allow id[,id]`
/// silences those rules on its own line and on the line below.
pub struct Allows<'a> {
    /// The expanded text's lines, split once (findings look them up by line number).
    lines: Vec<&'a str>,
}

impl<'a> Allows<'a> {
    /// The suppression comments of `src`.
    pub fn of(src: &'a Expanded) -> Allows<'a> {
        Allows {
            lines: src.text.lines().collect(),
        }
    }

    /// Whether `rule` is allowed on expanded line `line` (1-based) by a comment on that line or
    /// the line above.
    pub fn allowed(&self, line: usize, rule: &str) -> bool {
        [line, line.saturating_sub(1)]
            .iter()
            .filter(|l| **l >= 1)
            .filter_map(|l| self.lines.get(l - 1))
            .any(|text| allows(text, rule))
    }
}

fn allows(line: &str, rule: &str) -> bool {
    let Some((_, rest)) = line.split_once("redis-atomic-lint: allow") else {
        return false;
    };
    rest.split(|c: char| c.is_whitespace() || c == ',')
        .take_while(|w| !w.starts_with("--"))
        .any(|w| w == rule)
}

/// Reads `path` and expands its includes from `include_dir` (default: `include/` next to it).
pub fn load(path: &Path, include_dir: Option<&Path>) -> Result<Expanded, LintError> {
    let text = load::read_text(path).map_err(|e| LintError::Read {
        path: path.display().to_string(),
        reason: e.to_string(),
    })?;
    let dir = include_dir.map(Path::to_path_buf).unwrap_or_else(|| {
        path.parent()
            .unwrap_or_else(|| Path::new("."))
            .join("include")
    });
    let mut resolve = include::from_dir(&dir);
    include::expand(&path.display().to_string(), &text, &mut resolve).map_err(|e| {
        LintError::Include {
            file: e.file,
            line: e.line,
            message: e.message,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Suppression comments name rules exactly, on the line or the line above.
    #[test]
    fn allow_comments() {
        let e = Expanded::plain(
            "x",
            "a\n-- redis-atomic-lint: allow expire-can-shorten -- owner checked\nb\n",
        );
        let allows = Allows::of(&e);
        assert!(allows.allowed(3, "expire-can-shorten"));
        assert!(allows.allowed(2, "expire-can-shorten"));
        assert!(!allows.allowed(3, "expire"));
        assert!(!allows.allowed(1, "expire-can-shorten"));
        assert!(!allows.allowed(3, "owner"));
        assert!(!allows.allowed(0, "expire-can-shorten"));
        assert!(!allows.allowed(99, "expire-can-shorten"));
    }

    /// Several rules in one comment, separated by commas or spaces.
    #[test]
    fn allow_lists() {
        let e = Expanded::plain("x", "x() -- redis-atomic-lint: allow a,b c\n");
        let allows = Allows::of(&e);
        assert!(["a", "b", "c"].iter().all(|r| allows.allowed(1, r)));
    }
}
