//! Server-side scripts: one Lua file per atomic operation, a generated registry, and delivery.
//!
//! `scripts/*.lua` are the source of truth. `build.rs` loads them with `redis-atomic-scripts` (the
//! same crate the CLI's `lint` and `scripts` commands use), refuses to build when a header and
//! its body disagree, and generates [`registry`]: one `static` [`Script`] per file, typed by its
//! key and argument counts *and* its reply, so a binding that passes the wrong number of keys or
//! arguments, or forgets a status word the script may return, does not compile.
//!
//! Delivery ([`Delivery`]) is chosen per [`crate::Client`]: `EVALSHA` (one `NOSCRIPT` → `SCRIPT
//! LOAD` → retry, since `NOSCRIPT` means it did not run) or `FCALL` of the Function library
//! composed from the same bodies.

pub mod reply;

pub use redis_atomic_scripts::lockfile::LockProblem;
pub use redis_atomic_scripts::RetryClass;
pub use reply::{FromReply, Reply};

use redis_atomic_scripts::lockfile::{self, LockEntry};
use std::marker::PhantomData;

/// The generated registry: one `static` per script, its reply type, [`registry::ALL`], and the
/// Function library.
pub mod registry {
    include!(concat!(env!("OUT_DIR"), "/registry.rs"));
}

/// Everything the header of one script says, plus the exact source Redis runs.
#[derive(Debug)]
pub struct ScriptDef {
    /// `<primitive>_<op>`, the file name.
    pub name: &'static str,
    /// Bumped whenever the bytes change (checked against `scripts.lock`).
    pub version: u32,
    /// One-line summary.
    pub summary: &'static str,
    /// The invariant the script keeps.
    pub invariant: &'static str,
    /// Names of `KEYS[1..]`.
    pub keys: &'static [&'static str],
    /// Names of `ARGV[1..]`.
    pub args: &'static [&'static str],
    /// Every reply shape, as the header declares them.
    pub returns: &'static str,
    /// Retry class.
    pub retry: RetryClass,
    /// Shebang flags.
    pub flags: &'static [&'static str],
    /// SHA1 of [`ScriptDef::source`], as `SCRIPT LOAD` reports it.
    pub sha1: &'static str,
    /// Final source (includes expanded), shebang first: exactly what `EVALSHA` runs.
    pub source: &'static str,
    /// The Function's name in the composed library: `ra<N>_<name>`.
    pub function: &'static str,
    /// The source without its shebang line: the Function's body.
    pub function_body: &'static str,
}

impl ScriptDef {
    /// Whether the script declares `no-writes` (runs with `EVALSHA_RO` / `FCALL_RO`).
    pub fn read_only(&self) -> bool {
        self.flags.contains(&"no-writes")
    }

    /// The primitive part of the name (`lock` for `lock_acquire`).
    pub fn primitive(&self) -> &'static str {
        self.name.split_once('_').map_or(self.name, |(p, _)| p)
    }

    /// The operation part of the name (`acquire` for `lock_acquire`).
    pub fn op(&self) -> &'static str {
        self.name.split_once('_').map_or(self.name, |(_, o)| o)
    }

    /// The Function name in the composed library: `ra<N>_<name>`.
    pub fn function_name(&self) -> &'static str {
        self.function
    }

    /// Whether `keys` and `args` entries fit the header: exactly the declared counts, or, where
    /// the last declared name is variadic (`name...`), the fixed ones plus any number more.
    pub fn accepts(&self, keys: usize, args: usize) -> bool {
        fn fits(declared: &[&str], n: usize) -> bool {
            match declared.last() {
                Some(last) if last.ends_with("...") => n + 1 >= declared.len(),
                _ => n == declared.len(),
            }
        }
        fits(self.keys, keys) && fits(self.args, args)
    }
}

/// A script with `K` keys and `A` arguments whose reply decodes as `R`. Counts and reply type
/// come from the header, so the compiler checks every binding against its script.
#[derive(Debug)]
pub struct Script<const K: usize, const A: usize, R> {
    /// The header and source.
    pub def: ScriptDef,
    reply: PhantomData<fn() -> R>,
}

impl<const K: usize, const A: usize, R> Script<K, A, R> {
    /// Used by the generated registry.
    pub const fn new(def: ScriptDef) -> Self {
        Script {
            def,
            reply: PhantomData,
        }
    }
}

impl<const K: usize, const A: usize, R> std::ops::Deref for Script<K, A, R> {
    type Target = ScriptDef;
    fn deref(&self) -> &ScriptDef {
        &self.def
    }
}

