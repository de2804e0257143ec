//! The script header: a `#!lua` shebang, then `--- name: value` lines.
//!
//! ```lua
//! #!lua flags=no-writes
//! --- summary: read a lock's state without changing it
//! --- invariant: reads only
//! --- keys: lock fence
//! --- args: -
//! --- returns: {'held', fence:fence, ttl:ms} | {'free', last_fence:fence}
//! --- retry: safe
//! --- version: 1
//! ```
//!
//! One optional line: `--- batch: yes` lets the client run the script as one decision among
//! others in a single server call when calls queue up (see [`crate::codegen::batch`]); without
//! it (or with `--- batch: no`) every call is a call of its own.
//!
//! Parsed once for everyone: the library's `build.rs` (registry and reply types), its tests, and
//! the CLI's `lint` and `scripts` commands, so a header that drifts fails in one place with one
//! message. The `returns:` line is machine-readable ([`crate::returns`]).

use crate::returns::{self, Returns};
use std::fmt;

/// Shebang flags a script may declare (Redis 7 `#!lua flags=...`).
pub const KNOWN_FLAGS: &[&str] = &[
    "no-writes",
    "allow-oom",
    "allow-stale",
    "no-cluster",
    "allow-cross-slot-keys",
];

/// What a retry after an unknown outcome does, as declared by `--- retry:`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RetryClass {
    /// Running twice has the effect of running once: the client retries after an unknown outcome.
    Safe,
    /// A second run may repeat the effect: an unknown outcome is returned to the caller, never
    /// retried.
    Unsafe,
}

impl RetryClass {
    /// `safe` / `unsafe`, as in the header.
    pub fn as_str(self) -> &'static str {
        match self {
            RetryClass::Safe => "safe",
            RetryClass::Unsafe => "unsafe",
        }
    }

    /// The Rust path of this variant, for generated code (`RetryClass::Safe`).
    pub fn variant(self) -> &'static str {
        match self {
            RetryClass::Safe => "Safe",
            RetryClass::Unsafe => "Unsafe",
        }
    }
}

/// A parsed script header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Shebang flags, in file order.
    pub flags: Vec<String>,
    /// One-line summary.
    pub summary: String,
    /// The invariant the script keeps.
    pub invariant: String,
    /// Names of `KEYS[1..]`; a trailing `name...` makes the list variadic.
    pub keys: Vec<String>,
    /// Names of `ARGV[1..]`; a trailing `name...` makes the list variadic.
    pub args: Vec<String>,
    /// The `returns:` line as written.
    pub returns: String,
    /// The `returns:` line parsed: every reply shape the script may return.
    pub shapes: Returns,
    /// Retry class.
    pub retry: RetryClass,
    /// Version, bumped whenever the bytes change.
    pub version: u32,
    /// `--- batch: yes`: calls may be coalesced with others into one batch call (optional line,
    /// `no` by default).
    pub batch: bool,
}

/// A header that could not be parsed, with the 1-based line it concerns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderError {
    /// 1-based line number (0 when the whole file is concerned).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for HeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for HeaderError {}

pub(crate) fn err(line: usize, message: impl Into<String>) -> HeaderError {
    HeaderError {
        line,
        message: message.into(),
    }
}

impl Header {
    /// Whether the key list ends with a variadic `name...` entry.
    pub fn variadic_keys(&self) -> bool {
        self.keys.last().is_some_and(|k| k.ends_with("..."))
    }

    /// Whether the argument list ends with a variadic `name...` entry.
    pub fn variadic_args(&self) -> bool {
        self.args.last().is_some_and(|a| a.ends_with("..."))
    }

    /// Whether `keys` keys and `args` arguments fit the header: exactly the declared counts, or,
    /// where the last declared name is variadic (`name...`), the fixed ones plus any number more.
    pub fn accepts(&self, keys: usize, args: usize) -> bool {
        fn fits(declared: &[String], variadic: bool, n: usize) -> bool {
            if variadic {
                n + 1 >= declared.len()
            } else {
                n == declared.len()
            }
        }
        fits(&self.keys, self.variadic_keys(), keys) && fits(&self.args, self.variadic_args(), args)
    }

    /// Whether the script declares `no-writes`.
    pub fn read_only(&self) -> bool {
        self.flags.iter().any(|f| f == "no-writes")
    }
}

const FIELDS: &[&str] = &[
    "summary",
    "invariant",
    "keys",
    "args",
    "returns",
    "retry",
    "version",
    "batch",
];

/// Parses the shebang and `---` header at the top of `source`.
pub fn parse(source: &str) -> Result<Header, HeaderError> {
    let mut lines = source.lines().enumerate();
    let (_, first) = lines.next().ok_or_else(|| err(0, "empty script"))?;
    let flags = parse_shebang(first)?;
    let mut fields: Vec<(usize, String, String)> = Vec::new();
    for (i, line) in lines {
        let Some(rest) = line.strip_prefix("---") else {
            break;
        };
        let (name, value) = rest
            .split_once(':')
            .ok_or_else(|| err(i + 1, "header line must look like `--- name: value`"))?;
        let name = name.trim().to_string();
        if !FIELDS.contains(&name.as_str()) {
            return Err(err(i + 1, format!("unknown header field `{name}`")));
        }
        if fields.iter().any(|(_, n, _)| *n == name) {
            return Err(err(i + 1, format!("header field `{name}` given twice")));
        }
        fields.push((i + 1, name, value.trim().to_string()));
    }
    let get = |name: &str| -> Result<(usize, String), HeaderError> {
        fields
            .iter()
            .find(|(_, n, _)| n == name)
            .map(|(l, _, v)| (*l, v.clone()))
            .ok_or_else(|| err(0, format!("missing `--- {name}:` header line")))
    };
    let (returns_line, returns) = get("returns")?;
    let shapes = returns::parse(&returns).map_err(|m| err(returns_line, m))?;
    Ok(Header {
        flags,
        summary: non_empty(get("summary")?)?,
        invariant: non_empty(get("invariant")?)?,
        keys: names(get("keys")?)?,
        args: names(get("args")?)?,
        returns,
        shapes,
        retry: retry_class(get("retry")?)?,
        version: version(get("version")?)?,
        batch: match get("batch") {
            Ok(line) => yes_no(line)?,
            Err(_) => false, // optional: absent means no
        },
    })
}

