//! envoyproxy/ratelimit's YAML, read as it is: one file per domain, or a directory of them.
//!
//! ```yaml
//! domain: mongo_cps
//! descriptors:
//!   - key: database
//!     value: users
//!     rate_limit:
//!       unit: second
//!       requests_per_unit: 500
//! ```
//!
//! Every field the reference server knows is accepted (`domain`, `descriptors`, `key`, `value`,
//! `rate_limit` with `unit`, `requests_per_unit`, `unlimited`, `name`, `replaces`; `shadow_mode`,
//! `quota_mode`, `detailed_metric`, `value_to_metric`, `share_threshold`, `metadata`), and refused
//! beyond it, as the reference refuses unknown keys — except this server's opt-in extensions:
//! `rate_limit.algorithm` (one of the library's six; default the fixed window, aligned to the
//! epoch like the reference's), `rate_limit.burst` (token bucket and GCRA), and at the top of a
//! file `hash_tag` (the descriptor key whose value keeps one request's keys in one cluster slot)
//! and `response_headers` (`off`, `ietf` or `draft-03`). A file is refused as a whole with one
//! line naming the file, the line and the field ([`RlsConfigError`]); the server then keeps the
//! rules it had ([`super::reload`]).

mod tree;

pub(crate) use tree::library_limit;
pub use tree::{Domain, HeaderMode, Matched, Rule, RuleLimit, Rules, Unit};

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_saphyr::Spanned;
use std::path::{Path, PathBuf};

/// Largest config file read, in bytes.
pub const MAX_FILE_BYTES: u64 = 1 << 20;
/// Most files read from a directory.
pub const MAX_FILES: usize = 1000;
/// Deepest descriptor nesting accepted.
pub const MAX_DEPTH: usize = 16;

/// Why the rules were refused: one line, `file:line: field: reason`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}{}: {field}: {reason}", line.map(|l| format!(":{l}")).unwrap_or_default())]
#[non_exhaustive]
pub struct RlsConfigError {
    /// The file.
    pub file: String,
    /// The line, when known.
    pub line: Option<u32>,
    /// The field (`descriptors[0].rate_limit.unit`), or `file` for the file as a whole.
    pub field: String,
    /// Why.
    pub reason: String,
}

/// One file as the reference server reads it (plus the opt-in extensions).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct YamlRoot {
    pub domain: Spanned<String>,
    #[serde(default)]
    pub descriptors: Vec<YamlDescriptor>,
    /// Extension: the descriptor key whose value is the request's hash tag.
    #[serde(default)]
    pub hash_tag: Option<Spanned<String>>,
    /// Extension: `off` (default), `ietf` or `draft-03`.
    #[serde(default)]
    pub response_headers: Option<Spanned<String>>,
}

/// A descriptor level.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct YamlDescriptor {
    pub key: Spanned<String>,
    #[serde(default)]
    pub value: Option<String>,
    #[serde(default)]
    pub rate_limit: Option<Spanned<YamlRateLimit>>,
    #[serde(default)]
    pub descriptors: Vec<YamlDescriptor>,
    #[serde(default)]
    pub shadow_mode: bool,
    #[serde(default)]
    pub quota_mode: bool,
    #[serde(default)]
    pub detailed_metric: bool,
    /// Accepted; metrics use the config path (see docs/envoy.md).
    #[serde(default)]
    #[allow(dead_code)] // read by the reference server only
    pub value_to_metric: bool,
    #[serde(default)]
    pub share_threshold: bool,
    /// Accepted and ignored: this server sends no dynamic metadata.
    #[serde(default)]
    #[allow(dead_code)] // read by the reference server only
    pub metadata: Option<IgnoredAny>,
}

/// A `rate_limit` block.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct YamlRateLimit {
    #[serde(default)]
    pub requests_per_unit: u32,
    #[serde(default)]
    pub unit: Option<String>,
    #[serde(default)]
    pub unlimited: bool,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub replaces: Vec<YamlReplaces>,
    /// Extension: one of the library's algorithms (`fixed-window` by default).
    #[serde(default)]
    pub algorithm: Option<String>,
    /// Extension: the bucket algorithms' burst.
    #[serde(default)]
    pub burst: Option<u64>,
}

/// One `replaces` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct YamlReplaces {
    pub name: String,
}

impl Rules {
    /// Loads `path`: a YAML file, or every `*.yaml` / `*.yml` file of a directory (sorted by
    /// name, not recursing), one domain per file.
    pub fn load(path: &Path) -> Result<Rules, RlsConfigError> {
        let files = files_of(path)?;
        let mut texts = Vec::with_capacity(files.len());
        for f in files {
            let text = read(&f)?;
            texts.push((f.display().to_string(), text));
        }
        Rules::parse(texts.iter().map(|(f, t)| (f.as_str(), t.as_str())))
    }

    /// Parses `(file name, text)` pairs, one domain each.
    pub fn parse<'a>(
        files: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Rules, RlsConfigError> {
        let mut rules = Rules::default();
        for (file, text) in files {
            let root: YamlRoot = serde_saphyr::from_str(text).map_err(|e| parse_error(file, &e))?;
            rules.add(file, root)?;
        }
        Ok(rules)
    }
}

fn files_of(path: &Path) -> Result<Vec<PathBuf>, RlsConfigError> {
    let meta = std::fs::metadata(path).map_err(|e| file_error(path, e.to_string()))?;
    if !meta.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files = Vec::new();
    let dir = std::fs::read_dir(path).map_err(|e| file_error(path, e.to_string()))?;
    for entry in dir {
        let p = entry.map_err(|e| file_error(path, e.to_string()))?.path();
        let yaml = p.extension().is_some_and(|x| x == "yaml" || x == "yml");
        if yaml && p.is_file() {
            files.push(p);
        }
        if files.len() > MAX_FILES {
            return Err(file_error(path, format!("more than {MAX_FILES} files")));
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(file_error(path, "no *.yaml or *.yml file".into()));
    }
    Ok(files)
}

fn read(path: &Path) -> Result<String, RlsConfigError> {
    let meta = std::fs::metadata(path).map_err(|e| file_error(path, e.to_string()))?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(file_error(
            path,
            format!("larger than {MAX_FILE_BYTES} bytes"),
        ));
    }
    std::fs::read_to_string(path).map_err(|e| file_error(path, e.to_string()))
}

fn file_error(path: &Path, reason: String) -> RlsConfigError {
    RlsConfigError {
        file: path.display().to_string(),
        line: None,
        field: "file".into(),
        reason,
    }
}

/// A parser error on one line: the parser's first line of message and its location.
fn parse_error(file: &str, e: &serde_saphyr::Error) -> RlsConfigError {
    let text = e.to_string();
    let reason = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("invalid YAML")
        .trim()
        .to_string();
    RlsConfigError {
        file: file.to_string(),
        line: e.location().map(|l| l.line() as u32),
        field: "yaml".into(),
        reason,
    }
}

/// Resolves the paths of a config (a file or a directory) as they stand now, for change checks.
pub(crate) fn stamp(path: &Path) -> Vec<(PathBuf, Option<std::time::SystemTime>, u64)> {
    let files = files_of(path).unwrap_or_default();
    files
        .into_iter()
        .map(|f| {
            let m = std::fs::metadata(&f).ok();
            let modified = m.as_ref().and_then(|m| m.modified().ok());
            (f, modified, m.map(|m| m.len()).unwrap_or(0))
        })
        .collect()
}
