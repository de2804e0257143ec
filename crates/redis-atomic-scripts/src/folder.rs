//! A user's folder of scripts: the same format as the built-ins, plus the two files that make it
//! a deployable unit — `library.version` (one integer: the Function library's version) and
//! `scripts.lock` (name, version, SHA1 per script and for the library).
//!
//! The folder becomes the Function library `<NAME>_v<N>` with functions `<NAME><N>_<script>`,
//! the user's counterpart of the built-in `redis_atomic_v<N>` / `ra<N>_<script>`: the version is
//! part of both names, so two versions of an application coexist during a rolling deploy, and
//! the digit before `_` keeps `<NAME><N>_<script>` from colliding across versions. NAME defaults
//! to the folder's own name with everything outside `[a-z0-9_]` turned into `_`.
//!
//! Every tool that reads a user's folder (the CLI's `scripts`, `test` and `functions`, a build
//! helper) resolves names and versions here, so they cannot disagree.

use crate::codegen::{self, Library};
use crate::load::{read_text, sha1_hex, ScriptFile};
use crate::lockfile::{self, LockEntry};
use std::path::Path;

/// The file holding the library version, inside the folder.
pub const VERSION_FILE: &str = "library.version";

/// The lock file, inside the folder.
pub const LOCK_FILE: &str = "scripts.lock";

/// Longest library name accepted (Redis has no limit; function names carry it too).
pub const MAX_LIBRARY_NAME: usize = 64;

/// The comment at the top of a user's `scripts.lock`.
const LOCK_COMMENT: &str =
    "redis-atomic scripts.lock: name version sha1 per script and for the Function library.\n\
     Written by `redis-atomic scripts lock DIR` after a `--- version:` (or library.version) bump;\n\
     checked by `redis-atomic scripts check DIR`.";

/// Whether `name` may name a user library: `[a-z0-9_]`, 1 to [`MAX_LIBRARY_NAME`] bytes.
pub fn is_library_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_LIBRARY_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// The default library name of `dir`: its last path component (of the canonical path, so `.`
/// works), lower-cased, every byte outside `[a-z0-9_]` replaced by `_`, cut to
/// [`MAX_LIBRARY_NAME`]. `None` when the folder has no usable name (the root, say).
pub fn default_library_name(dir: &Path) -> Option<String> {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let raw = dir.file_name()?.to_string_lossy().to_lowercase();
    let name: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_lowercase() || c.is_ascii_digit() {
                c
            } else {
                '_'
            }
        })
        .take(MAX_LIBRARY_NAME)
        .collect();
    (!name.trim_matches('_').is_empty()).then_some(name)
}

/// The library of a user's folder: `<name>_v<version>`, functions `<name><version>_<script>`.
pub fn user_library(name: &str, version: u32) -> Library {
    Library {
        name: format!("{name}_v{version}"),
        version,
        function_prefix: format!("{name}{version}_"),
    }
}

/// Reads `dir/library.version`: one positive integer (surrounding whitespace allowed).
pub fn library_version(dir: &Path) -> Result<u32, String> {
    let path = dir.join(VERSION_FILE);
    let text = read_text(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.trim()
        .parse::<u32>()
        .ok()
        .filter(|v| *v > 0)
        .ok_or_else(|| {
            format!(
                "{}: must hold one positive integer, not `{}`",
                path.display(),
                text.trim().chars().take(40).collect::<String>()
            )
        })
}

/// The lock entries of a folder: the library first (SHA1 of its `FUNCTION LOAD` source), then
/// each script.
pub fn lock_entries(scripts: &[ScriptFile], lib: &Library) -> Vec<LockEntry> {
    let sha1 = sha1_hex(&codegen::library_source(scripts, lib));
    let mut entries = vec![LockEntry::library(&lib.name, lib.version, &sha1)];
    entries.extend(
        scripts
            .iter()
            .map(|s| LockEntry::script(&s.name, s.header.version, &s.sha1)),
    );
    entries
}

/// The text of a folder's `scripts.lock`.
pub fn render_lock(scripts: &[ScriptFile], lib: &Library) -> String {
    lockfile::render(LOCK_COMMENT, &lock_entries(scripts, lib))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Folder names become library names of `[a-z0-9_]`; nameless folders have none.
    #[test]
    fn default_names() {
        let name = |p: &str| default_library_name(Path::new(p));
        assert_eq!(
            name("/no/such/User-Scripts").as_deref(),
            Some("user_scripts")
        );
        assert_eq!(name("/x/billing.v2").as_deref(), Some("billing_v2"));
        assert_eq!(name("/x/---"), None);
        assert_eq!(name("/"), None);
        assert!(is_library_name("user_scripts") && !is_library_name("A") && !is_library_name(""));
    }

    /// The version is part of the library name and of every function name.
    #[test]
    fn library_naming() {
        let lib = user_library("shop", 3);
        assert_eq!(lib.name, "shop_v3");
        assert_eq!(lib.function_name("reserve"), "shop3_reserve");
    }
}
