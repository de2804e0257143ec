//! What the servers behind a [`Client`] can do natively, detected once and cached.
//!
//! Why: the weakest mechanism that keeps an invariant wins (the rungs of the crate docs), and newer
//! servers have single commands for what the lock needs a script for: `DELIFEQ key value`
//! (Valkey ≥ 9.0), `DELEX key IFEQ value` (Redis ≥ 8.4, Valkey ≥ 9.2) and `SET … IFEQ value`
//! (Valkey ≥ 8.1, Redis ≥ 8.4). A native command costs the server about a third of the script.
//!
//! **What is detected**, per node, with one pipeline (one round trip): `INFO server` (product and
//! version: Valkey reports `valkey_version`, Redis `redis_version`), `COMMAND INFO DELIFEQ DELEX`
//! (which of them exist) and `COMMAND DOCS SET` (whether `SET` takes `IFEQ`). Probing commands,
//! not versions, is what decides: a fork or a managed service with the command is used, one
//! without it is not, whatever its version says. A probe the server refuses (an ACL without
//! `COMMAND`, `INFO`) means "not available": the Lua path runs, which every server has.
//!
//! **When.** At [`Client::connect`] / [`Client::connect_cluster`], or at the first call that could
//! use a native command (caller-supplied connections). Detected again after anything that may
//! have put another server behind the client: a connection discarded after an unknown outcome or
//! a `READONLY` (Sentinel failover; the pool reconnects through Sentinel), a cluster `MOVED`
//! (topology change) — by the next lock release or extend, or in the background once the next
//! script call a server module could decide is answered (a call never waits for it). And whatever the cache says, a native command the server answers with
//! `unknown command` or `NOPERM` (nothing ran) is sent again as the script in the same attempt,
//! and the client stops trying that command until the next re-detection: correctness never
//! depends on the cache being fresh, only speed does.
//!
//! **Clusters: the common denominator.** A command is used only if every node (primaries and
//! replicas, from `CLUSTER NODES`; a replica, to which the cluster connection keeps no
//! connection, through one of its own) has it. Per-node choice would need the key's node before
//! sending, which the cluster connection hides (and slots move); a mixed cluster is a rolling
//! upgrade in progress, short-lived, and its replicas are tomorrow's primaries. Once the last node
//! is upgraded, the next re-detection turns the native path on.
//!
//! **Forcing Lua.** [`ClientConfig::force_lua`](super::ClientConfig::force_lua) (URL / CLI:
//! `--force-lua`) keeps every call on the scripts, e.g. to compare paths or to rule one out.

use redis::Value;
use std::sync::Mutex;

/// How a lock release can run without Lua.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NativeDelete {
    /// `DELIFEQ key value` (Valkey ≥ 9.0).
    Delifeq,
    /// `DELEX key IFEQ value` (Redis ≥ 8.4, Valkey ≥ 9.2; untested here: no such server installs).
    DelexIfeq,
}

impl NativeDelete {
    /// The command, for reports (`DELIFEQ`, `DELEX IFEQ`).
    pub fn as_str(self) -> &'static str {
        match self {
            NativeDelete::Delifeq => "DELIFEQ",
            NativeDelete::DelexIfeq => "DELEX IFEQ",
        }
    }
}

/// What the server (every node of a cluster) offers natively, and what the client uses.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Capabilities {
    /// `valkey 9.1.2`, `redis 7.0.15`; several when a cluster's nodes differ; `unknown` when
    /// `INFO` was refused.
    pub server: String,
    /// Nodes asked (1 unless a cluster).
    pub nodes: usize,
    /// Compare-and-delete of a string, if every node has one.
    pub delete_if_eq: Option<NativeDelete>,
    /// `SET key value IFEQ current …` on every node.
    pub set_ifeq: bool,
    /// [`ClientConfig::force_lua`](super::ClientConfig::force_lua): native commands are not used.
    pub forced_lua: bool,
    /// The server module, if every node has it loaded (see [`super::module`]).
    pub module: Option<super::module::ModuleInfo>,
}

