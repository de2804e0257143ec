//! Can the application's user run what each primitive needs? Asked of the server with
//! `ACL DRYRUN` per command (with a key under the application's namespace), so the answer is the
//! server's own ACL evaluation, categories and key patterns included, not a re-implementation.
//!
//! What each primitive needs is derived like [`crate::script::acl_rules`]: the delivery commands
//! and every command its scripts call (ACL applies inside scripts too), plus
//! [`crate::script::DIRECT_COMMANDS`] for the primitives that send commands themselves (CAS,
//! multi-key writes, dedup, quota reads, `WAIT`). `DRYRUN` needs a well-formed command, so each
//! one is built from the server's `COMMAND INFO`: its arity, and the key at its first key position.

use super::facts::Conn;
use super::DoctorOptions;
use crate::client::memory::short;
use crate::script::{registry, DIRECT_COMMANDS};
use crate::Delivery;
use redis::Value;
use std::collections::{BTreeMap, HashMap};

/// The label of the primitives that send their own commands.
pub(crate) const DIRECT: &str = "cas/multi/dedup";

/// What the ACL probe found on one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum AclFacts {
    /// `ACL DRYRUN` answered for `user`: per primitive, how many commands it needs and those
    /// refused (empty: all allowed); and the commands it could not judge (with why).
    Checked {
        user: String,
        primitives: Vec<(String, usize, Vec<String>)>,
        unjudged: Vec<String>,
    },
    /// The probe could not run (e.g. the user may not run `ACL`).
    Unknown(String),
}

/// Every primitive with the commands it needs under `delivery`, in a stable order.
pub(crate) fn needs(delivery: Delivery) -> Vec<(String, Vec<String>)> {
    let mut by: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for def in registry::ALL {
        let list = by.entry(primitive_name(def.primitive())).or_default();
        let send = match (delivery, def.read_only()) {
            (Delivery::Functions, false) => vec!["fcall"],
            (Delivery::Functions, true) => vec!["fcall_ro"],
            (_, false) => vec!["evalsha", "script|load"],
            (_, true) => vec!["evalsha_ro", "script|load"],
        };
        let called = redis_atomic_scripts::check::called_commands(def.source);
        for cmd in send
            .into_iter()
            .map(str::to_string)
            .chain(called.into_iter().map(|c| c.to_ascii_lowercase()))
        {
            if !list.contains(&cmd) {
                list.push(cmd);
            }
        }
    }
    let mut out: Vec<(String, Vec<String>)> = by.into_iter().collect();
    let direct = DIRECT_COMMANDS.iter().map(|c| c.to_string()).collect();
    out.push((DIRECT.to_string(), direct));
    out
}

/// Script name prefixes as the docs name the primitives.
fn primitive_name(prefix: &str) -> String {
    match prefix {
        "idem" => "idempotency",
        "rl" => "ratelimit",
        "sem" => "semaphore",
        "fenced" => "fenced-write",
        other => other,
    }
    .to_string()
}

pub(crate) async fn gather(conn: &mut Conn<'_>, opts: &DoctorOptions) -> AclFacts {
    let user = match &opts.acl_user {
        Some(u) => u.clone(),
        None => match conn.run(redis::cmd("ACL").arg("WHOAMI")).await {
            Ok(v) => match redis::from_redis_value::<String>(v) {
                Ok(u) => u,
                Err(e) => return AclFacts::Unknown(format!("ACL WHOAMI: {e}")),
            },
            Err(e) => return AclFacts::Unknown(format!("ACL WHOAMI refused: {}", short(e))),
        },
    };
    let needs = needs(opts.delivery);
    let mut distinct: Vec<String> = needs.iter().flat_map(|(_, c)| c.clone()).collect();
    distinct.sort_unstable();
    distinct.dedup();
    let shapes = match shapes(conn, &distinct).await {
        Ok(s) => s,
        Err(e) => return AclFacts::Unknown(format!("COMMAND INFO: {e}")),
    };
    let key = format!("{}:doctor:{{probe}}", opts.namespace);
    let mut verdicts: HashMap<String, Result<bool, String>> = HashMap::new();
    for name in distinct {
        let verdict = match shapes.get(&name) {
            None => Err(format!("{name}: unknown to this server")),
            Some(shape) => dryrun(conn, &user, &shape.args(&name, &key)).await,
        };
        if let Err(e) = &verdict {
            if e.contains("NOPERM") {
                return AclFacts::Unknown(format!("ACL DRYRUN refused: {e}"));
            }
        }
        verdicts.insert(name, verdict);
    }
    let mut unjudged: Vec<String> = verdicts
        .values()
        .filter_map(|v| v.as_ref().err().cloned())
        .collect();
    unjudged.sort();
    let primitives = needs
        .into_iter()
        .map(|(primitive, cmds)| {
            let needed = cmds.len();
            let denied = cmds
                .into_iter()
                .filter(|c| matches!(verdicts.get(c.as_str()), Some(Ok(false))))
                .collect();
            (primitive, needed, denied)
        })
        .collect();
    AclFacts::Checked {
        user,
        primitives,
        unjudged,
    }
}

