//! The server module (`redis-atomic-module`, loaded as `ratomic`): its natives in place of the
//! scripts they decide exactly as.
//!
//! Why a capability and not a [`Delivery`](crate::Delivery): the module is chosen per script —
//! a native is used only when the module reports the same version as the script this client
//! carries (`RATOMIC.VERSION`), so a client newer or older than the module keeps the scripts for
//! what changed — and it sits on top of either delivery (what runs when a script runs instead).
//! Detected with the other capabilities (one probe per node, at connect; after anything that may
//! have put another server behind the client — a reconnect, a failover, a `MOVED` — again, in
//! the background once the first script call that found nothing detected is answered, or by a
//! lock's release or extend, or [`Client::capabilities`]); on a cluster only what every node has. A call uses
//! only what is detected and never waits for a detection on its way: without the background
//! detection a client that only decides rate limits stayed on the scripts after its first lost
//! reply, for good.
//! A native the server answers with `unknown command` or `NOPERM` (nothing ran: a node restarted
//! without the module) runs as the script in the same attempt, and the module is not used again
//! until the next detection. [`ClientConfig::force_lua`](super::ClientConfig::force_lua) keeps
//! every call on the scripts.
//!
//! A native is sent alone (the multiplexed connection pipelines concurrent ones); its reply is
//! the script's, decoded by the same code. A native of a script with variadic keys (`rl_policy`)
//! takes their count after its fixed keys.

use super::{Arg, Client};
use crate::script::ScriptDef;
use redis::{Cmd, Value};
use std::sync::Arc;

/// The module as a server reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ModuleInfo {
    /// The module's own version (its crate's).
    pub version: String,
    /// Each native's script and the script version it decides as.
    pub natives: Arc<[(String, u32)]>,
}

impl ModuleInfo {
    /// From `RATOMIC.VERSION`'s reply (`["module", version, script, n, ...]`); None for an error
    /// (no module) or anything else.
    pub(crate) fn parse(reply: Option<&Value>) -> Option<ModuleInfo> {
        let Some(Value::Array(items)) = reply else {
            return None;
        };
        let text = |v: &Value| match v {
            Value::BulkString(b) => String::from_utf8(b.clone()).ok(),
            Value::SimpleString(s) => Some(s.clone()),
            _ => None,
        };
        let mut pairs = items.chunks_exact(2);
        let first = pairs.next()?;
        if text(&first[0])?.as_str() != "module" {
            return None;
        }
        let version = text(&first[1])?;
        let natives = pairs
            .filter_map(|p| match (text(&p[0]), &p[1]) {
                (Some(name), Value::Int(n)) => Some((name, u32::try_from(*n).ok()?)),
                _ => None,
            })
            .collect();
        Some(ModuleInfo { version, natives })
    }

    /// Whether the module decides `def` exactly as this client's script (same version).
    pub fn covers(&self, def: &ScriptDef) -> bool {
        self.natives
            .iter()
            .any(|(name, v)| name == def.name && *v == def.version)
    }

    /// Natives whose version differs from this client's script (used as scripts).
    pub fn mismatched(&self) -> Vec<String> {
        self.natives
            .iter()
            .filter(|(name, v)| crate::script::find(name).is_some_and(|d| d.version != *v))
            .map(|(name, v)| format!("{name} v{v}"))
            .collect()
    }

    /// What every node has: the natives all report alike; None when a node has no module.
    pub(crate) fn common(nodes: &[Option<ModuleInfo>]) -> Option<ModuleInfo> {
        let first = nodes.first()?.clone()?;
        let mut natives: Vec<(String, u32)> = first.natives.to_vec();
        for node in nodes {
            let node = node.as_ref()?;
            natives.retain(|n| node.natives.contains(n));
        }
        Some(ModuleInfo {
            version: first.version,
            natives: natives.into(),
        })
    }
}

/// The probe's command: `RATOMIC.VERSION` (an error where the module is not loaded).
pub(crate) fn probe(pipe: &mut redis::Pipeline) {
    pipe.cmd("RATOMIC.VERSION");
}