impl Capabilities {
    /// No native command (what a refused or failed probe means).
    pub fn none() -> Capabilities {
        Capabilities {
            server: "unknown".into(),
            nodes: 0,
            delete_if_eq: None,
            set_ifeq: false,
            forced_lua: false,
            module: None,
        }
    }

    /// The compare-and-delete the lock's release uses, unless Lua is forced.
    pub fn release_command(&self) -> Option<NativeDelete> {
        self.delete_if_eq.filter(|_| !self.forced_lua)
    }

    /// Whether the lock's extend uses `SET … IFEQ … PX`, unless Lua is forced.
    pub fn extend_native(&self) -> bool {
        self.set_ifeq && !self.forced_lua
    }

    /// One line for reports: `valkey 9.1.2: release DELIFEQ, extend SET IFEQ`.
    pub fn summary(&self) -> String {
        let release = self.release_command().map_or("Lua", NativeDelete::as_str);
        let extend = if self.extend_native() {
            "SET IFEQ"
        } else {
            "Lua"
        };
        let forced = if self.forced_lua { " (Lua forced)" } else { "" };
        let module = match (&self.module, self.forced_lua) {
            (Some(m), false) => format!(", module {}", m.version),
            _ => String::new(),
        };
        format!(
            "{}: lock release {release}, extend {extend}{module}{forced}",
            self.server
        )
    }

    /// What every node in `nodes` has (the cluster rule: the common denominator).
    pub(crate) fn common(nodes: Vec<Capabilities>) -> Capabilities {
        let Some(first) = nodes.first().cloned() else {
            return Capabilities::none();
        };
        let mut servers: Vec<String> = Vec::new();
        for n in &nodes {
            if !servers.contains(&n.server) {
                servers.push(n.server.clone());
            }
        }
        let all_same = nodes.iter().all(|n| n.delete_if_eq == first.delete_if_eq);
        let modules: Vec<_> = nodes.iter().map(|n| n.module.clone()).collect();
        Capabilities {
            server: servers.join(", "),
            nodes: nodes.len(),
            delete_if_eq: first.delete_if_eq.filter(|_| all_same),
            set_ifeq: nodes.iter().all(|n| n.set_ifeq),
            forced_lua: false,
            module: super::module::ModuleInfo::common(&modules),
        }
    }

    /// One node's capabilities from the replies to [`probe`]'s three commands (errors included).
    pub(crate) fn parse(replies: &[Value]) -> Capabilities {
        let info = replies.first().and_then(text).unwrap_or_default();
        let field = |name: &str| {
            info.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
                .map(str::trim)
        };
        let server = match (field("valkey_version"), field("redis_version")) {
            (Some(v), _) => format!("valkey {v}"),
            (None, Some(v)) => format!("redis {v}"),
            (None, None) => "unknown".into(),
        };
        let exists = |i: usize| match replies.get(1) {
            Some(Value::Array(items)) => items.get(i).is_some_and(|v| !matches!(v, Value::Nil)),
            _ => false,
        };
        let delete_if_eq = if exists(0) {
            Some(NativeDelete::Delifeq)
        } else if exists(1) {
            Some(NativeDelete::DelexIfeq)
        } else {
            None
        };
        Capabilities {
            server,
            nodes: 1,
            delete_if_eq,
            set_ifeq: replies.get(2).is_some_and(|v| mentions(v, "ifeq")),
            forced_lua: false,
            module: super::module::ModuleInfo::parse(replies.get(3)),
        }
    }
}

/// The probe of one node: `INFO server`, `COMMAND INFO DELIFEQ DELEX`, `COMMAND DOCS SET`,
/// `RATOMIC.VERSION` (the server module).
pub(crate) fn probe() -> redis::Pipeline {
    let mut pipe = redis::pipe();
    pipe.cmd("INFO").arg("server");
    pipe.cmd("COMMAND").arg("INFO").arg("DELIFEQ").arg("DELEX");
    pipe.cmd("COMMAND").arg("DOCS").arg("SET");
    super::module::probe(&mut pipe);
    pipe
}

