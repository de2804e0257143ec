//! Function calls: what well-known library functions do to a value's origin, and the
//! `redis.call` rules (keys from KEYS, dangerous and unbounded commands, TTLs, lease shortening).

use super::value::Val;
use super::walk::{node_pos, Pos, Unit, Walker};
use full_moon::ast::{Expression, Field, FunctionArgs, UnOp};
use full_moon::tokenizer::TokenType;
use redis_atomic_scripts::check::WRITE_COMMANDS;

/// Commands whose arguments hold no key.
const NO_KEYS: &[&str] = &[
    "TIME",
    "PING",
    "ECHO",
    "INFO",
    "DBSIZE",
    "RANDOMKEY",
    "FLUSHALL",
    "FLUSHDB",
    "KEYS",
    "SCAN",
    "PUBLISH",
    "SPUBLISH",
    "CLUSTER",
    "CONFIG",
    "SCRIPT",
    "FUNCTION",
    "SELECT",
    "SWAPDB",
    "WAIT",
    "LASTSAVE",
    "COMMAND",
    "ROLE",
    "XREAD",
    "XREADGROUP",
    "ACL",
    "CLIENT",
    "LOLWUT",
];
/// Commands whose every argument is a key.
const ALL_KEYS: &[&str] = &[
    "DEL",
    "UNLINK",
    "EXISTS",
    "MGET",
    "TOUCH",
    "WATCH",
    "SINTER",
    "SUNION",
    "SDIFF",
    "PFCOUNT",
    "PFMERGE",
    "SINTERSTORE",
    "SUNIONSTORE",
    "SDIFFSTORE",
];
/// Commands whose first two arguments are keys.
const TWO_KEYS: &[&str] = &[
    "RENAME",
    "RENAMENX",
    "SMOVE",
    "RPOPLPUSH",
    "LMOVE",
    "BLMOVE",
    "COPY",
    "ZRANGESTORE",
    "LCS",
    "GEOSEARCHSTORE",
];
/// Container commands (`OBJECT ENCODING key`): the key is the second argument.
const SUB_KEY: &[&str] = &["OBJECT", "MEMORY", "XGROUP", "XINFO"];
/// Reads that return a whole collection.
const WHOLE_READS: &[&str] = &[
    "HGETALL", "HKEYS", "HVALS", "SMEMBERS", "SINTER", "SUNION", "SDIFF",
];
/// Writes that create the key when it is missing.
const CREATES: &[&str] = &[
    "SET",
    "SETNX",
    "INCR",
    "INCRBY",
    "INCRBYFLOAT",
    "DECR",
    "DECRBY",
    "APPEND",
    "HSET",
    "HSETNX",
    "HMSET",
    "HINCRBY",
    "HINCRBYFLOAT",
    "SADD",
    "ZADD",
    "ZINCRBY",
    "LPUSH",
    "RPUSH",
    "XADD",
    "PFADD",
    "SETBIT",
    "SETRANGE",
    "GEOADD",
    "BITFIELD",
    "SINTERSTORE",
    "SUNIONSTORE",
    "SDIFFSTORE",
    "ZUNIONSTORE",
    "ZINTERSTORE",
    "ZDIFFSTORE",
];
const EXPIRES: &[&str] = &["EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"];

/// The literal text of a string or number expression (`-1` included).
pub fn literal(expr: &Expression) -> Option<String> {
    match expr {
        Expression::String(tok) | Expression::Number(tok) => match tok.token().token_type() {
            TokenType::StringLiteral { literal, .. } => Some(literal.to_string()),
            TokenType::Number { text } => Some(text.to_string()),
            _ => None,
        },
        Expression::UnaryOperator {
            unop: UnOp::Minus(_),
            expression,
        } => literal(expression).map(|t| format!("-{t}")),
        Expression::Parentheses { expression, .. } => literal(expression),
        _ => None,
    }
}

fn has_word(args: &[&Expression], word: &str) -> bool {
    args.iter()
        .any(|a| literal(a).is_some_and(|l| l.eq_ignore_ascii_case(word)))
}

fn key_positions(cmd: &str, n: usize) -> Vec<usize> {
    if NO_KEYS.contains(&cmd) {
        Vec::new()
    } else if ALL_KEYS.contains(&cmd) {
        (0..n).collect()
    } else if cmd == "MSET" || cmd == "MSETNX" {
        (0..n).step_by(2).collect()
    } else if TWO_KEYS.contains(&cmd) {
        (0..n.min(2)).collect()
    } else if SUB_KEY.contains(&cmd) {
        (1..n.min(2)).collect()
    } else {
        (0..n.min(1)).collect()
    }
}

