//! Checks of a script body against its header, shared by `build.rs`, the tests and `lint`.
//!
//! What a header promises, the body must keep: the highest `KEYS[n]` / `ARGV[n]` used equals the
//! declared counts, `no-writes` is declared exactly when the body never writes, and the status
//! words it returns are the ones the `returns:` line declares, and a script that may run inside a
//! batch (`--- batch: yes`) does nothing a batch could not run exactly ([`check_batch`]). These
//! are text checks (the bodies follow the house style: literal indexes, literal command names,
//! `{'status', ...}` tables); the linter's parser checks the rest.

use crate::header::Header;
use std::collections::HashSet;

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

/// Highest literal index used as `NAME[n]` in `source` and whether a non-literal index appears.
///
/// Linear in the length of `source`: each `NAME[` reads only the digits (and blanks) right
/// after it, never ahead to a `]` that may be far away (`'KEYS[KEYS[KEYS[...'`).
pub fn highest_index(source: &str, table: &str) -> (usize, bool) {
    let pattern = format!("{table}[");
    let code = code_only(source);
    let (mut highest, mut dynamic) = (0, false);
    for (pos, _) in code.match_indices(&pattern) {
        let rest = code[pos + pattern.len()..].trim_start();
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let closed = rest[digits..].trim_start().starts_with(']');
        match rest[..digits].parse::<usize>() {
            Ok(n) if closed => highest = highest.max(n),
            _ => dynamic = true,
        }
    }
    (highest, dynamic)
}

/// `source` with `--` comments blanked out, byte for byte (so offsets still match).
pub fn code_only(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    for line in source.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        match content.find("--") {
            Some(i) => {
                out.push_str(&content[..i]);
                out.extend(std::iter::repeat_n(' ', content.len() - i));
                out.push_str(&line[content.len()..]);
            }
            None => out.push_str(line),
        }
    }
    out
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

/// Key and argument counts used by `body` against the header's lists.
fn check_counts(header: &Header, body: &str) -> Vec<String> {
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
    problems
}

/// Status words of the reply tables in `source`: every table constructor whose first element is
/// a quoted word, `{'acquired', ...}`.
pub fn returned_statuses(source: &str) -> Vec<String> {
    let code = code_only(source);
    let mut out: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
    for (pos, _) in code.match_indices('{') {
        let rest = code[pos + 1..].trim_start();
        let Some(quote) = rest.chars().next().filter(|c| *c == '\'' || *c == '"') else {
            continue;
        };
        let inner = &rest[1..];
        let Some(end) = inner.find(quote) else {
            continue;
        };
        let word = &inner[..end];
        let after = inner[end + 1..].trim_start();
        let is_table_head = after.starts_with(',') || after.starts_with('}');
        if is_table_head && crate::returns::is_name(word) && seen.insert(word) {
            out.push(word.to_string());
        }
    }
    out
}