/// Whether a probe's replies tell nothing about the server's commands: an error other than
/// `ERR` (an unknown command: not here) or `NOPERM` (not for this user) — `LOADING` while a
/// restarted server reads its data, `BUSY`, `MASTERDOWN`. Cached, such an answer would keep the
/// client off the module after a restart until the next fault; it is asked again instead.
pub(crate) fn inconclusive(replies: &[Value]) -> bool {
    replies.iter().any(|v| match v {
        Value::ServerError(e) => !matches!(e.code(), "ERR" | "NOPERM"),
        _ => false,
    })
}

/// Whether a native command's refusal means "not here" (nothing ran, the script may run
/// instead): an unknown command (an older node behind the client) or an ACL refusal.
pub(crate) fn unsupported(err: &crate::Error) -> bool {
    matches!(err, crate::Error::Server { code, message }
        if code == "NOPERM" || (code == "ERR" && message.starts_with("unknown command")))
}

/// Whether any string in `value` equals `word` (case-insensitive): the `IFEQ` token in a
/// `COMMAND DOCS` reply of either protocol.
pub(crate) fn mentions(value: &Value, word: &str) -> bool {
    match value {
        Value::BulkString(b) => b.eq_ignore_ascii_case(word.as_bytes()),
        Value::SimpleString(s) => s.eq_ignore_ascii_case(word),
        Value::VerbatimString { text, .. } => text.eq_ignore_ascii_case(word),
        Value::Array(items) | Value::Set(items) => items.iter().any(|v| mentions(v, word)),
        Value::Map(m) => m
            .iter()
            .any(|(k, v)| mentions(k, word) || mentions(v, word)),
        _ => false,
    }
}

fn text(value: &Value) -> Option<String> {
    match value {
        Value::BulkString(b) => Some(String::from_utf8_lossy(b).into_owned()),
        Value::VerbatimString { text, .. } => Some(text.clone()),
        Value::SimpleString(s) => Some(s.clone()),
        _ => None,
    }
}

/// The cached detection, shared by every clone of a client (and [`super::Client::with_config`]).
#[derive(Debug, Default)]
pub(crate) struct Cache {
    // A std mutex: held only to clone or swap the value, never across an await.
    state: Mutex<Option<Capabilities>>,
    /// A detection is under way: calls meanwhile take the script rather than probe too (no
    /// herd of probes after a failover).
    detecting: std::sync::atomic::AtomicBool,
    /// A detection was made or tried (at connect, or since): only such a client detects again
    /// in the background ([`super::Client::detect_in_background`]); one over a caller's
    /// connection that never asked keeps its first detection for a call that may use it.
    sought: std::sync::atomic::AtomicBool,
}

impl Cache {
    fn cell(&self) -> std::sync::MutexGuard<'_, Option<Capabilities>> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The cached capabilities, if detected since the last invalidation.
    pub(crate) fn get(&self) -> Option<Capabilities> {
        self.cell().clone()
    }

    pub(crate) fn set(&self, caps: Capabilities) {
        *self.cell() = Some(caps);
    }

    /// Claims the one detection in flight; false when another caller has it.
    pub(crate) fn begin_detect(&self) -> bool {
        self.sought
            .store(true, std::sync::atomic::Ordering::Release);
        !self
            .detecting
            .swap(true, std::sync::atomic::Ordering::AcqRel)
    }

    /// Whether a detection was ever begun (see `sought`).
    pub(crate) fn sought(&self) -> bool {
        self.sought.load(std::sync::atomic::Ordering::Acquire)
    }

    pub(crate) fn end_detect(&self) {
        self.detecting
            .store(false, std::sync::atomic::Ordering::Release);
    }

    /// Another server may be behind the client now: detect again before the next native call.
    pub(crate) fn invalidate(&self) {
        *self.cell() = None;
    }

    /// A native command was refused (`unknown command`, `NOPERM`): stop using native commands
    /// until the next re-detection.
    pub(crate) fn refuse_native(&self) {
        if let Some(caps) = self.cell().as_mut() {
            caps.delete_if_eq = None;
            caps.set_ifeq = false;
        }
    }