impl Walker {
    /// A call of `path` (`redis.call`, `math.floor`, a local function: `None` path when computed).
    pub fn call(&mut self, path: Option<&str>, args: &FunctionArgs, pos: Pos) -> Val {
        if self.library && path == Some("redis.register_function") {
            self.register(args, pos);
            return Val::NONE;
        }
        let (exprs, vals) = self.args(args);
        let all = vals.iter().fold(Val::NONE, |a, v| a | *v);
        let first = vals.first().copied().unwrap_or(Val::NONE);
        match path.unwrap_or("") {
            "redis.call" | "redis.pcall" => self.redis_call(&exprs, &vals, pos),
            "tonumber" if first.has(Val::LITERAL) => Val::CONST,
            "tonumber" => first & (Val::ARGV | Val::REPLY | Val::FLOAT | Val::CONST),
            "tostring" => Val::BUILT | (first & (Val::ARGV | Val::REPLY)),
            "string.format" | "string.rep" => Val::BUILT | (all & (Val::ARGV | Val::REPLY)),
            "math.floor" | "math.ceil" => all.numeric().without(Val::FLOAT),
            "math.min" if vals.contains(&Val::CONST) => Val::CONST,
            "math.min" | "math.max" | "math.abs" | "math.fmod" | "math.mod" => all.numeric(),
            p if p.starts_with("math.") => Val::FLOAT | (all & (Val::ARGV | Val::REPLY)),
            p if p.starts_with("string.") => all & (Val::ARGV | Val::REPLY),
            "table.getn" => {
                self.report(pos, "table-getn", "table.getn is deprecated: use #t".into());
                first & Val::REPLY
            }
            "unpack" | "select" | "ipairs" | "pairs" | "next" => all,
            "cjson.decode" | "cmsgpack.unpack" => all & (Val::ARGV | Val::REPLY),
            _ => Val::NONE,
        }
    }

