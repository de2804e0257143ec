//! The script header format, parsed once for everyone.
//!
//! Every `scripts/*.lua` file starts with a shebang and a `---` header (see DESIGN.md, "Scripts").
//! This module is plain `std` so that `build.rs` can `#[path]`-include it to generate the
//! registry, while the library's tests and the CLI's linter use the very same parser and body
//! checks: a header that drifts from its body fails in one place, with one message.

use std::fmt;

/// Redis commands that write. A script that calls one of them must not carry `no-writes`, and a
/// script that calls none of them must carry it (so it can run on replicas via `EVALSHA_RO`).
pub const WRITE_COMMANDS: &[&str] = &[
    "APPEND",
    "BITFIELD",
    "BLMOVE",
    "BLPOP",
    "BRPOP",
    "BZPOPMAX",
    "BZPOPMIN",
    "COPY",
    "DECR",
    "DECRBY",
    "DEL",
    "EXPIRE",
    "EXPIREAT",
    "GETDEL",
    "GETEX",
    "GETSET",
    "HDEL",
    "HINCRBY",
    "HINCRBYFLOAT",
    "HMSET",
    "HSET",
    "HSETNX",
    "INCR",
    "INCRBY",
    "INCRBYFLOAT",
    "LINSERT",
    "LMOVE",
    "LMPOP",
    "LPOP",
    "LPUSH",
    "LPUSHX",
    "LREM",
    "LSET",
    "LTRIM",
    "MOVE",
    "MSET",
    "MSETNX",
    "PERSIST",
    "PEXPIRE",
    "PEXPIREAT",
    "PFADD",
    "PFMERGE",
    "PSETEX",
    "RENAME",
    "RENAMENX",
    "RESTORE",
    "RPOP",
    "RPOPLPUSH",
    "RPUSH",
    "RPUSHX",
    "SADD",
    "SDIFFSTORE",
    "SET",
    "SETBIT",
    "SETEX",
    "SETNX",
    "SETRANGE",
    "SINTERSTORE",
    "SMOVE",
    "SPOP",
    "SREM",
    "SUNIONSTORE",
    "UNLINK",
    "XACK",
    "XADD",
    "XAUTOCLAIM",
    "XCLAIM",
    "XDEL",
    "XGROUP",
    "XTRIM",
    "ZADD",
    "ZDIFFSTORE",
    "ZINCRBY",
    "ZINTERSTORE",
    "ZMPOP",
    "ZPOPMAX",
    "ZPOPMIN",
    "ZRANGESTORE",
    "ZREM",
    "ZREMRANGEBYLEX",
    "ZREMRANGEBYRANK",
    "ZREMRANGEBYSCORE",
    "ZUNIONSTORE",
];

/// Shebang flags a script may declare (Redis 7 `#!lua flags=...`).
pub const KNOWN_FLAGS: &[&str] = &[
    "no-writes",
    "allow-oom",
    "allow-stale",
    "no-cluster",
    "allow-cross-slot-keys",
];

/// What a retry after an unknown outcome does, as declared by `--- retry:`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryDecl {
    /// Running the script twice with the same arguments has the effect of running it once.
    Safe,
    /// A second run may apply the effect again: never retried once it may have been sent.
    Unsafe,
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
    /// What the script returns.
    pub returns: String,
    /// Retry class.
    pub retry: RetryDecl,
    /// Version, bumped whenever the bytes change.
    pub version: u32,
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

fn err(line: usize, message: impl Into<String>) -> HeaderError {
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

    /// Whether the script declares `no-writes`.
    pub fn read_only(&self) -> bool {
        self.flags.iter().any(|f| f == "no-writes")
    }
}

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
        fields.push((i + 1, name.trim().to_string(), value.trim().to_string()));
    }
    let get = |name: &str| -> Result<(usize, String), HeaderError> {
        fields
            .iter()
            .find(|(_, n, _)| n == name)
            .map(|(l, _, v)| (*l, v.clone()))
            .ok_or_else(|| err(0, format!("missing `--- {name}:` header line")))
    };
    for (line, name, _) in &fields {
        if !FIELDS.contains(&name.as_str()) {
            return Err(err(*line, format!("unknown header field `{name}`")));
        }
    }
    let (retry_line, retry) = get("retry")?;
    let (version_line, version) = get("version")?;
    Ok(Header {
        flags,
        summary: non_empty(get("summary")?)?,
        invariant: non_empty(get("invariant")?)?,
        keys: names(&get("keys")?.1),
        args: names(&get("args")?.1),
        returns: non_empty(get("returns")?)?,
        retry: match retry.as_str() {
            "safe" => RetryDecl::Safe,
            "unsafe" => RetryDecl::Unsafe,
            other => {
                return Err(err(
                    retry_line,
                    format!("retry must be safe|unsafe, not `{other}`"),
                ))
            }
        },
        version: version
            .parse()
            .ok()
            .filter(|v| *v > 0)
            .ok_or_else(|| err(version_line, "version must be a positive integer"))?,
    })
}