    /// The module's natives were refused: scripts until the next re-detection.
    pub(crate) fn refuse_module(&self) {
        if let Some(caps) = self.cell().as_mut() {
            caps.module = None;
        }
    }

    /// Whether the detected module covers `def` (None: nothing detected yet), without a clone.
    pub(crate) fn module_covers(&self, def: &crate::script::ScriptDef) -> Option<bool> {
        let cell = self.cell();
        let caps = cell.as_ref()?;
        Some(caps.module.as_ref().is_some_and(|m| m.covers(def)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> Value {
        Value::BulkString(v.as_bytes().to_vec())
    }

    /// Valkey's version field wins over its compatibility `redis_version`; probes decide commands.
    #[test]
    fn parse_valkey_and_redis() {
        let info =
            s("# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:9.1.2\r\n");
        let caps = Capabilities::parse(&[
            info,
            Value::Array(vec![Value::Array(vec![s("delifeq")]), Value::Nil]),
            Value::Array(vec![s("set"), Value::Array(vec![s("IFEQ")])]),
        ]);
        assert_eq!(caps.server, "valkey 9.1.2");
        assert_eq!(caps.release_command(), Some(NativeDelete::Delifeq));
        assert!(caps.extend_native());
        let old = Capabilities::parse(&[
            s("redis_version:7.0.15\r\n"),
            Value::Array(vec![Value::Nil, Value::Nil]),
            Value::Array(vec![s("set"), s("NX")]),
        ]);
        assert_eq!(old.server, "redis 7.0.15");
        assert_eq!((old.delete_if_eq, old.set_ifeq), (None, false));
    }

    /// Refused probes (any other reply, or none at all) mean Lua, never a panic.
    #[test]
    fn refused_probes_mean_lua() {
        let caps = Capabilities::parse(&[Value::Nil, Value::Okay, Value::Int(3)]);
        assert_eq!(caps.server, "unknown");
        assert_eq!(
            (caps.release_command(), caps.extend_native()),
            (None, false)
        );
        assert_eq!(Capabilities::parse(&[]).release_command(), None);
    }

    /// A restarted server still loading its data answers the probe `LOADING`: nothing learned;
    /// a server without the module (`ERR unknown command`) or a user without the right
    /// (`NOPERM`) is an answer.
    #[test]
    fn loading_is_inconclusive() {
        let reply = |bytes: &[u8]| redis::parse_redis_value(bytes).expect("RESP");
        let info = s("redis_version:7.0.15\r\n");
        let answer = |last: &[u8]| [info.clone(), reply(last)];
        assert!(inconclusive(&answer(b"-LOADING Redis is loading\r\n")));
        assert!(inconclusive(&answer(b"-BUSY a script\r\n")));
        assert!(!inconclusive(&answer(
            b"-ERR unknown command 'RATOMIC.VERSION'\r\n"
        )));
        assert!(!inconclusive(&answer(b"-NOPERM no\r\n")));
        assert!(!inconclusive(&answer(b"*0\r\n")));
    }

    /// A mixed cluster uses what every node has; forcing Lua turns everything off.
    #[test]
    fn common_denominator_and_forced() {
        let mut new = Capabilities::none();
        new.server = "valkey 9.1.2".into();
        new.delete_if_eq = Some(NativeDelete::Delifeq);
        new.set_ifeq = true;
        let mut old = Capabilities::none();
        old.server = "valkey 8.1.0".into();
        old.set_ifeq = true;
        let mixed = Capabilities::common(vec![new.clone(), old]);
        assert_eq!(mixed.release_command(), None);
        assert!(mixed.extend_native());
        assert_eq!(mixed.nodes, 2);
        let mut forced = Capabilities::common(vec![new.clone(), new]);
        assert_eq!(forced.release_command(), Some(NativeDelete::Delifeq));
        forced.forced_lua = true;
        assert_eq!(
            (forced.release_command(), forced.extend_native()),
            (None, false)
        );
    }
}
