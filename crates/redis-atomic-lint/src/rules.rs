//! The rule table: every finding names one of these, so each message can point at a why and a
//! fix. Adding a rule is one entry here plus the check that emits it.

use serde::Serialize;

/// How bad a finding is. Both fail the lint (exit 1); the severity says how sure the rule is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Wrong or dangerous in every script the rule matches.
    Error,
    /// Usually wrong; silence a deliberate case with `-- redis-atomic-lint: allow <id>`.
    Warning,
}

/// One rule: id, severity, why it matters, how to fix it.
#[derive(Debug)]
pub struct Rule {
    /// Stable id, printed in every finding.
    pub id: &'static str,
    /// Severity.
    pub severity: Severity,
    /// Why the pattern is a problem.
    pub why: &'static str,
    /// What to write instead.
    pub fix: &'static str,
}

const fn rule(id: &'static str, severity: Severity, why: &'static str, fix: &'static str) -> Rule {
    Rule {
        id,
        severity,
        why,
        fix,
    }
}

use Severity::{Error, Warning};

/// Every rule, in report order.
pub const RULES: &[Rule] = &[
    rule("key-not-from-keys", Error,
        "a key built from ARGV, a literal or concatenation is invisible to Redis Cluster routing and ACL key checks, and may live in another slot",
        "pass every key the script touches in KEYS (same {hash tag}) and use KEYS[n] directly"),
    rule("constant-hash-tag", Warning,
        "a {hash tag} written as a constant (like {global}) is the same for every call: every key carrying it maps to one slot, so one node serves all of that traffic and the cluster cannot spread it",
        "tag keys with a high-cardinality id (order, user, tenant), built by the caller and passed in KEYS"),
    rule("dynamic-command", Warning,
        "a command name that is not a literal cannot be checked (writes, keys, flags) by the linter or by reviewers",
        "call redis.call with a literal command name; branch in Lua if several are needed"),
    rule("keys-command", Error,
        "KEYS walks the whole keyspace inside the script: it blocks the server for as long as it runs and misses keys on other shards",
        "keep an index (a set or sorted set under the same hash tag) and pass its key in KEYS"),
    rule("scan-command", Error,
        "SCAN-family loops inside a script are dynamic key discovery: unbounded work that blocks the server, and keys found are not declared",
        "scan from the client in bounded batches and call the script per batch with the keys in KEYS"),
    rule("flush-command", Error,
        "FLUSHALL/FLUSHDB from a script deletes every key of the database in one blocking step",
        "never flush from a script; delete the script's own keys (from KEYS)"),
    rule("unbounded-read", Error,
        "HGETALL, SMEMBERS, LRANGE 0 -1, ZRANGE 0 -1 and similar return a whole collection: work and reply size grow without limit",
        "read a bounded page (LRANGE k 0 99, ZRANGE ... LIMIT, HSCAN from the client) or the fields you need (HMGET)"),
    rule("unbounded-loop", Error,
        "a loop without a visible bound can run for as long as data or input allows, blocking every other client",
        "loop over a bounded range: for i = 1, math.min(n, MAX) do ... end"),
    rule("write-without-ttl", Warning,
        "a key the script creates without an expiry lives forever: abandoned records accumulate until memory runs out",
        "set an expiry in the same script: SET k v PX ms, or PEXPIRE after HSET/INCR"),
    rule("expire-can-shorten", Warning,
        "EXPIRE without NX/XX/GT/LT on a key others share can shorten their lease (a later caller with a smaller TTL wins)",
        "use EXPIRE k s GT (only extend) or NX (only set once); or check ownership before changing a lease"),
    rule("float-return", Error,
        "Redis converts a returned Lua number to an integer by truncation: 2.9 arrives as 2",
        "return integers (math.floor) or strings (string.format('%.17g', x))"),
    rule("table-getn", Warning,
        "table.getn is deprecated Lua 5.0 API",
        "use the length operator: #t"),
    rule("global-write", Error,
        "Redis 7 refuses to create globals in scripts: the script fails at run time",
        "declare it local: local x = ... / local function f() ... end"),
    rule("undefined-global", Error,
        "reading a global that Redis does not provide is a typo or a missing local: it is nil at run time",
        "declare the variable local, or fix the name"),
    rule("missing-shebang", Error,
        "without a #!lua shebang the server cannot enforce flags: cross-slot keys are not refused, and writes are allowed under OOM and on replicas",
        "start the script with #!lua (or #!lua flags=no-writes for read-only scripts)"),
    rule("bad-shebang", Error,
        "an unknown shebang option or flag makes the server refuse the script",
        "use #!lua flags=... with no-writes, allow-oom, allow-stale, no-cluster, allow-cross-slot-keys; libraries need #!lua name=..."),
    rule("writes-under-no-writes", Error,
        "a script or function flagged no-writes that calls a write command fails at run time",
        "drop no-writes, or remove the write"),
    rule("missing-no-writes", Warning,
        "a read-only script without no-writes cannot run on replicas (EVALSHA_RO / FCALL_RO) and is refused under OOM",
        "declare #!lua flags=no-writes (or flags={'no-writes'} in register_function)"),
    rule("header-invalid", Error,
        "the redis-atomic header (--- summary/keys/args/returns/...) is the contract the Rust bindings and their typed replies are generated from",
        "fix the header line (see docs/scripts.md); returns: lists every reply shape, e.g. {'acquired', fence:fence, ttl:ms} | {'held', retry_after:ms}"),
    rule("header-body-mismatch", Error,
        "the header disagrees with the body: its keys/args with the KEYS[n]/ARGV[n] the body uses, or its returns: with the status words the body returns ({'word', ...}); the generated binding passes the wrong count or lacks a reply the script sends",
        "make --- keys: and --- args: list exactly the slots the body reads, and --- returns: declare exactly the status words the body returns"),
];

/// The rule with this id.
pub fn find(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id)
}