fn yes_no((line, value): (usize, String)) -> Result<bool, HeaderError> {
    match value.as_str() {
        "yes" => Ok(true),
        "no" => Ok(false),
        other => Err(err(line, format!("batch must be yes|no, not `{other}`"))),
    }
}

fn retry_class((line, value): (usize, String)) -> Result<RetryClass, HeaderError> {
    match value.as_str() {
        "safe" => Ok(RetryClass::Safe),
        "unsafe" => Ok(RetryClass::Unsafe),
        other => Err(err(
            line,
            format!("retry must be safe|unsafe, not `{other}`"),
        )),
    }
}

fn version((line, value): (usize, String)) -> Result<u32, HeaderError> {
    value
        .parse()
        .ok()
        .filter(|v| *v > 0)
        .ok_or_else(|| err(line, "version must be a positive integer"))
}

fn non_empty((line, value): (usize, String)) -> Result<String, HeaderError> {
    if value.is_empty() {
        Err(err(line, "header value must not be empty"))
    } else {
        Ok(value)
    }
}

/// `keys: lock fence` or `keys: -` (none). Commas are accepted as separators. Names are lower
/// snake case (they become Rust identifiers and documentation), only the last may be variadic.
fn names((line, value): (usize, String)) -> Result<Vec<String>, HeaderError> {
    let list: Vec<String> = value
        .split([' ', ','])
        .filter(|s| !s.is_empty() && *s != "-")
        .map(str::to_string)
        .collect();
    for (i, name) in list.iter().enumerate() {
        let bare = name.strip_suffix("...").unwrap_or(name);
        if bare.len() < name.len() && i + 1 != list.len() {
            return Err(err(
                line,
                format!("only the last name may be variadic: `{name}`"),
            ));
        }
        if !returns::is_name(bare) {
            return Err(err(
                line,
                format!("`{name}` is not a lower snake case name"),
            ));
        }
    }
    Ok(list)
}

fn parse_shebang(first: &str) -> Result<Vec<String>, HeaderError> {
    let rest = first
        .strip_prefix("#!lua")
        .ok_or_else(|| err(1, "first line must be a `#!lua` shebang"))?;
    let mut flags = Vec::new();
    for part in rest.split_whitespace() {
        let list = part
            .strip_prefix("flags=")
            .ok_or_else(|| err(1, format!("unexpected shebang option `{part}`")))?;
        for flag in list.split(',').filter(|f| !f.is_empty()) {
            if !KNOWN_FLAGS.contains(&flag) {
                return Err(err(1, format!("unknown shebang flag `{flag}`")));
            }
            flags.push(flag.to_string());
        }
    }
    Ok(flags)
}

/// The source after the header: what follows the last `---` line.
pub fn body(source: &str) -> &str {
    let mut offset = 0;
    for (i, line) in source.split_inclusive('\n').enumerate() {
        if i > 0 && !line.starts_with("---") {
            break;
        }
        offset += line.len();
    }
    &source[offset..]
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &str = "#!lua flags=no-writes\n--- summary: s\n--- invariant: i\n--- keys: a b\n--- args: -\n--- returns: {'ok', n}\n--- retry: safe\n--- version: 3\nreturn {'ok', 1}\n";

    /// A complete header parses into every field.
    #[test]
    fn parses_every_field() {
        let h = parse(OK).unwrap();
        assert_eq!(h.flags, ["no-writes"]);
        assert_eq!(h.keys, ["a", "b"]);
        assert!(h.args.is_empty());
        assert_eq!(h.retry, RetryClass::Safe);
        assert_eq!(h.version, 3);
        assert!(!h.batch);
        assert_eq!(h.shapes.shapes.len(), 1);
        let batched = parse(&OK.replace("--- version: 3", "--- version: 3\n--- batch: yes"));
        assert!(batched.unwrap().batch);
        assert_eq!(body(OK), "return {'ok', 1}\n");
    }

    /// Every malformed header is an error naming its line, never a panic.
    #[test]
    fn bad_headers_name_their_line() {
        for (from, to, line) in [
            ("--- retry: safe", "--- retry: maybe", 7),
            ("--- version: 3", "--- version: 0", 8),
            ("--- returns: {'ok', n}", "--- returns: ok", 6),
            ("--- keys: a b", "--- keys: a... b", 4),
            ("--- keys: a b", "--- keys: A", 4),
            ("--- summary: s", "--- sumary: s", 2),
            ("#!lua flags=no-writes", "#!lua flags=fast", 1),
            ("--- version: 3", "--- version: 3\n--- batch: maybe", 9),
        ] {
            let e = parse(&OK.replace(from, to)).unwrap_err();
            assert_eq!(e.line, line, "{to}: {e}");
        }
        assert!(parse("").is_err());
        assert!(parse(&OK.replace("--- version: 3\n", "")).is_err());
    }
}
