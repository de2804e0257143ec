//! A user's folder as the CLI takes it: a directory of `*.lua` scripts, its `library.version`
//! and the library name (`--library NAME`, default the folder's name). Naming and versions come
//! from `redis_atomic_scripts::folder`, so `scripts`, `test` and `functions` agree on them.

use anyhow::{bail, Context as _};
use redis_atomic_scripts::codegen::Library;
use redis_atomic_scripts::folder as user;
use redis_atomic_scripts::{load, Folder, FolderError, ScriptFile};
use std::path::{Path, PathBuf};

/// A loaded folder: every script (headers agreeing with bodies) and its library.
#[derive(Debug)]
pub struct UserFolder {
    /// The folder.
    pub dir: PathBuf,
    /// Its scripts, sorted by name.
    pub scripts: Vec<ScriptFile>,
    /// The Function library they compose: `<NAME>_v<N>`, functions `<NAME><N>_<script>`.
    pub library: Library,
}

impl UserFolder {
    /// Loads `dir` strictly (the first script that fails to load is the error, as in `build.rs`);
    /// `library` overrides the folder-derived library name.
    pub fn load(dir: &Path, library: Option<&str>) -> anyhow::Result<UserFolder> {
        script_paths(dir)?;
        let folder = Folder::load(dir).map_err(|e| match e {
            FolderError::Load(e) => {
                anyhow::anyhow!("{e} (`redis-atomic scripts check` lists every problem)")
            }
            other => anyhow::Error::msg(other.to_string()),
        })?;
        let name = library_name(dir, library)?;
        Ok(UserFolder {
            library: user::user_library(&name, folder.version),
            dir: folder.dir,
            scripts: folder.scripts,
        })
    }

    /// The library's source, as `FUNCTION LOAD` takes it.
    pub fn library_source(&self) -> String {
        redis_atomic_scripts::codegen::library_source(&self.scripts, &self.library)
    }

    /// The script called `name`.
    pub fn find(&self, name: &str) -> Option<&ScriptFile> {
        self.scripts.iter().find(|s| s.name == name)
    }

    /// Every script name, comma separated (for "known: ..." messages).
    pub fn names(&self) -> String {
        let names: Vec<&str> = self.scripts.iter().map(|s| s.name.as_str()).collect();
        names.join(", ")
    }
}

/// The `*.lua` files directly inside `dir`; an error when `dir` is not a readable directory or
/// holds none.
pub(crate) fn script_paths(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    if !dir.is_dir() {
        bail!("{}: not a directory", dir.display());
    }
    let paths = load::script_paths(dir).map_err(anyhow::Error::msg)?;
    if paths.is_empty() {
        bail!("{}: no *.lua scripts in this folder", dir.display());
    }
    Ok(paths)
}

/// The library name: `library` when given, else the folder's sanitised name; either way checked
/// by the one rule (`redis_atomic_scripts::folder::check_library_name`).
pub(crate) fn library_name(dir: &Path, library: Option<&str>) -> anyhow::Result<String> {
    let name = match library {
        Some(name) => name.to_string(),
        None => user::default_library_name(dir).with_context(|| {
            format!(
                "{}: no usable folder name: pass --library NAME",
                dir.display()
            )
        })?,
    };
    match (user::check_library_name(&name), library) {
        (Ok(()), _) => Ok(name),
        (Err(why), Some(_)) => bail!("--library: {why}"),
        (Err(why), None) => bail!(
            "{}: the folder's name gives no usable library name ({why}): pass --library NAME",
            dir.display()
        ),
    }
}