impl Client {
    /// `RATOMIC.<SCRIPT> keys... args...` when the detected module covers `def`; None (the
    /// script) when it does not, or when nothing is detected at the moment.
    pub(super) async fn module_cmd(
        &self,
        def: &'static ScriptDef,
        keys: &[&str],
        args: &[Arg<'_>],
    ) -> Option<Cmd> {
        if self.config.force_lua {
            return None;
        }
        // Only what a detection already found: a call never waits for a detection on its way,
        // which on a stalled server would spend its time (and its connection) on the probe and
        // fail as not sent. Nothing detected: the script ([`Client::detect_after`]).
        let covered = self.caps.module_covers(def).unwrap_or(false);
        covered.then(|| native_cmd(def, keys, args))
    }

    /// After a call that ran `def`'s script and was answered while nothing was detected (since
    /// connect, or since something may have put another server behind the client), a detection
    /// in the background, so the next calls have the natives again. Started once the call is
    /// answered, so it finds the connection the call made rather than make one beside it.
    pub(super) fn detect_after(&self, def: &ScriptDef) {
        if !self.config.force_lua && self.caps.module_covers(def).is_none() {
            self.detect_in_background();
        }
    }
}

/// `RATOMIC.<SCRIPT> keys... args...`; for a script whose last key is variadic (`limit...`),
/// the count of those keys after the fixed ones (a native cannot tell it from its argument count).
fn native_cmd(def: &ScriptDef, keys: &[&str], args: &[Arg<'_>]) -> Cmd {
    let mut cmd = redis::cmd(&format!("RATOMIC.{}", def.name.to_ascii_uppercase()));
    match def.keys.last() {
        Some(last) if last.ends_with("...") => {
            let fixed = (def.keys.len() - 1).min(keys.len());
            cmd.arg(&keys[..fixed])
                .arg(keys.len() - fixed)
                .arg(&keys[fixed..]);
        }
        _ => {
            cmd.arg(keys);
        }
    }
    cmd.arg(args);
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> Value {
        Value::BulkString(v.as_bytes().to_vec())
    }

    /// A well-formed reply lists the natives; an error or junk means no module.
    #[test]
    fn parse_version_reply() {
        let reply = Value::Array(vec![
            s("module"),
            s("0.1.0"),
            s("rl_fixed_window"),
            Value::Int(6),
            s("lock_acquire"),
            Value::Int(-1),
        ]);
        let info = ModuleInfo::parse(Some(&reply)).expect("a module");
        assert_eq!(info.version, "0.1.0");
        assert_eq!(info.natives.as_ref(), &[("rl_fixed_window".to_string(), 6)]);
        assert_eq!(ModuleInfo::parse(Some(&Value::Nil)), None);
        assert_eq!(ModuleInfo::parse(None), None);
        let junk = Value::Array(vec![s("x"), s("y")]);
        assert_eq!(ModuleInfo::parse(Some(&junk)), None);
    }

    /// Fixed keys then args; variadic keys counted after the fixed ones.
    #[test]
    fn native_command_layout() {
        use crate::script::registry::{RL_FIXED_WINDOW, RL_POLICY};
        let packed =
            |cmd: Cmd| String::from_utf8_lossy(&cmd.get_packed_command()).replace("\r\n", " ");
        let args = [Arg::from("1"), Arg::from("")];
        let fw = native_cmd(&RL_FIXED_WINDOW.def, &["k"], &args);
        assert!(packed(fw).ends_with("RATOMIC.RL_FIXED_WINDOW $1 k $1 1 $0  "));
        let policy = native_cmd(&RL_POLICY.def, &["r", "a", "b"], &args);
        assert!(packed(policy).ends_with("RATOMIC.RL_POLICY $1 r $1 2 $1 a $1 b $1 1 $0  "));
    }

    /// A cluster uses the natives every node reports alike, none when a node lacks the module.
    #[test]
    fn common_natives() {
        let node = |natives: &[(&str, u32)]| {
            Some(ModuleInfo {
                version: "0.1.0".into(),
                natives: natives.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
            })
        };
        let both = ModuleInfo::common(&[node(&[("a", 1), ("b", 2)]), node(&[("a", 1), ("b", 3)])]);
        assert_eq!(
            both.expect("common").natives.as_ref(),
            &[("a".to_string(), 1)]
        );
        assert_eq!(ModuleInfo::common(&[node(&[("a", 1)]), None]), None);
    }
}
