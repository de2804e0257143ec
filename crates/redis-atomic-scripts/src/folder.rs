//! A user's folder of scripts: the same format as the built-ins, plus the two files that make it
//! a deployable unit — `library.version` (one integer: the Function library's version) and
//! `scripts.lock` (name, version, SHA1 per script and for the library).
//!
//! The folder becomes the Function library `<NAME>_v<N>` with functions `<NAME><N>_<script>`,
//! the user's counterpart of the built-in `redis_atomic_v<N>` / `ra<N>_<script>`: the version is
//! part of both names, so two versions of an application coexist during a rolling deploy.
//! Function names are global on a server, so NAME must not be a prefix trap
//! ([`check_library_name`]): it may not end with a digit (`app1` v2 and `app` v12 would both
//! name `app12_<script>`) and the built-in family's names are reserved. NAME defaults to the
//! folder's own name with everything outside `[a-z0-9_]` turned into `_`.
//!
//! Every tool that reads a user's folder resolves names and versions here, so they cannot
//! disagree: the CLI's `scripts`, `test` and `functions`, the build helper ([`crate::build`],
//! which redis-atomic's own `build.rs` uses too) and the library's run-time `ScriptSet`, the last
//! two through [`Folder::load`].

use crate::codegen::{self, Library};
use crate::load::{self, read_text, sha1_hex, LoadError, ScriptFile};
use crate::lockfile::{self, Kind, LockEntry, LockProblem};
use std::path::{Path, PathBuf};

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

/// Why `name` cannot name a user library: not `[a-z][a-z0-9_]*`, longer than
/// [`MAX_LIBRARY_NAME`], ending in a digit, or reserved (`redis_atomic`, and `ra`, the built-in
/// function prefix).
///
/// ```
/// use redis_atomic_scripts::folder::{check_library_name, user_library};
/// assert!(check_library_name("shop").is_ok());
/// assert!(check_library_name("redis_atomic").is_err() && check_library_name("app1").is_err());
/// let lib = user_library("shop", 3);
/// assert_eq!((lib.name.as_str(), lib.function_name("touch").as_str()), ("shop_v3", "shop3_touch"));
/// ```
pub fn check_library_name(name: &str) -> Result<(), String> {
    if name.len() > MAX_LIBRARY_NAME || !crate::returns::is_name(name) {
        return Err(format!(
            "library name `{name}`: use [a-z][a-z0-9_]*, at most {MAX_LIBRARY_NAME} characters"
        ));
    }
    if name.ends_with(|c: char| c.is_ascii_digit()) {
        return Err(format!(
            "library name `{name}` ends with a digit: the version follows it in function names \
             (`{name}<N>_<script>`), so it could collide with another name and version"
        ));
    }
    if name == "redis_atomic" || name == "ra" {
        return Err(format!(
            "library name `{name}` is reserved for redis-atomic's built-in library"
        ));
    }
    Ok(())
}

/// Whether `name` may name a user library ([`check_library_name`] says why not).
pub fn is_library_name(name: &str) -> bool {
    check_library_name(name).is_ok()
}

/// The default library name of `dir`: its last path component (of the canonical path, so `.`
/// works), lower-cased, every byte outside `[a-z0-9_]` replaced by `_`, cut to
/// [`MAX_LIBRARY_NAME`]. `None` when the folder has no usable name (the root, say). The result
/// still has to pass [`check_library_name`].
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

/// The library of a user's folder: `<name>_v<version>`, functions `<name><version>_<script>`
/// (`name` already checked by [`check_library_name`]).
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
    entries.extend(script_entries(scripts));
    entries
}

fn script_entries(scripts: &[ScriptFile]) -> impl Iterator<Item = LockEntry> + '_ {
    scripts
        .iter()
        .map(|s| LockEntry::script(&s.name, s.header.version, &s.sha1))
}

/// The text of a folder's `scripts.lock`.
pub fn render_lock(scripts: &[ScriptFile], lib: &Library) -> String {
    lockfile::render(LOCK_COMMENT, &lock_entries(scripts, lib))
}

/// A loaded folder: its scripts and its library version (the library's name is chosen by the
/// caller: [`Folder::library`]).
#[derive(Clone, Debug)]
pub struct Folder {
    /// Where it was read from.
    pub dir: PathBuf,
    /// Its scripts, sorted by name, each checked against its header.
    pub scripts: Vec<ScriptFile>,
    /// The Function library version, from [`VERSION_FILE`].
    pub version: u32,
}

/// Why a folder cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FolderError {
    /// A script or fragment could not be read or checked.
    Load(LoadError),
    /// [`VERSION_FILE`] is missing or does not hold a positive integer.
    Version(String),
    /// The folder holds no `*.lua` script.
    Empty {
        /// The folder.
        path: String,
    },
    /// The library name cannot be used ([`check_library_name`]).
    LibraryName(String),
}

impl std::fmt::Display for FolderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FolderError::Load(e) => e.fmt(f),
            FolderError::Empty { path } => write!(f, "{path}: no *.lua scripts"),
            FolderError::Version(message) | FolderError::LibraryName(message) => {
                f.write_str(message)
            }
        }
    }
}

impl std::error::Error for FolderError {}

impl From<LoadError> for FolderError {
    fn from(e: LoadError) -> Self {
        FolderError::Load(e)
    }
}