/// A script whose header ends its key or argument list with a variadic `name...`: counts are
/// checked at the call ([`ScriptDef::accepts`]), not by the compiler. Its reply decodes as `R`.
#[derive(Debug)]
pub struct DynScript<R> {
    /// The header and source.
    pub def: ScriptDef,
    reply: PhantomData<fn() -> R>,
}

impl<R> DynScript<R> {
    /// Used by the generated registry.
    pub const fn new(def: ScriptDef) -> Self {
        DynScript {
            def,
            reply: PhantomData,
        }
    }
}

impl<R> std::ops::Deref for DynScript<R> {
    type Target = ScriptDef;
    fn deref(&self) -> &ScriptDef {
        &self.def
    }
}

/// How scripts reach the server.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Delivery {
    /// `EVALSHA` / `EVALSHA_RO`; on `NOSCRIPT`, `SCRIPT LOAD` once and retry.
    #[default]
    Eval,
    /// `FCALL` / `FCALL_RO` of `redis_atomic_v<N>`; loaded on first "Function not found".
    Functions,
}

/// Finds a script by name.
pub fn find(name: &str) -> Option<&'static ScriptDef> {
    registry::ALL.iter().copied().find(|s| s.name == name)
}

/// Commands the primitives send themselves rather than from a script: the `Read`s and `Write`s
/// of CAS and multi-key writes with their transaction commands, dedup's `SET`, quota's `GET`,
/// `PEXPIRE` and `ZADD`, `WAIT` (for [`crate::ClientConfig::replicas`]) and `CLUSTER SLOTS`
/// (dedicated connections find a slot's node with it). Unit tests keep it in step with
/// [`crate::cas::Read`] and [`crate::write::Write`]; `tests/acl.rs` runs them all as a
/// restricted user.
pub const DIRECT_COMMANDS: &[&str] = &[
    "get",
    "hget",
    "hgetall",
    "smembers",
    "exists",
    "pttl",
    "set",
    "hset",
    "hdel",
    "sadd",
    "srem",
    "del",
    "pexpire",
    "zadd",
    "watch",
    "unwatch",
    "multi",
    "exec",
    "discard",
    "wait",
    "cluster|slots",
];

/// The ACL rules of a least-privilege runtime user for `namespace`: its key pattern, the delivery
/// commands, every command the scripts call (ACL applies inside scripts too), and
/// [`DIRECT_COMMANDS`]. Derived from the registry, so it cannot fall behind the scripts.
///
/// ```
/// let rules = redis_atomic::script::acl_rules("app");
/// assert!(rules.contains(&"~app:*".to_string()) && rules.contains(&"+evalsha".to_string()));
/// ```
pub fn acl_rules(namespace: &str) -> Vec<String> {
    let mut commands: Vec<String> = [
        "evalsha",
        "evalsha_ro",
        "script|load",
        "fcall",
        "fcall_ro",
        "ping",
        "hello",
    ]
    .iter()
    .map(|c| c.to_string())
    .collect();
    let scripted = registry::ALL
        .iter()
        .flat_map(|def| redis_atomic_scripts::check::called_commands(def.source));
    let direct = DIRECT_COMMANDS.iter().map(|c| c.to_string());
    for cmd in scripted.chain(direct) {
        let cmd = cmd.to_ascii_lowercase();
        if !commands.contains(&cmd) {
            commands.push(cmd);
        }
    }
    let mut rules = vec![
        "resetkeys".to_string(),
        format!("~{namespace}:*"),
        "resetchannels".to_string(),
        "-@all".to_string(),
    ];
    rules.extend(commands.into_iter().map(|c| format!("+{c}")));
    rules
}

/// The text of `scripts.lock` for the built-in scripts (see `redis_atomic_scripts::lockfile`).
pub fn render_lock() -> String {
    lockfile::render(
        "redis-atomic scripts.lock: name version sha1. Regenerate with `make scripts-lock`\n\
         after bumping `--- version:` (or scripts/library.version). Checked by the tests.",
        &lock_entries(),
    )
}

/// How the built-in scripts disagree with the text of a `scripts.lock`.
pub fn check_lock(lock: &str) -> Vec<LockProblem> {
    lockfile::check(&lock_entries(), lock)
}

fn lock_entries() -> Vec<LockEntry> {
    let mut entries = vec![LockEntry::library(
        registry::LIBRARY_NAME,
        registry::LIBRARY_VERSION,
        registry::LIBRARY_SHA1,
    )];
    entries.extend(
        registry::ALL
            .iter()
            .map(|s| LockEntry::script(s.name, s.version, s.sha1)),
    );
    entries
}
