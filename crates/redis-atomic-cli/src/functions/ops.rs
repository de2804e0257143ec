//! What `functions` does to the nodes: observe each node's libraries, then load or delete on the
//! primaries only (replication carries the change), then watch the replicas until they agree.
//!
//! Every change is planned on all primaries before the first one is touched, so a refusal
//! (a different library under our name and version, or removing the last version a node has)
//! changes nothing anywhere. `FUNCTION LOAD` is never given `REPLACE`: a loaded version is
//! immutable, like an applied migration, and two deployers racing both end with the same bytes
//! or with one of them refusing.

use super::nodes::{self, Installed, Node, Role};
use redis_atomic::script::registry::{LIBRARY_NAME, LIBRARY_SHA1, LIBRARY_SOURCE};
use serde::Serialize;
use std::time::{Duration, Instant};

/// How long replicas get to show a change.
const REPLICA_WAIT: Duration = Duration::from_secs(10);

/// One node as observed (and, after a change, as changed).
#[derive(Clone, Debug, Serialize)]
pub struct NodeState {
    /// The node.
    #[serde(flatten)]
    pub node: Node,
    /// redis-atomic libraries loaded, oldest first (empty when unreachable).
    pub versions: Vec<Installed>,
    /// `current` (this binary's version, same bytes), `missing`, `conflict` (same name, other
    /// bytes) or `unreachable`.
    pub state: &'static str,
    /// What this run did or would do here.
    pub action: Option<String>,
    /// Connection or command error.
    pub error: Option<String>,
}

impl NodeState {
    fn observe(node: Node) -> NodeState {
        let listed = nodes::connect(&node.info).and_then(|mut c| nodes::installed(&mut c));
        let (versions, error) = match listed {
            Ok(v) => (v, None),
            Err(e) => (Vec::new(), Some(format!("{e:#}"))),
        };
        let mut s = NodeState {
            node,
            versions,
            state: "unreachable",
            action: None,
            error,
        };
        s.state = s.judge();
        s
    }

    fn judge(&self) -> &'static str {
        if self.error.is_some() {
            return "unreachable";
        }
        match self.versions.iter().find(|l| l.name == LIBRARY_NAME) {
            Some(l) if l.sha1 == LIBRARY_SHA1 => "current",
            Some(_) => "conflict",
            None => "missing",
        }
    }

    /// The code loaded under this binary's library name, when it differs.
    pub fn conflicting_code(&self) -> Option<&str> {
        self.versions
            .iter()
            .find(|l| l.name == LIBRARY_NAME && l.sha1 != LIBRARY_SHA1)
            .map(|l| l.code.as_str())
    }

    fn is_primary(&self) -> bool {
        self.node.role == Role::Primary
    }
}

/// Every node, observed.
pub fn observe(url: &str, cluster: bool) -> anyhow::Result<Vec<NodeState>> {
    Ok(nodes::discover(url, cluster)?
        .into_iter()
        .map(NodeState::observe)
        .collect())
}

/// Outcome of a change: nodes afterwards, and why it was refused or incomplete.
pub struct Outcome {
    /// Nodes (primaries first).
    pub nodes: Vec<NodeState>,
    /// Refusal or incompleteness, for people.
    pub problems: Vec<String>,
}

/// `deploy`: load this binary's library on every primary that lacks it, leave other versions
/// alone, then wait for every replica to have it.
pub fn deploy(mut states: Vec<NodeState>) -> Outcome {
    let mut problems: Vec<String> = states
        .iter()
        .filter(|s| s.is_primary() && s.state == "conflict")
        .map(|s| {
            format!(
                "{} already has {LIBRARY_NAME} with different code: refusing to replace a loaded \
                 version (bump scripts/library.version for new code)",
                s.node.addr
            )
        })
        .collect();
    if !problems.is_empty() {
        return Outcome {
            nodes: states,
            problems,
        };
    }
    for s in states.iter_mut().filter(|s| s.is_primary()) {
        s.action = Some(match s.state {
            "current" => "unchanged".into(),
            "missing" => match load(s) {
                Ok(()) => format!("loaded {LIBRARY_NAME}"),
                Err(e) => {
                    problems.push(format!("{}: FUNCTION LOAD failed: {e:#}", s.node.addr));
                    "failed".into()
                }
            },
            _ => "skipped (unreachable)".into(),
        });
        *s = NodeState {
            action: s.action.take(),
            ..NodeState::observe(s.node.clone())
        };
    }
    settle_replicas(&mut states, &mut problems, |s| s.state == "current");
    problems.extend(
        states
            .iter()
            .filter(|s| s.state != "current")
            .map(|s| format!("{} ({:?}) is {}", s.node.addr, s.node.role, s.state)),
    );
    Outcome {
        nodes: states,
        problems,
    }
}

