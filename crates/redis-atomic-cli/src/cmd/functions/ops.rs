//! What `functions` does to the nodes: load or delete on the primaries only (replication carries
//! the change), then watch the replicas until they agree.
//!
//! Every change is planned on all primaries before the first one is touched, so a refusal
//! (different code under our name and version, a function name another library owns, removing
//! the last version a node has, a version loaded nowhere) changes nothing anywhere. `FUNCTION
//! LOAD` is never given `REPLACE`: a loaded version is immutable, like an applied migration, and
//! two deployers racing both end with the same bytes or with one of them refusing.

use super::nodes::{self, Role};
use super::spec::LibrarySpec;
use super::state::NodeState;
use std::time::{Duration, Instant};

/// How long replicas get to show a change.
const REPLICA_WAIT: Duration = Duration::from_secs(10);

/// Outcome of a run: nodes afterwards, and why it was refused or incomplete.
pub struct Outcome {
    /// Nodes (primaries first).
    pub nodes: Vec<NodeState>,
    /// Refusal or incompleteness, for people.
    pub problems: Vec<String>,
}

impl Outcome {
    fn refused(nodes: Vec<NodeState>, problems: Vec<String>) -> Outcome {
        Outcome { nodes, problems }
    }
}

/// `deploy`: load the library on every primary that lacks it, leave other versions alone, then
/// wait for every replica to have it. Refused while the folder's lock file disagrees with it.
pub fn deploy(mut states: Vec<NodeState>, spec: &LibrarySpec) -> Outcome {
    let mut problems: Vec<String> = spec
        .lock_problems
        .iter()
        .map(|p| format!("scripts.lock: {p}: refusing to deploy"))
        .collect();
    problems.extend(
        states
            .iter()
            .filter(|s| s.is_primary())
            .filter_map(|s| s.refusal(spec)),
    );
    if !problems.is_empty() {
        return Outcome::refused(states, problems);
    }
    let name = spec.def.name;
    for s in states.iter_mut().filter(|s| s.is_primary()) {
        let loaded = match s.state {
            "current" => None,
            "missing" => Some(load(s, spec)),
            _ => {
                s.action = Some("skipped (unreachable)".into());
                continue;
            }
        };
        let after = s.again(spec, None);
        // A refused load is judged by what the node holds now, never by the error's text: the
        // same bytes (another deployer won the race) are fine; anything else is named.
        let action = match (loaded, after.state) {
            (None, _) => "unchanged".to_string(),
            (Some(Ok(())), _) => format!("loaded {name}"),
            (Some(Err(_)), "current") => format!("{name} loaded by another deployer"),
            (Some(Err(e)), _) => {
                problems.push(after.refusal(spec).unwrap_or_else(|| {
                    format!(
                        "{}: FUNCTION LOAD failed: {}",
                        s.node.addr,
                        crate::output::one_line(&e)
                    )
                }));
                "failed".to_string()
            }
        };
        *s = NodeState {
            action: Some(action),
            ..after
        };
    }
    settle_replicas(&mut states, spec, &mut problems, |s| s.state == "current");
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

fn load(s: &NodeState, spec: &LibrarySpec) -> anyhow::Result<()> {
    let mut conn = nodes::connect(&s.node.info)?;
    let _: String = redis::cmd("FUNCTION")
        .arg("LOAD")
        .arg(spec.def.source)
        .query(&mut conn)?;
    Ok(())
}

/// Re-observes replicas until `done` holds for each or [`REPLICA_WAIT`] passes.
fn settle_replicas(
    states: &mut [NodeState],
    spec: &LibrarySpec,
    problems: &mut Vec<String>,
    done: impl Fn(&NodeState) -> bool,
) {
    let deadline = Instant::now() + REPLICA_WAIT;
    for s in states.iter_mut().filter(|s| !s.is_primary()) {
        loop {
            *s = s.again(spec, None);
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

/// `rollback`: delete version `version` of the family from every primary that has it — refused,
/// on every node, if no primary has it, or if on any primary it is the only version left
/// (unless `force`).
pub fn rollback(
    mut states: Vec<NodeState>,
    spec: &LibrarySpec,
    version: u32,
    force: bool,
) -> Outcome {
    let name = spec.name_of(version);
    let primaries = || states.iter().filter(|s| s.is_primary());
    let mut problems: Vec<String> = primaries()
        .filter(|s| s.state == "unreachable")
        .map(|s| {
            format!(
                "{} is unreachable: cannot roll back everywhere",
                s.node.addr
            )
        })
        .collect();
    if problems.is_empty() && !primaries().any(|s| s.has(version)) {
        problems.push(format!(
            "version {version} is not loaded on any primary ({name} not found)"
        ));
    }
    if !force {
        problems.extend(
            primaries()
                .filter(|s| s.has(version) && s.versions.len() == 1)
                .map(|s| {
                    format!(
                        "{name} is the last {} library on {}: clients calling it would fail \
                         (deploy another version first, or pass --force)",
                        spec.label, s.node.addr
                    )
                }),
        );
    }
    if !problems.is_empty() {
        return Outcome::refused(states, problems);
    }
    for s in states.iter_mut().filter(|s| s.is_primary()) {
        let action = if s.has(version) {
            let deleted: anyhow::Result<()> = nodes::connect(&s.node.info).and_then(|mut c| {
                Ok(redis::cmd("FUNCTION")
                    .arg("DELETE")
                    .arg(&name)
                    .query(&mut c)?)
            });
            match deleted {
                Ok(()) => format!("deleted {name}"),
                Err(e) => {
                    problems.push(format!(
                        "{}: FUNCTION DELETE failed: {}",
                        s.node.addr,
                        crate::output::one_line(&e)
                    ));
                    "failed".into()
                }
            }
        } else {
            format!("{name} not loaded")
        };
        *s = s.again(spec, Some(action));
    }
    settle_replicas(&mut states, spec, &mut problems, |s| !s.has(version));
    Outcome {
        nodes: states,
        problems,
    }
}

/// `diff`: what `deploy` would do on each primary (replicas follow their primary).
pub fn plan(states: &mut [NodeState], spec: &LibrarySpec) -> bool {
    let functions = spec.functions.len();
    let name = spec.def.name;
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
                format!("would load {name} ({functions} functions){shard}")
            }
            (_, "conflict") => {
                changes = true;
                "CONFLICT: same name, different code; deploy would refuse".into()
            }
            (_, "collision") => {
                changes = true;
                format!("COLLISION: {}; deploy would refuse", s.collisions_text())
            }
            _ => "unreachable".into(),
        });
    }
    changes
}
