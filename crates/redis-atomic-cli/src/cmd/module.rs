//! `redis-atomic module path`: where the server module (`libredis_atomic_module.so`,
//! docs/module.md) is, to hand to `--loadmodule`. Looked up, not compiled in: cargo builds the
//! module beside this binary (`target/<profile>/`), and `REDIS_ATOMIC_MODULE` names another copy.

use clap::Subcommand;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The module's file name on Linux.
pub const FILE: &str = "libredis_atomic_module.so";

/// `module` subcommands.
#[derive(Subcommand, Debug)]
pub enum ModuleCommand {
    /// Print the built module's path (beside this binary, or $REDIS_ATOMIC_MODULE). Exit 0
    /// found, 1 not built (`cargo build --release -p redis-atomic-module`).
    Path,
}

/// The module's path: `$REDIS_ATOMIC_MODULE` if set, else beside `exe`; None when absent.
pub fn find(env: Option<PathBuf>, exe: Option<&Path>) -> Option<PathBuf> {
    let candidate = match env {
        Some(path) => path,
        None => exe?.parent()?.join(FILE),
    };
    candidate.is_file().then_some(candidate)
}

/// This process's module ([`find`] with `$REDIS_ATOMIC_MODULE` and this binary), or why not.
pub fn located() -> anyhow::Result<PathBuf> {
    let env = std::env::var_os(redis_atomic_verify::MODULE_ENV).map(PathBuf::from);
    let exe = std::env::current_exe().ok();
    find(env, exe.as_deref()).ok_or_else(|| {
        anyhow::anyhow!(
            "{FILE} not found beside this binary (and REDIS_ATOMIC_MODULE unset or not a \
             file): cargo build --release -p redis-atomic-module"
        )
    })
}

pub(crate) fn run(command: ModuleCommand, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    match command {
        ModuleCommand::Path => match located() {
            Ok(path) => {
                let _ = writeln!(out, "{}", path.display());
                0
            }
            Err(e) => {
                let _ = writeln!(err, "{e}");
                1
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The variable wins; otherwise the file beside the binary, and only if it exists.
    #[test]
    fn finds_the_module() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let exe = dir.path().join("redis-atomic");
        assert_eq!(find(None, Some(&exe)), None);
        std::fs::write(dir.path().join(FILE), b"").expect("write");
        assert_eq!(find(None, Some(&exe)), Some(dir.path().join(FILE)));
        let other = dir.path().join("other.so");
        assert_eq!(find(Some(other.clone()), Some(&exe)), None);
        std::fs::write(&other, b"").expect("write");
        assert_eq!(find(Some(other.clone()), Some(&exe)), Some(other));
    }
}
