//! Finding a folder's fixtures and holding them to the scripts before any server is started:
//! every `*.test.toml` under the folder parses, names a script of the folder, and passes as many
//! keys and arguments as that script's header declares. All such mistakes are usage errors
//! (exit 2), reported together, so a broken fixture never reads as a failing script.

use super::model::{self, Fixture};
use crate::cmd::scripts::UserFolder;
use std::path::{Path, PathBuf};

/// Most fixture files in one folder.
pub const MAX_FILES: usize = 1000;

/// Deepest subfolder searched for fixtures.
pub const MAX_DEPTH: usize = 8;

/// The suffix of a fixture file.
pub const SUFFIX: &str = ".test.toml";

/// Every fixture under `dir`, read and checked against `folder`'s scripts; or every problem.
pub fn fixtures(dir: &Path, folder: &UserFolder) -> Result<Vec<Fixture>, Vec<String>> {
    let paths = paths(dir).map_err(|e| vec![e])?;
    if paths.is_empty() {
        return Err(vec![format!(
            "{}: no *{SUFFIX} fixtures under this folder",
            dir.display()
        )]);
    }
    let (mut fixtures, mut problems) = (Vec::new(), Vec::new());
    for path in paths {
        match model::read(&path).and_then(|f| check(&f, folder).map(|()| f)) {
            Ok(f) => fixtures.push(f),
            Err(e) => problems.push(e),
        }
    }
    if problems.is_empty() {
        Ok(fixtures)
    } else {
        Err(problems)
    }
}

/// The fixture's script exists and each case fits its header's key and argument counts.
fn check(fixture: &Fixture, folder: &UserFolder) -> Result<(), String> {
    let at = fixture.path.display();
    let script = folder.find(&fixture.script).ok_or_else(|| {
        format!(
            "{at}: unknown script `{}`; this folder has: {}",
            fixture.script,
            folder.names()
        )
    })?;
    let h = &script.header;
    for (i, case) in fixture.cases.iter().enumerate() {
        if !h.accepts(case.keys.len(), case.args.len()) {
            return Err(format!(
                "{at}: case {} {:?}: {} takes keys [{}] and args [{}], the case gives {} key(s) \
                 and {} arg(s)",
                i + 1,
                case.name,
                script.name,
                h.keys.join(" "),
                h.args.join(" "),
                case.keys.len(),
                case.args.len()
            ));
        }
    }
    Ok(())
}

/// The `*.test.toml` files under `dir`, sorted; subfolders to [`MAX_DEPTH`], hidden ones and
/// symbolic links skipped, at most [`MAX_FILES`].
fn paths(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut found = Vec::new();
    let mut pending = vec![(dir.to_path_buf(), 0usize)];
    while let Some((folder, depth)) = pending.pop() {
        let entries =
            std::fs::read_dir(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("{}: {e}", folder.display()))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let kind = entry
                .file_type()
                .map_err(|e| format!("{}: {e}", entry.path().display()))?;
            if name.starts_with('.') {
                continue;
            }
            if kind.is_dir() && depth < MAX_DEPTH {
                pending.push((entry.path(), depth + 1));
            } else if kind.is_file() && name.ends_with(SUFFIX) {
                found.push(entry.path());
                if found.len() > MAX_FILES {
                    return Err(format!(
                        "{}: more than {MAX_FILES} fixture files",
                        dir.display()
                    ));
                }
            }
        }
    }
    found.sort();
    Ok(found)
}
