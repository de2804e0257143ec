//! A folder of scripts as one unit: its scripts, the version of the Function library composed
//! from them (`library.version`) and its lock file (`scripts.lock`).
//!
//! The built-in `scripts/` and a user's folder have the same layout, and every tool reads them
//! through [`Folder::load`]: the build helper ([`crate::build`]), the CLI's `functions
//! --library NAME --dir DIR`, and the library's runtime `ScriptSet`. One reader means one set of
//! rules: a folder that a build accepts is the folder a deploy ships.

use crate::codegen::Library;
use crate::load::{self, LoadError, ScriptFile};
use crate::lockfile::{self, Kind, LockEntry, LockProblem};
use std::path::{Path, PathBuf};

/// The file holding the library version: one positive integer.
pub const VERSION_FILE: &str = "library.version";
/// The lock file: `name version sha1` per script.
pub const LOCK_FILE: &str = "scripts.lock";

/// A loaded folder.
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
    Version {
        /// The version file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The folder holds no `*.lua` script.
    Empty {
        /// The folder.
        path: String,
    },
    /// The library name cannot be used ([`crate::codegen::check_library_name`]).
    LibraryName(String),
}

impl std::fmt::Display for FolderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FolderError::Load(e) => e.fmt(f),
            FolderError::Version { path, message } => write!(f, "{path}: {message}"),
            FolderError::Empty { path } => write!(f, "{path}: no *.lua scripts"),
            FolderError::LibraryName(message) => f.write_str(message),
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
        let path = dir.join(VERSION_FILE);
        let version_err = |message: String| FolderError::Version {
            path: path.display().to_string(),
            message,
        };
        let text = load::read_text(&path).map_err(|e| version_err(e.to_string()))?;
        let version = text
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|v| *v > 0)
            .ok_or_else(|| version_err("must hold one positive integer".to_string()))?;
        Ok(Folder {
            dir: dir.to_path_buf(),
            scripts,
            version,
        })
    }

    /// The user library `NAME_v<N>` these scripts compose (N from [`VERSION_FILE`]).
    pub fn library(&self, name: &str) -> Result<Library, FolderError> {
        Library::user(name, self.version).map_err(FolderError::LibraryName)
    }

    /// The lock entries of the scripts as they are now (what `scripts lock` writes).
    pub fn lock_entries(&self) -> Vec<LockEntry> {
        self.scripts
            .iter()
            .map(|s| LockEntry::script(&s.name, s.header.version, &s.sha1))
            .collect()
    }

    /// How the scripts disagree with [`LOCK_FILE`]; `None` when the folder has no lock file.
    /// Only script entries are compared: a user library's name (and so its SHA1) is chosen at
    /// deploy time, so a `library` line in the lock, if any, is not this folder's to judge.
    pub fn lock_problems(&self) -> Option<Vec<LockProblem>> {
        let path = self.dir.join(LOCK_FILE);
        let text = match load::read_text(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => {
                return Some(vec![LockProblem::Stale {
                    detail: format!("{}: {e}", path.display()),
                }])
            }
        };
        let scripts: Vec<LockEntry> = lockfile::parse(&text)
            .into_iter()
            .filter(|e| e.kind == Kind::Script)
            .collect();
        Some(lockfile::check(
            &self.lock_entries(),
            &lockfile::render("", &scripts),
        ))
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

    /// A folder with scripts and a version loads; a lock written from it checks clean, and a
    /// changed byte without a version bump is found.
    #[test]
    fn loads_and_checks_its_lock() {
        let dir = folder(&[("one.lua", SCRIPT), (VERSION_FILE, "3\n")]);
        let f = Folder::load(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((f.version, f.scripts.len()), (3, 1));
        assert_eq!(f.lock_problems(), None);
        let lock = lockfile::render("c", &f.lock_entries());
        let with_library = format!("{lock}library other_v3 3 abc\n");
        std::fs::write(dir.path().join(LOCK_FILE), with_library).unwrap_or_else(|e| panic!("{e}"));
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
            Err(FolderError::Version { .. })
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
