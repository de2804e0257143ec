//! `scripts bindings --lang ts|java|go (DIR | --builtin)`: the typed script layer of another
//! language, generated from the headers by `redis_atomic_scripts::codegen` (one model, one
//! emitter per language). The built-ins are re-read from the generated registry's own sources
//! (so they cannot disagree with the library); a folder by the loader `build.rs` uses.

use super::folder::UserFolder;
use anyhow::bail;
use redis_atomic::script::registry;
use redis_atomic_scripts::codegen::{foreign, go, java, ts, Library};
use redis_atomic_scripts::{load, ScriptFile};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Arguments of `scripts bindings`.
#[derive(Debug, clap::Args)]
pub struct BindingsArgs {
    /// Target language: ts, java or go.
    #[arg(long)]
    pub lang: String,
    /// Package name (Java default `redisatomic.scripts`, Go default `scripts`; unused for ts).
    #[arg(long)]
    pub package: Option<String>,
    /// Where to write: a file (ts, go) or a directory (java); `-` or absent prints to stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Library name for DIR (default: the folder's name, sanitised to [a-z0-9_]).
    #[arg(long, requires = "dir")]
    pub library: Option<String>,
    /// The library's own scripts instead of DIR.
    #[arg(long, conflicts_with = "dir")]
    pub builtin: bool,
    /// A folder of your own scripts.
    #[arg(required_unless_present = "builtin")]
    pub dir: Option<PathBuf>,
}

/// Runs `scripts bindings`.
pub(super) fn run(args: &BindingsArgs, out: &mut dyn Write) -> anyhow::Result<i32> {
    let (scripts, lib) = match &args.dir {
        Some(dir) => {
            let folder = UserFolder::load(dir, args.library.as_deref())?;
            (folder.scripts, folder.library)
        }
        None => builtin()?,
    };
    let set = foreign::model(&scripts, &lib);
    let files: Vec<(String, String)> = match args.lang.as_str() {
        "ts" => vec![(
            "scripts.ts".into(),
            ts::emit(&set).map_err(anyhow::Error::msg)?,
        )],
        "go" => {
            let package = args.package.as_deref().unwrap_or("scripts");
            vec![(
                "scripts.go".into(),
                go::emit(&set, package).map_err(anyhow::Error::msg)?,
            )]
        }
        "java" => {
            let package = args.package.as_deref().unwrap_or("redisatomic.scripts");
            java::emit(&set, package).map_err(anyhow::Error::msg)?
        }
        other => bail!("--lang: `{other}` is not one of ts, java, go"),
    };
    write(&files, args.out.as_deref(), args.lang == "java", out)?;
    Ok(0)
}

/// The built-in scripts, re-parsed from the registry's sources (includes already expanded).
fn builtin() -> anyhow::Result<(Vec<ScriptFile>, Library)> {
    let lib = Library::builtin(registry::LIBRARY_VERSION);
    let scripts = registry::ALL
        .iter()
        .map(|def| {
            let path = PathBuf::from(format!("{}.lua", def.name));
            load::parse_source(&path, def.name, def.source, &mut |_| Ok(None))
                .map_err(|e| anyhow::anyhow!("built-in {}: {e}", def.name))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok((scripts, lib))
}

fn write(
    files: &[(String, String)],
    dest: Option<&Path>,
    dir: bool,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    match dest {
        None => print(files, out),
        Some(p) if p == Path::new("-") => print(files, out),
        Some(p) if dir => {
            std::fs::create_dir_all(p).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
            for (name, text) in files {
                let path = p.join(name);
                std::fs::write(&path, text)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            }
            Ok(())
        }
        Some(p) => {
            let text: String = files.iter().map(|(_, t)| t.as_str()).collect();
            std::fs::write(p, text).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))
        }
    }
}

fn print(files: &[(String, String)], out: &mut dyn Write) -> anyhow::Result<()> {
    let many = files.len() > 1;
    for (name, text) in files {
        if many {
            writeln!(out, "// ---- {name}")?;
        }
        out.write_all(text.as_bytes())?;
    }
    Ok(())
}
