//! Loading a folder of scripts: every `*.lua` directly inside it, fragments from `include/`,
//! headers parsed and checked against their bodies, SHA1 over the exact bytes Redis runs.
//!
//! The library's `build.rs` loads its own `scripts/` this way; the CLI loads a user's folder the
//! same way, so the built-in and the user's scripts keep the same rules.

use crate::check::check_body;
use crate::header::{self, Header};
use crate::include::{self, Expanded};
use std::io::Read as _;
use std::path::{Path, PathBuf};

/// Largest script or fragment read, in bytes: far above any real script, far below what would
/// hurt a linter or a server.
pub const MAX_SCRIPT_BYTES: u64 = 1 << 20;

/// One loaded script.
#[derive(Clone, Debug)]
pub struct ScriptFile {
    /// File name without `.lua`: `<primitive>_<op>` for the built-ins.
    pub name: String,
    /// Where it was read from.
    pub path: PathBuf,
    /// The parsed header.
    pub header: Header,
    /// The source with includes expanded, and its line map.
    pub expanded: Expanded,
    /// SHA1 of the expanded source, as `SCRIPT LOAD` computes it.
    pub sha1: String,
}

impl ScriptFile {
    /// The exact source `EVALSHA` runs: includes expanded, shebang first.
    pub fn source(&self) -> &str {
        &self.expanded.text
    }

    /// The source without its shebang line: the body of a Function.
    pub fn function_body(&self) -> &str {
        self.source().split_once('\n').map_or("", |(_, b)| b)
    }
}

/// A script that could not be loaded, with the file and line concerned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadError {
    /// The file concerned.
    pub path: String,
    /// 1-based line (0: the whole file).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.path, self.message)
        } else {
            write!(f, "{}:{}: {}", self.path, self.line, self.message)
        }
    }
}

impl std::error::Error for LoadError {}

fn load_err(path: &Path, line: usize, message: impl Into<String>) -> LoadError {
    LoadError {
        path: path.display().to_string(),
        line,
        message: message.into(),
    }
}

/// Reads a regular file of at most [`MAX_SCRIPT_BYTES`] as UTF-8 text (FIFOs, devices and
/// oversized files are refused before they are read).
pub fn read_text(path: &Path) -> std::io::Result<String> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let mut text = String::new();
    let file = std::fs::File::open(path)?;
    file.take(MAX_SCRIPT_BYTES + 1).read_to_string(&mut text)?;
    if text.len() as u64 > MAX_SCRIPT_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than {MAX_SCRIPT_BYTES} bytes"),
        ));
    }
    Ok(text)
}

/// The `*.lua` files directly inside `dir`, sorted by name.
pub fn script_paths(dir: &Path) -> Result<Vec<PathBuf>, LoadError> {
    let entries = std::fs::read_dir(dir).map_err(|e| load_err(dir, 0, e.to_string()))?;
    let mut paths = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| load_err(dir, 0, e.to_string()))?.path();
        if path.extension().is_some_and(|x| x == "lua") && path.is_file() {
            paths.push(path);
        }
    }
    paths.sort();
    Ok(paths)
}

/// Loads every script of `dir` (fragments from `dir/include/`), refusing the first that fails:
/// a bad file name, CR bytes, an unknown include, a header that does not parse or disagrees
/// with its body.
pub fn load_dir(dir: &Path) -> Result<Vec<ScriptFile>, LoadError> {
    let includes = dir.join("include");
    script_paths(dir)?
        .iter()
        .map(|p| load_file(p, &includes))
        .collect()
}

/// Loads one script whose fragments live in `includes`.
pub fn load_file(path: &Path, includes: &Path) -> Result<ScriptFile, LoadError> {
    let name = script_name(path)?;
    let raw = read_text(path).map_err(|e| load_err(path, 0, e.to_string()))?;
    parse_source(path, &name, &raw, &mut include::from_dir(includes))
}

/// The script name of `path`: its file name without `.lua`, which must be lower snake case
/// (it becomes a Function name and a Rust identifier).
pub fn script_name(path: &Path) -> Result<String, LoadError> {
    path.file_stem()
        .and_then(|s| s.to_str())
        .filter(|n| crate::returns::is_name(n))
        .map(str::to_string)
        .ok_or_else(|| {
            load_err(
                path,
                0,
                "script file names are lower snake case, `<name>.lua`",
            )
        })
}

/// Parses and checks one script's text (includes resolved by `resolve`).
pub fn parse_source(
    path: &Path,
    name: &str,
    raw: &str,
    resolve: &mut dyn FnMut(&str) -> Result<Option<include::Fragment>, String>,
) -> Result<ScriptFile, LoadError> {
    let (file, problems) = parse_unchecked(path, name, raw, resolve)?;
    if let Some(first) = problems.first() {
        let more = match problems.len() {
            1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        return Err(load_err(
            path,
            0,
            format!("header and body disagree: {first}{more}"),
        ));
    }
    Ok(file)
}

/// Parses one script's text like [`parse_source`] but returns the ways its header and body
/// disagree ([`check_body`]) instead of refusing them, for tools that report every problem
/// (`redis-atomic scripts check`). Still an error: CR bytes, a header that does not parse, an
/// include that cannot be expanded.
pub fn parse_unchecked(
    path: &Path,
    name: &str,
    raw: &str,
    resolve: &mut dyn FnMut(&str) -> Result<Option<include::Fragment>, String>,
) -> Result<(ScriptFile, Vec<String>), LoadError> {
    if let Some(line) = raw.lines().position(|l| l.contains('\r')) {
        return Err(load_err(
            path,
            line + 1,
            "CR byte: scripts are LF-only (their SHA1 is byte-exact)",
        ));
    }
    let header = header::parse(raw).map_err(|e| load_err(path, e.line, e.message))?;
    let expanded = include::expand(&path.display().to_string(), raw, resolve)
        .map_err(|e| load_err(path, e.line, e.message))?;
    let problems = check_body(&header, header::body(&expanded.text));
    let sha1 = sha1_hex(&expanded.text);
    let file = ScriptFile {
        name: name.to_string(),
        path: path.to_path_buf(),
        header,
        expanded,
        sha1,
    };
    Ok((file, problems))
}

/// Lower-case hex SHA1 of `text`, as `SCRIPT LOAD` and `FUNCTION LIST` report it.
pub fn sha1_hex(text: &str) -> String {
    sha1_smol::Sha1::from(text).digest().to_string()
}