impl Folder {
    /// Loads every script of `dir` (see [`load::load_dir`]) and its library version.
    pub fn load(dir: &Path) -> Result<Folder, FolderError> {
        let scripts = load::load_dir(dir)?;
        if scripts.is_empty() {
            return Err(FolderError::Empty {
                path: dir.display().to_string(),
            });
        }
        let version = library_version(dir).map_err(FolderError::Version)?;
        Ok(Folder {
            dir: dir.to_path_buf(),
            scripts,
            version,
        })
    }

    /// The library `NAME_v<N>` these scripts compose (N from [`VERSION_FILE`]).
    pub fn library(&self, name: &str) -> Result<Library, FolderError> {
        check_library_name(name).map_err(FolderError::LibraryName)?;
        Ok(user_library(name, self.version))
    }

    /// How the scripts disagree with [`LOCK_FILE`]; `None` when the folder has no lock file.
    /// Only script entries are compared: the library's name (and so its SHA1) is chosen by
    /// whoever deploys or builds, so the lock's `library` line is `scripts check`'s to judge.
    pub fn lock_problems(&self) -> Option<Vec<LockProblem>> {
        let path = self.dir.join(LOCK_FILE);
        let text = match read_text(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => {
                return Some(vec![LockProblem::Stale {
                    detail: format!("{}: {e}", path.display()),
                }])
            }
        };
        let recorded: Vec<LockEntry> = lockfile::parse(&text)
            .into_iter()
            .filter(|e| e.kind == Kind::Script)
            .collect();
        let current: Vec<LockEntry> = script_entries(&self.scripts).collect();
        Some(lockfile::check(&current, &lockfile::render("", &recorded)))
    }

    /// Every file the scripts were built from (scripts and fragments), the version file and the
    /// lock file: what a build must watch.
    pub fn inputs(&self) -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> = vec![
            self.dir.clone(),
            self.dir.join("include"),
            self.dir.join(VERSION_FILE),
            self.dir.join(LOCK_FILE),
        ];
        for s in &self.scripts {
            for f in &s.expanded.files {
                let p = PathBuf::from(f);
                if !paths.contains(&p) {
                    paths.push(p);
                }
            }
        }
        paths
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRIPT: &str = "#!lua flags=no-writes\n--- summary: s\n--- invariant: i\n\
        --- keys: k\n--- args: -\n--- returns: {'ok', n}\n--- retry: safe\n--- version: 1\n\
        return {'ok', redis.call('EXISTS', KEYS[1])}\n";

    fn folder(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap_or_else(|e| panic!("{e}"));
        }
        dir
    }

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

    /// Library names that could collide or impersonate are refused with the reason.
    #[test]
    fn library_names_that_cannot_be() {
        for (name, why) in [
            ("", "[a-z]"),
            ("Shop", "[a-z]"),
            ("shop-x", "[a-z]"),
            ("1shop", "[a-z]"),
            ("app2", "digit"),
            ("redis_atomic", "reserved"),
            ("ra", "reserved"),
        ] {
            let e = check_library_name(name).unwrap_err();
            assert!(e.contains(why), "{name}: {e}");
        }
        assert!(!is_library_name(&"a".repeat(MAX_LIBRARY_NAME + 1)));
        assert!(is_library_name(&"a".repeat(MAX_LIBRARY_NAME)));
    }

    /// A folder with scripts and a version loads; a lock written from it (its `library` line
    /// included) checks clean, and a changed byte without a version bump is found.
    #[test]
    fn loads_and_checks_its_lock() {
        let dir = folder(&[("one.lua", SCRIPT), (VERSION_FILE, "3\n")]);
        let f = Folder::load(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((f.version, f.scripts.len()), (3, 1));
        assert_eq!(f.lock_problems(), None);
        let lock = render_lock(&f.scripts, &user_library("other", 3));
        std::fs::write(dir.path().join(LOCK_FILE), lock).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(f.lock_problems(), Some(Vec::new()));
        std::fs::write(dir.path().join("one.lua"), SCRIPT.replace("EXISTS", "TYPE"))
            .unwrap_or_else(|e| panic!("{e}"));
        let changed = Folder::load(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(
            changed.lock_problems().as_deref(),
            Some([LockProblem::ChangedWithoutBump { .. }])
        ));
    }

    /// A missing or bad version file, an empty folder and a bad library name are refused with
    /// the file concerned.
    #[test]
    fn refuses_what_cannot_be_a_library() {
        let no_version = folder(&[("one.lua", SCRIPT)]);
        let e = Folder::load(no_version.path()).unwrap_err();
        assert!(e.to_string().contains(VERSION_FILE), "{e}");
        let zero = folder(&[("one.lua", SCRIPT), (VERSION_FILE, "0")]);
        assert!(matches!(
            Folder::load(zero.path()),
            Err(FolderError::Version(_))
        ));
        let empty = folder(&[(VERSION_FILE, "1")]);
        assert!(matches!(
            Folder::load(empty.path()),
            Err(FolderError::Empty { .. })
        ));
        let ok = folder(&[("one.lua", SCRIPT), (VERSION_FILE, "1")]);
        let f = Folder::load(ok.path()).unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(f.library("Bad"), Err(FolderError::LibraryName(_))));
        assert_eq!(f.library("shop").map(|l| l.name), Ok("shop_v1".to_string()));
    }
}