const FIELDS: &[&str] = &[
    "summary",
    "invariant",
    "keys",
    "args",
    "returns",
    "retry",
    "version",
];

fn non_empty((line, value): (usize, String)) -> Result<String, HeaderError> {
    if value.is_empty() {
        Err(err(line, "header value must not be empty"))
    } else {
        Ok(value)
    }
}

/// `keys: lock fence` or `keys: -` (none). Commas are accepted as separators.
fn names(value: &str) -> Vec<String> {
    value
        .split([' ', ','])
        .filter(|s| !s.is_empty() && *s != "-")
        .map(str::to_string)
        .collect()
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

/// Highest literal index used as `NAME[n]` in `source` and whether a non-literal index appears.
pub fn highest_index(source: &str, table: &str) -> (usize, bool) {
    let pattern = format!("{table}[");
    let (mut highest, mut dynamic) = (0, false);
    for (pos, _) in code_only(source).match_indices(&pattern) {
        let rest = &source[pos + pattern.len()..];
        let inner = rest.split(']').next().unwrap_or("");
        match inner.trim().parse::<usize>() {
            Ok(n) => highest = highest.max(n),
            Err(_) => dynamic = true,
        }
    }
    (highest, dynamic)
}

/// `source` with comments blanked out (same length, so byte offsets still match).
fn code_only(source: &str) -> String {
    source
        .lines()
        .map(|line| match line.find("--") {
            Some(i) => format!("{}{}", &line[..i], " ".repeat(line.len() - i)),
            None => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Commands passed as a literal first argument to `redis.call` / `redis.pcall`, upper-cased.
pub fn called_commands(source: &str) -> Vec<String> {
    let code = code_only(source);
    let mut out = Vec::new();
    for call in ["redis.call(", "redis.pcall("] {
        for (pos, _) in code.match_indices(call) {
            let rest = code[pos + call.len()..].trim_start();
            let Some(quote) = rest.chars().next().filter(|c| *c == '\'' || *c == '"') else {
                continue;
            };
            if let Some(name) = rest[1..].split(quote).next() {
                out.push(name.to_ascii_uppercase());
            }
        }
    }
    out
}

/// Every way `body` disagrees with `header`: key/argument counts, and `no-writes` against the
/// commands actually called. Empty when they agree.
pub fn check_body(header: &Header, body: &str) -> Vec<String> {
    let mut problems = Vec::new();
    for (table, declared, variadic) in [
        ("KEYS", header.keys.len(), header.variadic_keys()),
        ("ARGV", header.args.len(), header.variadic_args()),
    ] {
        let (highest, dynamic) = highest_index(body, table);
        if dynamic && !variadic {
            problems.push(format!(
                "{table} indexed by a non-literal but the header list is not variadic (`name...`)"
            ));
        }
        let fixed = if variadic { declared - 1 } else { declared };
        if !variadic && highest != declared {
            problems.push(format!(
                "header declares {declared} {table} but the body uses up to {table}[{highest}]"
            ));
        }
        if variadic && highest > fixed + 1 {
            problems.push(format!(
                "body uses {table}[{highest}] beyond the declared fixed entries"
            ));
        }
    }
    let writes: Vec<String> = called_commands(body)
        .into_iter()
        .filter(|c| WRITE_COMMANDS.contains(&c.as_str()))
        .collect();
    match (header.read_only(), writes.first()) {
        (true, Some(cmd)) => problems.push(format!("flags say no-writes but the body calls {cmd}")),
        (false, None) => {
            problems.push("the body never writes: declare `#!lua flags=no-writes`".into())
        }
        _ => {}
    }
    problems
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

/// Replaces each `--@include NAME` line with `resolve(NAME)` (the shared fragments in
/// `scripts/include/`). Unknown names are errors.
pub fn expand_includes(
    source: &str,
    resolve: &dyn Fn(&str) -> Option<String>,
) -> Result<String, HeaderError> {
    let mut out = String::with_capacity(source.len());
    for (i, line) in source.split_inclusive('\n').enumerate() {
        match line.trim_end().strip_prefix("--@include ") {
            Some(name) => {
                let text = resolve(name.trim())
                    .ok_or_else(|| err(i + 1, format!("unknown include `{}`", name.trim())))?;
                out.push_str(&text);
                if !text.ends_with('\n') {
                    out.push('\n');
                }
            }
            None => out.push_str(line),
        }
    }
    Ok(out)
}
