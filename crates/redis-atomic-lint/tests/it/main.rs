//! The lint library, called as a user's `build.rs` or test calls it: fixtures whose
//! `-- expect: rule` comments list exactly the findings each line must produce ([`fixtures`]),
//! inputs that must be refused with a typed error instead of a hang or a crash ([`inputs`]),
//! and our own scripts, which must lint clean ([`ours`]). The command's exit codes and output
//! formats are the CLI's tests.
#![allow(clippy::unwrap_used, missing_docs)]

mod fixtures;
mod inputs;
mod ours;

use std::path::PathBuf;

/// `tests/fixtures/lint/<kind>` of this crate.
pub fn fixtures(kind: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/lint/{kind}"))
}
