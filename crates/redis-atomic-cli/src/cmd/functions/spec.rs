//! The library a `functions` run acts on: this binary's built-in `redis_atomic_v<N>`, or a user
//! library `NAME_v<N>` composed from a folder (`--library NAME --dir DIR`).
//!
//! Both are one [`LibrarySpec`] flowing through the same observe / deploy / rollback / diff code,
//! so a user library gets exactly the built-in's guarantees: versions side by side, every
//! primary checked, replicas verified, new shards found, different code under the same name or a
//! function name owned by another library refused. The user's folder is read the way the
//! runtime reads it (`ScriptSet`), so what `deploy` loads is byte for byte what a client loads
//! when a Function is missing.

use redis_atomic::script::{registry, LibraryDef, ScriptSet};
use redis_atomic_scripts::lockfile::LockProblem;
use redis_atomic_scripts::{Folder, FolderError};
use std::path::Path;

/// One Function library family and this run's version of it.
#[derive(Debug)]
pub struct LibrarySpec {
    /// The version this run deploys or compares with: name, version, code, SHA1.
    pub def: &'static LibraryDef,
    /// Every function it registers (names are global on a server: collisions are refused).
    pub functions: Vec<&'static str>,
    /// Libraries of the family are `<family>_v<N>`.
    family: String,
    /// The family in messages: `redis-atomic` or the user's NAME.
    pub label: String,
    /// Where the code comes from, for the report's first line.
    pub origin: String,
    /// The file that holds the version, for "bump it" hints.
    pub version_file: String,
    /// How the folder disagrees with its `scripts.lock` (deploy refuses while any).
    pub lock_problems: Vec<LockProblem>,
}

impl LibrarySpec {
    /// This binary's library.
    pub fn builtin() -> LibrarySpec {
        LibrarySpec {
            def: &registry::LIBRARY,
            functions: registry::ALL.iter().map(|s| s.function).collect(),
            family: "redis_atomic".to_string(),
            label: "redis-atomic".to_string(),
            origin: "this binary's library".to_string(),
            version_file: "scripts/library.version".to_string(),
            lock_problems: Vec::new(),
        }
    }

    /// The library `name` composed from the scripts of `dir` (checked against their headers;
    /// version from `dir/library.version`).
    pub fn user(name: &str, dir: &Path) -> Result<LibrarySpec, FolderError> {
        let folder = Folder::load(dir)?;
        let set = ScriptSet::from_folder(&folder, name)?;
        Ok(LibrarySpec {
            def: set.library(),
            functions: set.scripts().iter().map(|s| s.function).collect(),
            family: name.to_string(),
            label: name.to_string(),
            origin: format!("the library of {}", dir.display()),
            version_file: dir.join("library.version").display().to_string(),
            lock_problems: folder.lock_problems().unwrap_or_default(),
        })
    }

    /// `<family>_v`: every library of the family starts with it, the version follows.
    pub fn prefix(&self) -> String {
        format!("{}_v", self.family)
    }

    /// The name of version `version` of this family.
    pub fn name_of(&self, version: u32) -> String {
        format!("{}{version}", self.prefix())
    }

    /// The version of a library of this family, from its name (`None`: another family, or a
    /// name this family would not produce, such as `_v007`).
    pub fn version_of(&self, library: &str) -> Option<u32> {
        let digits = library.strip_prefix(&self.prefix())?;
        let version: u32 = digits.parse().ok()?;
        (version.to_string() == digits).then_some(version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names of the family parse back to their version; other families' names do not, even
    /// when they share the prefix (`shop_v` + `_v2`).
    #[test]
    fn family_names() {
        let spec = LibrarySpec::builtin();
        assert_eq!(spec.version_of(spec.def.name), Some(spec.def.version));
        assert_eq!(spec.version_of("redis_atomic_v_v2"), None);
        assert_eq!(spec.version_of("other_v2"), None);
        assert_eq!(spec.version_of("redis_atomic_v007"), None);
        assert_eq!(spec.name_of(7), "redis_atomic_v7");
        assert!(spec
            .functions
            .iter()
            .all(|f| f.starts_with(&format!("ra{}_", spec.def.version))));
    }
}
