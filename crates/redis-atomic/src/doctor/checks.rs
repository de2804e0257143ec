//! The checks of what a node is and may do — version, capabilities, the Function library,
//! cluster slots, the user's permissions — as [`super::rules`] applies them per node.

use super::acl::{AclFacts, DIRECT};
use super::facts::{Library, NodeFacts};
use super::{DoctorOptions, Row, Status};
use crate::script::registry::LIBRARY_NAME;
use crate::Delivery;

/// (product, version, at least 7.0?)
fn server_version(n: &NodeFacts) -> Option<(&'static str, &str, bool)> {
    let (product, v) = match n.info("valkey_version") {
        Some(v) => ("Valkey", v),
        None => ("Redis", n.info("redis_version")?),
    };
    let major: u32 = v.split('.').next()?.parse().ok()?;
    Some((product, v, major >= 7))
}

pub(super) fn version(n: &NodeFacts) -> Row {
    match server_version(n) {
        None => Row::new("version", Status::Warn, "unknown (INFO refused)".into(), ""),
        Some((p, v, true)) => Row::new("version", Status::Ok, format!("{p} {v}"), ""),
        Some((p, v, false)) => Row::new(
            "version",
            Status::Fail,
            format!("{p} {v}: shebang flags, Functions and SET NX GET need Redis 7.0"),
            "upgrade to Redis 7.0+ or Valkey 7.2+",
        ),
    }
}

pub(super) fn capabilities(n: &NodeFacts, opts: &DoctorOptions) -> Row {
    let modern = server_version(n).map(|(_, _, m)| m);
    let yes = |b: Option<bool>| match b {
        Some(true) => "yes",
        Some(false) => "no",
        None => "unknown",
    };
    let found = format!(
        "Functions {}, SET NX GET {}; native {}",
        yes(modern),
        yes(modern),
        crate::client::Capabilities {
            forced_lua: opts.force_lua,
            ..n.native.clone()
        }
        .summary()
    );
    match (opts.delivery, modern) {
        (Delivery::Functions, Some(false)) => Row::new(
            "capabilities",
            Status::Fail,
            found,
            "use Delivery::Eval, or upgrade to Redis 7.0+",
        ),
        _ => Row::new("capabilities", Status::Ok, found, ""),
    }
}

pub(super) fn library(n: &NodeFacts, opts: &DoctorOptions) -> Row {
    let functions = opts.delivery == Delivery::Functions;
    let deploy = "redis-atomic functions deploy (after every topology change)";
    let (status, found, fix) = match &n.library {
        Library::Current => (
            Status::Ok,
            format!("{LIBRARY_NAME} loaded, same code as this build"),
            "",
        ),
        Library::Missing if functions => (
            Status::Warn,
            format!("{LIBRARY_NAME} not loaded: the first FCALL loads it (needs +function|load)"),
            deploy,
        ),
        Library::Missing => (
            Status::Ok,
            format!("{LIBRARY_NAME} not loaded (EVALSHA delivery does not use it)"),
            "",
        ),
        Library::Differs => (
            Status::Fail,
            format!("{LIBRARY_NAME} holds other code than this build's: FCALL would run it"),
            "redis-atomic functions diff; new code needs a new scripts/library.version",
        ),
        Library::Unknown(e) => (Status::Warn, format!("unknown: {e}"), ""),
    };
    Row::new("function-library", status, found, fix)
}

pub(super) fn cluster(n: &NodeFacts) -> Option<Row> {
    let row = match n.cluster.as_ref()? {
        Err(e) => Row::new("cluster-slots", Status::Warn, format!("unknown: {e}"), ""),
        Ok(info) => {
            let get = |k: &str| info.get(k).map(String::as_str).unwrap_or("?");
            let (state, ok) = (get("cluster_state"), get("cluster_slots_ok"));
            if state == "ok" && ok == "16384" {
                Row::new(
                    "cluster-slots",
                    Status::Ok,
                    "16384 of 16384 slots served, cluster_state ok".into(),
                    "",
                )
            } else {
                Row::new(
                    "cluster-slots",
                    Status::Fail,
                    format!(
                        "cluster_state {state}, {ok} of 16384 slots ok ({} assigned)",
                        get("cluster_slots_assigned")
                    ),
                    "assign every slot and bring failed nodes back (redis-cli --cluster check/fix)",
                )
            }
        }
    };
    Some(row)
}

pub(super) fn acl(n: &NodeFacts) -> Vec<Row> {
    let fix_for = |user: &str| {
        format!("grant them: the rules of `redis-atomic scripts acl --namespace NS --user {user}`")
    };
    match &n.acl {
        AclFacts::Unknown(reason) => vec![Row::new(
            "acl",
            Status::Warn,
            format!("not checked: {reason}"),
            "run the doctor as an admin with --acl-user <application user> (ACL DRYRUN)",
        )],
        AclFacts::Checked {
            user,
            primitives,
            unjudged,
        } => {
            let mut rows: Vec<Row> = primitives
                .iter()
                .map(|(p, needed, denied)| {
                    let check = format!("acl {p}");
                    if denied.is_empty() {
                        let what = if p == DIRECT {
                            "its own commands"
                        } else {
                            "scripts"
                        };
                        Row::new(
                            &check,
                            Status::Ok,
                            format!("user {user} may run all {needed} commands ({what})"),
                            "",
                        )
                    } else {
                        let fix = fix_for(user);
                        Row::new(
                            &check,
                            Status::Fail,
                            format!("user {user} may not run: {}", denied.join(" ")),
                            &fix,
                        )
                    }
                })
                .collect();
            if !unjudged.is_empty() {
                rows.push(Row::new(
                    "acl",
                    Status::Warn,
                    format!("could not judge: {}", unjudged.join("; ")),
                    "",
                ));
            }
            rows
        }
    }
}