/// `Ok(true)` allowed, `Ok(false)` refused, `Err` when the server could not judge it.
async fn dryrun(conn: &mut Conn<'_>, user: &str, args: &[String]) -> Result<bool, String> {
    let mut cmd = redis::cmd("ACL");
    cmd.arg("DRYRUN").arg(user).arg(args);
    match conn.run(&cmd).await {
        Ok(Value::Okay) => Ok(true),
        Ok(Value::SimpleString(s)) if s == "OK" => Ok(true),
        Ok(Value::BulkString(_) | Value::VerbatimString { .. }) => Ok(false),
        Ok(other) => Err(format!("{}: unexpected reply {other:?}", args[0])),
        Err(e) => Err(format!("{}: {}", args.join(" "), short(e))),
    }
}

/// How to write a well-formed call of one command: from `COMMAND INFO`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Shape {
    /// Words in a call, the command's own included; negative: at least that many.
    arity: i64,
    /// Position of the first key (0: none).
    first_key: i64,
}

impl Shape {
    /// `name` (`script|load` → `script load`) padded with `0`s to its arity, `key` at the first
    /// key position.
    fn args(&self, name: &str, key: &str) -> Vec<String> {
        let mut args: Vec<String> = name.split('|').map(str::to_string).collect();
        let words = usize::try_from(self.arity.unsigned_abs())
            .unwrap_or(0)
            .min(16);
        while args.len() < words {
            let at = i64::try_from(args.len()).unwrap_or(i64::MAX);
            args.push(if at == self.first_key { key } else { "0" }.to_string());
        }
        args
    }
}

/// The shape of every command in `names` (subcommands as `container|sub`), one `COMMAND INFO`.
async fn shapes(conn: &mut Conn<'_>, names: &[String]) -> Result<HashMap<String, Shape>, String> {
    let mut bases: Vec<&str> = names
        .iter()
        .map(|n| n.split('|').next().unwrap_or(n))
        .collect();
    bases.dedup();
    let mut cmd = redis::cmd("COMMAND");
    cmd.arg("INFO").arg(&bases);
    let Value::Array(entries) = conn.run(&cmd).await.map_err(short)? else {
        return Err("not an array".into());
    };
    let mut out = HashMap::new();
    for entry in &entries {
        collect(entry, &mut out);
    }
    Ok(out)
}

/// One `COMMAND INFO` entry and its subcommands (index 9, Redis 7) into `out`.
fn collect(entry: &Value, out: &mut HashMap<String, Shape>) {
    let Value::Array(parts) = entry else { return };
    let int = |i: usize| match parts.get(i) {
        Some(Value::Int(n)) => Some(*n),
        _ => None,
    };
    let name = parts
        .first()
        .and_then(|v| redis::from_redis_value_ref::<String>(v).ok());
    if let (Some(name), Some(arity), Some(first_key)) = (name, int(1), int(3)) {
        out.insert(name.to_ascii_lowercase(), Shape { arity, first_key });
    }
    if let Some(Value::Array(subs)) = parts.get(9) {
        for sub in subs {
            collect(sub, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Calls are padded to the arity with the key where the first key goes.
    #[test]
    fn dryrun_calls_are_well_formed() {
        let get = Shape {
            arity: 2,
            first_key: 1,
        };
        assert_eq!(get.args("get", "k"), ["get", "k"]);
        let zadd = Shape {
            arity: -4,
            first_key: 1,
        };
        assert_eq!(zadd.args("zadd", "k"), ["zadd", "k", "0", "0"]);
        let load = Shape {
            arity: 3,
            first_key: 0,
        };
        assert_eq!(load.args("script|load", "k"), ["script", "load", "0"]);
        let absurd = Shape {
            arity: i64::MIN,
            first_key: 0,
        };
        assert_eq!(absurd.args("x", "k").len(), 16);
    }

    /// Every primitive needs its delivery command; the direct commands come last.
    #[test]
    fn needs_cover_every_script() {
        let needs = needs(Delivery::Eval);
        assert!(needs
            .iter()
            .any(|(p, c)| p == "lock" && c.contains(&"evalsha".to_string())));
        assert_eq!(needs.last().map(|(p, _)| p.as_str()), Some(DIRECT));
        let f = needs_of(Delivery::Functions, "lock");
        assert!(f.contains(&"fcall".to_string()) && !f.contains(&"evalsha".to_string()));
    }

    fn needs_of(delivery: Delivery, primitive: &str) -> Vec<String> {
        needs(delivery)
            .into_iter()
            .find(|(p, _)| p == primitive)
            .map(|(_, c)| c)
            .unwrap_or_default()
    }
}