/// Every name quoted in `source`'s code (`'word'` or `"word"`), in one pass: each quote reads
/// only the name bytes after it.
fn quoted_names(source: &str) -> HashSet<String> {
    let code = code_only(source);
    let b = code.as_bytes();
    let mut out = HashSet::new();
    for (i, &q) in b.iter().enumerate() {
        if q != b'\'' && q != b'"' {
            continue;
        }
        let name = b[i + 1..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
            .count();
        if name > 0 && b.get(i + 1 + name) == Some(&q) {
            out.insert(code[i + 1..i + 1 + name].to_string());
        }
    }
    out
}

/// Every way `body` disagrees with `header`: key/argument counts, `no-writes` against the
/// commands actually called, and returned status words against the declared ones. Empty when
/// they agree.
pub fn check_body(header: &Header, body: &str) -> Vec<String> {
    let mut problems = check_counts(header, body);
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
    problems.extend(check_statuses(header, body));
    problems.extend(check_batch(header, body));
    problems
}

/// Calls a batchable script must not make: each changes what the decisions after it in the same
/// batch would see (the protocol of `redis.call` replies, what is replicated, the random sequence
/// a lone call would start afresh).
pub const BATCH_FORBIDDEN: &[&str] = &[
    "redis.setresp",
    "redis.set_repl",
    "math.random",
    "math.randomseed",
];

/// What keeps a `--- batch: yes` script from running as one decision of a batch exactly as it runs
/// alone (see `codegen::batch`): a call of [`BATCH_FORBIDDEN`]; `allow-cross-slot-keys` (a batch
/// declares its decisions' keys, which must share one slot); and, for a script with fixed key and
/// argument counts, `KEYS` or `ARGV` used other than indexed by a literal number — a batch hands
/// each decision of a script the same two tables, refilled at every index the header declares,
/// so only a body that touches nothing else sees exactly its own arguments.
pub fn check_batch(header: &Header, body: &str) -> Vec<String> {
    if !header.batch {
        return Vec::new();
    }
    let code = code_only(body);
    let mut problems: Vec<String> = BATCH_FORBIDDEN
        .iter()
        .filter(|call| mentions(&code, call))
        .map(|call| format!("batch: yes, but the body calls {call}, which would change what later decisions of a batch see"))
        .collect();
    if header.flags.iter().any(|f| f == "allow-cross-slot-keys") {
        problems.push(
            "batch: yes cannot go with allow-cross-slot-keys: a batch's keys share one slot".into(),
        );
    }
    for (table, variadic) in [
        ("KEYS", header.variadic_keys()),
        ("ARGV", header.variadic_args()),
    ] {
        if !variadic && !only_literal_indexes(&code, table) {
            problems.push(format!(
                "batch: yes, but {table} is used other than as {table}[<number>] (a batch reuses the table)"
            ));
        }
    }
    problems
}

/// Whether `name` occurs in `code` as a whole word (not inside a longer identifier).
fn mentions(code: &str, name: &str) -> bool {
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    code.match_indices(name).any(|(pos, _)| {
        let before = pos.checked_sub(1).map(|i| code.as_bytes()[i]);
        let after = code.as_bytes().get(pos + name.len()).copied();
        !before.is_some_and(|b| ident(b) || b == b'.') && !after.is_some_and(ident)
    })
}

/// Whether every occurrence of the identifier `table` in `code` is `table[<digits>]`.
fn only_literal_indexes(code: &str, table: &str) -> bool {
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    code.match_indices(table).all(|(pos, _)| {
        let bytes = code.as_bytes();
        let before = pos.checked_sub(1).map(|i| bytes[i]);
        let after = &code[pos + table.len()..];
        if before.is_some_and(|b| ident(b) || b == b'.') || after.bytes().next().is_some_and(ident)
        {
            return true; // part of another name (`MY_KEYS`, `t.KEYS`)
        }
        let Some(rest) = after.trim_start().strip_prefix('[') else {
            return false;
        };
        let rest = rest.trim_start();
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        digits > 0 && rest[digits..].trim_start().starts_with(']')
    })
}

/// Returned status words the header does not declare, and declared ones the body never names.
pub fn check_statuses(header: &Header, body: &str) -> Vec<String> {
    let declared = header.shapes.statuses();
    let declared_set: HashSet<&str> = declared.iter().copied().collect();
    let quoted = quoted_names(body);
    let mut problems = Vec::new();
    for word in returned_statuses(body) {
        if !declared_set.contains(word.as_str()) {
            problems.push(format!(
                "the body returns status `{word}`, which `returns:` does not declare"
            ));
        }
    }
    for word in declared {
        if !quoted.contains(word) {
            problems.push(format!(
                "`returns:` declares status `{word}`, which the body never returns"
            ));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::parse;

    const SRC: &str = "#!lua\n--- summary: s\n--- invariant: i\n--- keys: a\n--- args: x\n--- returns: {'set', n} | {'kept'}\n--- retry: safe\n--- version: 1\nif redis.call('GET', KEYS[1]) then return {'kept'} end\nreturn {'set', redis.call('SET', KEYS[1], ARGV[1])}\n";

    /// A batchable script: forbidden calls, cross-slot flags and non-literal uses of fixed
    /// tables are refused; literal reads (and the same script without `batch: yes`) pass.
    #[test]
    fn batch_rules() {
        let batched = SRC.replace("--- version: 1", "--- version: 1\n--- batch: yes");
        assert!(problems(&batched).is_empty(), "{:?}", problems(&batched));
        for (from, to, expect) in [
            (
                "if redis.call",
                "redis.setresp(3)\nif redis.call",
                "redis.setresp",
            ),
            (
                "if redis.call",
                "local r = math.random(3)\nif redis.call",
                "math.random",
            ),
            (
                "if redis.call",
                "local n = #ARGV\nif redis.call",
                "ARGV is used",
            ),
            (
                "if redis.call",
                "local t = KEYS\nif redis.call",
                "KEYS is used",
            ),
            (
                "#!lua\n",
                "#!lua flags=allow-cross-slot-keys\n",
                "allow-cross-slot-keys",
            ),
        ] {
            let found = problems(&batched.replacen(from, to, 1));
            assert!(found.iter().any(|p| p.contains(expect)), "{to}: {found:?}");
            assert!(!problems(&SRC.replacen(from, to, 1))
                .iter()
                .any(|p| p.contains("batch")));
        }
        assert!(!mentions("local my_math.random_x = 1", "math.random"));
        assert!(only_literal_indexes(
            "x = KEYS [ 2 ] .. MY_KEYS .. t.KEYS",
            "KEYS"
        ));
    }

    fn problems(src: &str) -> Vec<String> {
        let h = parse(src).unwrap();
        check_body(&h, crate::header::body(src))
    }

    /// A body that keeps its header's promises has no problems.
    #[test]
    fn agreeing_body_is_clean() {
        assert_eq!(problems(SRC), Vec::<String>::new());
    }

    /// Counts, flags and status words that drift are each caught.
    #[test]
    fn drift_is_caught() {
        assert_eq!(
            problems(&SRC.replace("KEYS[1], ARGV", "KEYS[2], ARGV")).len(),
            1
        );
        let ro = SRC.replace("#!lua\n", "#!lua flags=no-writes\n");
        assert_eq!(
            problems(&ro),
            ["flags say no-writes but the body calls SET"]
        );
        let undeclared = SRC.replace("return {'kept'}", "return {'held'}");
        let p = problems(&undeclared);
        assert!(
            p.iter().any(|m| m.contains("returns status `held`")),
            "{p:?}"
        );
        assert!(
            p.iter().any(|m| m.contains("declares status `kept`")),
            "{p:?}"
        );
    }

    /// The checks stay linear on pathological bodies: 200 000 unclosed `KEYS[` (formerly each
    /// scanned ahead to the end of the text: 2·10^10 byte reads) and 50 000 declared words
    /// (formerly each searched the body). Quadratic work would take minutes here; linear takes
    /// milliseconds, so the generous bound cannot flake.
    #[test]
    fn checks_are_linear() {
        let started = std::time::Instant::now();
        let body = format!("local s = '{}'\n", "KEYS[".repeat(200_000));
        assert_eq!(highest_index(&body, "KEYS"), (0, true));
        let words: Vec<String> = (0..50_000).map(|i| format!("{{'s{i}'}}")).collect();
        let returns = words.join(" | ");
        let src = SRC.replace("{'set', n} | {'kept'}", &returns);
        let h = parse(&src).unwrap();
        let body = format!("return {}\n", words.join("\nreturn "));
        assert_eq!(check_statuses(&h, &body), Vec::<String>::new());
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
    }

    /// Literal indexes, blanks around them included; anything else is dynamic.
    #[test]
    fn indexes() {
        let body = "KEYS[ 2 ] ARGV[1] KEYS[1]";
        assert_eq!(highest_index(body, "KEYS"), (2, false));
        assert_eq!(highest_index("KEYS[1 + n]", "KEYS"), (0, true));
        assert_eq!(highest_index("KEYS[n]", "KEYS"), (0, true));
    }

    /// Status words come from table heads only, comments and other strings aside.
    #[test]
    fn statuses_are_table_heads() {
        let body = "-- return {'commented'}\nlocal t = {'a', 1}\nlocal u = {\"b\"}\nlocal v = {'x' .. y}\nredis.call('SET', 'k')\n";
        assert_eq!(returned_statuses(body), ["a", "b"]);
    }
}