    /// `redis.register_function('name', function(keys, args) ... end)` or the table form with
    /// `function_name`, `callback` and `flags`: the callback becomes its own unit.
    fn register(&mut self, args: &FunctionArgs, pos: Pos) {
        let (mut name, mut callback, mut flags) = (String::new(), None, Vec::new());
        let table = match args {
            FunctionArgs::TableConstructor(t) => Some(t),
            FunctionArgs::Parentheses { arguments, .. } => {
                let list: Vec<&Expression> = arguments.iter().collect();
                match list[..] {
                    [Expression::TableConstructor(t)] => Some(t),
                    [n, cb, ..] => {
                        name = literal(n).unwrap_or_default();
                        callback = Some(cb);
                        None
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        for field in table.into_iter().flat_map(|t| t.fields().iter()) {
            let Field::NameKey { key, value, .. } = field else {
                continue;
            };
            match super::walk::name_of(key) {
                "function_name" => name = literal(value).unwrap_or_default(),
                "callback" => callback = Some(value),
                "flags" => flags = string_list(value),
                _ => {}
            }
        }
        let body = match callback {
            Some(Expression::Function(f)) => f.body().clone(),
            Some(cb) => match self.take_held(cb) {
                Some(body) => body,
                None => {
                    self.eval(cb);
                    return;
                }
            },
            None => return,
        };
        self.units.push(Unit {
            name,
            flags: Some(flags),
            pos,
            ..Unit::default()
        });
        let saved = std::mem::replace(&mut self.unit, self.units.len() - 1);
        self.function(&body, true);
        self.unit = saved;
    }

    fn redis_call(&mut self, exprs: &[&Expression], vals: &[Val], pos: Pos) -> Val {
        self.redis_calls += 1;
        let Some(cmd) = exprs.first().and_then(|e| literal(e)) else {
            self.report(
                pos,
                "dynamic-command",
                "the command name is not a literal: its keys and writes cannot be checked".into(),
            );
            self.unit_mut().dynamic = true;
            return Val::REPLY;
        };
        let cmd = cmd.to_ascii_uppercase();
        let (args, arg_vals) = (&exprs[1..], &vals[1..]);
        if WRITE_COMMANDS.contains(&cmd.as_str()) {
            self.unit_mut().writes.push((pos, cmd.clone()));
        }
        self.dangerous(&cmd, args, pos);
        for i in key_positions(&cmd, args.len()) {
            self.check_key(&cmd, args[i], arg_vals[i]);
        }
        self.expiry(&cmd, args, pos);
        Val::REPLY
    }

    fn check_key(&mut self, cmd: &str, expr: &Expression, val: Val) {
        let bad = Val::ARGV | Val::LITERAL | Val::BUILT | Val::REPLY;
        if val.has(Val::KEY) && !val.has(bad) {
            return;
        }
        let how = if val.has(Val::ARGV) {
            "taken from ARGV"
        } else if val.has(Val::BUILT) {
            "built by concatenation or string.format"
        } else if val.has(Val::LITERAL) {
            "a string literal"
        } else if val.has(Val::REPLY) {
            "read from a reply (dynamic key discovery)"
        } else {
            return;
        };
        self.report(
            node_pos(expr),
            "key-not-from-keys",
            format!("{cmd} key is {how}, not an element of KEYS"),
        );
    }

    fn dangerous(&mut self, cmd: &str, args: &[&Expression], pos: Pos) {
        let (rule, message) = match cmd {
            "KEYS" => ("keys-command", "KEYS scans the whole keyspace".to_string()),
            "SCAN" | "SSCAN" | "HSCAN" | "ZSCAN" => (
                "scan-command",
                format!("{cmd} inside a script discovers keys or members without bound"),
            ),
            "FLUSHALL" | "FLUSHDB" => ("flush-command", format!("{cmd} deletes every key")),
            c if WHOLE_READS.contains(&c) => (
                "unbounded-read",
                format!("{cmd} returns the whole collection"),
            ),
            // From a negative start (`-1 -1`: the last member) the read is bounded by the start.
            "LRANGE" | "ZRANGE" | "ZREVRANGE"
                if args.get(2).and_then(|a| literal(a)).as_deref() == Some("-1")
                    && !args
                        .get(1)
                        .and_then(|a| literal(a))
                        .is_some_and(|s| s.starts_with('-'))
                    && !has_word(args, "LIMIT") =>
            {
                (
                    "unbounded-read",
                    format!("{cmd} ... -1 reads to the end of the collection"),
                )
            }
            "ZRANGE"
                if (has_word(args, "BYSCORE") || has_word(args, "BYLEX"))
                    && !has_word(args, "LIMIT") =>
            {
                (
                    "unbounded-read",
                    format!("{cmd} by score or lex without LIMIT"),
                )
            }
            "ZRANGEBYSCORE" | "ZREVRANGEBYSCORE" | "ZRANGEBYLEX" | "ZREVRANGEBYLEX"
                if !has_word(args, "LIMIT") =>
            {
                ("unbounded-read", format!("{cmd} without LIMIT"))
            }
            "XRANGE" | "XREVRANGE" if !has_word(args, "COUNT") => {
                ("unbounded-read", format!("{cmd} without COUNT"))
            }
            _ => return,
        };
        self.report(pos, rule, message);
    }

    /// TTL bookkeeping for `write-without-ttl`, and `expire-can-shorten`.
    fn expiry(&mut self, cmd: &str, args: &[&Expression], pos: Pos) {
        let is_expire = EXPIRES.contains(&cmd);
        if is_expire
            && self.guards == 0
            && !["NX", "GT", "LT"]
                .iter()
                .any(|w| has_word(args.get(2..).unwrap_or(&[]), w))
        {
            self.report(
                pos,
                "expire-can-shorten",
                format!("{cmd} without GT/NX can shorten a lease another caller set"),
            );
        }
        let Some(key) = args.first().and_then(|a| self.key_text(a)) else {
            return;
        };
        let sets_ttl = is_expire
            || matches!(cmd, "SETEX" | "PSETEX")
            || (matches!(cmd, "SET" | "GETEX")
                && ["EX", "PX", "EXAT", "PXAT", "KEEPTTL"]
                    .iter()
                    .any(|w| has_word(&args[1..], w)));
        if sets_ttl {
            self.unit_mut().ttl_keys.insert(key);
        } else if CREATES.contains(&cmd) {
            self.unit_mut().creates.push((key, pos, cmd.to_string()));
        }
    }
}

fn string_list(expr: &Expression) -> Vec<String> {
    let Expression::TableConstructor(t) = expr else {
        return Vec::new();
    };
    t.fields()
        .iter()
        .filter_map(|f| match f {
            Field::NoKey(e) => literal(e),
            _ => None,
        })
        .collect()
}