fn load(s: &NodeState) -> anyhow::Result<()> {
    let mut conn = nodes::connect(&s.node.info)?;
    let loaded: redis::RedisResult<String> = redis::cmd("FUNCTION")
        .arg("LOAD")
        .arg(LIBRARY_SOURCE)
        .query(&mut conn);
    match loaded {
        Ok(_) => Ok(()),
        // Another deployer won the race: fine if it loaded the same bytes (re-observed next).
        Err(e) if e.to_string().contains("already exists") => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Re-observes replicas until `done` holds for each or [`REPLICA_WAIT`] passes.
fn settle_replicas(
    states: &mut [NodeState],
    problems: &mut Vec<String>,
    done: impl Fn(&NodeState) -> bool,
) {
    let deadline = Instant::now() + REPLICA_WAIT;
    for s in states.iter_mut().filter(|s| !s.is_primary()) {
        loop {
            *s = NodeState::observe(s.node.clone());
            if done(s) || s.state == "unreachable" {
                break;
            }
            if Instant::now() > deadline {
                problems.push(format!(
                    "replica {} did not receive the change within {REPLICA_WAIT:?}",
                    s.node.addr
                ));
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        s.action = Some(
            if done(s) {
                "replicated"
            } else {
                "not replicated"
            }
            .into(),
        );
    }
}

/// `rollback`: delete `redis_atomic_v<version>` from every primary that has it — refused, on
/// every node, if on any primary it is the only redis-atomic library left (unless `force`).
pub fn rollback(mut states: Vec<NodeState>, version: u32, force: bool) -> Outcome {
    let name = format!("{}{version}", nodes::PREFIX);
    let has = |s: &NodeState| s.versions.iter().any(|l| l.version == version);
    let mut problems: Vec<String> = states
        .iter()
        .filter(|s| s.is_primary() && s.state == "unreachable")
        .map(|s| {
            format!(
                "{} is unreachable: cannot roll back everywhere",
                s.node.addr
            )
        })
        .collect();
    if !force {
        problems.extend(
            states
                .iter()
                .filter(|s| s.is_primary() && has(s) && s.versions.len() == 1)
                .map(|s| {
                    format!(
                        "{name} is the last redis-atomic library on {}: clients calling it would \
                         fail (deploy another version first, or pass --force)",
                        s.node.addr
                    )
                }),
        );
    }
    if !problems.is_empty() {
        return Outcome {
            nodes: states,
            problems,
        };
    }
    for s in states.iter_mut().filter(|s| s.is_primary()) {
        let action = if has(s) {
            let deleted: anyhow::Result<()> = nodes::connect(&s.node.info).and_then(|mut c| {
                Ok(redis::cmd("FUNCTION")
                    .arg("DELETE")
                    .arg(&name)
                    .query(&mut c)?)
            });
            match deleted {
                Ok(()) => format!("deleted {name}"),
                Err(e) => {
                    problems.push(format!("{}: FUNCTION DELETE failed: {e:#}", s.node.addr));
                    "failed".into()
                }
            }
        } else {
            format!("{name} not loaded")
        };
        *s = NodeState {
            action: Some(action),
            ..NodeState::observe(s.node.clone())
        };
    }
    settle_replicas(&mut states, &mut problems, |s| !has(s));
    Outcome {
        nodes: states,
        problems,
    }
}

/// `diff`: what `deploy` would do on each primary (replicas follow their primary).
pub fn plan(states: &mut [NodeState]) -> bool {
    let functions = LIBRARY_SOURCE.matches("redis.register_function").count();
    let mut changes = false;
    for s in states.iter_mut() {
        s.action = Some(match (s.node.role, s.state) {
            (Role::Replica, _) => "follows its primary".into(),
            (_, "current") => "unchanged".into(),
            (_, "missing") => {
                changes = true;
                let shard = if s.node.slots == Some(0) {
                    " (owns no slots yet: a new shard?)"
                } else {
                    ""
                };
                format!("would load {LIBRARY_NAME} ({functions} functions){shard}")
            }
            (_, "conflict") => {
                changes = true;
                "CONFLICT: same name, different code; deploy would refuse".into()
            }
            _ => "unreachable".into(),
        });
    }
    changes
}
