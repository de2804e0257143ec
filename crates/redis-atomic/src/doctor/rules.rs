//! The rules: each node's facts → rows, then identical findings on several nodes merged into one
//! row. Pure functions of the facts, so every threshold is unit-tested without a server; what
//! each finding means for each primitive is `docs/durability.md`.

use super::acl::{AclFacts, DIRECT};
use super::facts::{Library, NodeFacts};
use super::{memory, DoctorOptions, Report, Row, Status};
use crate::script::registry::LIBRARY_NAME;
use crate::Delivery;

const DURABILITY_FIX: &str = "appendonly yes + appendfsync always (no acknowledged write lost), \
     or everysec accepting its window; see docs/durability.md";

pub(crate) fn judge(nodes: &[NodeFacts], opts: &DoctorOptions) -> Report {
    let mut rows: Vec<Row> = Vec::new();
    for n in nodes {
        let mut found = vec![
            maxmemory(n),
            persistence(n),
            replication(n),
            busy(n),
            version(n),
            capabilities(n, opts),
            library(n, opts),
        ];
        found.extend(cluster(n));
        found.extend(acl(n));
        for mut row in found {
            row.nodes.push(n.addr.clone());
            merge(&mut rows, row);
        }
    }
    Report { rows }
}

/// Adds `row`'s node to an identical finding, or inserts it after the last row of its check.
fn merge(rows: &mut Vec<Row>, row: Row) {
    let same = |r: &Row| {
        (&r.check, r.status, &r.found, &r.fix) == (&row.check, row.status, &row.found, &row.fix)
    };
    if let Some(existing) = rows.iter_mut().find(|r| same(r)) {
        existing.nodes.extend(row.nodes);
        return;
    }
    match rows.iter().rposition(|r| r.check == row.check) {
        Some(i) => rows.insert(i + 1, row),
        None => rows.push(row),
    }
}

fn maxmemory(n: &NodeFacts) -> Row {
    let max = n
        .setting("maxmemory", Some("maxmemory"))
        .and_then(|v| v.parse().ok());
    let policy = n.setting("maxmemory-policy", Some("maxmemory_policy"));
    let (status, found) = memory::judge(max, policy);
    let fix = match (status, policy) {
        (Status::Ok, _) => "",
        (_, None) => "run the doctor as a user that may run INFO or CONFIG GET",
        _ => memory::FIX,
    };
    Row::new("maxmemory-policy", status, found, fix)
}

fn persistence(n: &NodeFacts) -> Row {
    let aof = n
        .setting("appendonly", Some("aof_enabled"))
        .map(|v| v == "yes" || v == "1");
    let fsync = n.setting("appendfsync", None);
    let save = n.setting("save", None);
    let (status, found) = match (aof, fsync, save) {
        (None, ..) => (
            Status::Warn,
            "unknown (CONFIG GET and INFO refused)".to_string(),
        ),
        (Some(true), Some("always"), _) => (
            Status::Ok,
            "AOF, appendfsync always: a crash loses no acknowledged write".to_string(),
        ),
        (Some(true), Some("everysec"), _) => (
            Status::Warn,
            "AOF, appendfsync everysec: a crash can lose the last ~1-2 s of acknowledged writes \
             (an OS crash always; a process crash when a slow fsync made Redis postpone writing)"
                .to_string(),
        ),
        (Some(true), Some("no"), _) => (
            Status::Warn,
            "AOF, appendfsync no: an OS crash loses what the kernel had not flushed (~30 s)"
                .to_string(),
        ),
        (Some(true), _, _) => (Status::Warn, "AOF on, appendfsync unknown".to_string()),
        (Some(false), _, Some("")) => (
            Status::Fail,
            "no persistence: a restart loses every lock, fence, record, permit, job and count"
                .to_string(),
        ),
        (Some(false), _, Some(rules)) => (
            Status::Fail,
            format!(
                "RDB snapshots only (save {rules}): a crash loses every write since the last \
                 snapshot, up to {} s",
                snapshot_window(rules)
            ),
        ),
        (Some(false), _, None) => (
            Status::Fail,
            "AOF off: a crash loses every write since the last snapshot, if any".to_string(),
        ),
    };
    let fix = if status == Status::Ok {
        ""
    } else {
        DURABILITY_FIX
    };
    Row::new("persistence", status, found, fix)
}

/// The longest a quiet server goes without a snapshot: the largest interval of `save` rules
/// (`3600 1 300 100 60 10000` → 3600).
fn snapshot_window(rules: &str) -> u64 {
    let numbers: Vec<u64> = rules
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    numbers.chunks(2).map(|c| c[0]).max().unwrap_or(0)
}

fn replication(n: &NodeFacts) -> Row {
    let fix = "min-replicas-to-write 1 + min-replicas-max-lag 10 on the primary, and \
               ClientConfig::replicas (WAIT) for writes that must survive a failover; see \
               docs/failover.md";
    if n.is_replica() {
        let primary = format!(
            "{}:{}",
            n.info("master_host").unwrap_or("?"),
            n.info("master_port").unwrap_or("?")
        );
        return match n.info("master_link_status") {
            Some("up") => Row::new(
                "replication",
                Status::Ok,
                "replica, link to its primary up".into(),
                "",
            ),
            other => Row::new(
                "replication",
                Status::Fail,
                format!(
                    "replica of {primary}, link {}: a failover to it loses what it lacks",
                    other.unwrap_or("unknown")
                ),
                "bring the link up (check the replica's log, masterauth, network)",
            ),
        };
    }
    let Ok(info) = &n.info else {
        return Row::new(
            "replication",
            Status::Warn,
            "unknown (INFO refused)".into(),
            "",
        );
    };
    let online = info
        .iter()
        .filter(|(k, v)| is_replica_line(k) && v.contains("state=online"))
        .count();
    let min: Option<u64> = n
        .setting("min-replicas-to-write", None)
        .and_then(|v| v.parse().ok());
    let lag = n.setting("min-replicas-max-lag", None).unwrap_or("?");
    match (online, min) {
        (0, _) => Row::new(
            "replication",
            Status::Warn,
            "no replica: nothing takes over when this node fails, and what it had not \
             persisted is gone"
                .into(),
            "add a replica (Sentinel or Cluster); see docs/failover.md",
        ),
        (k, Some(m)) if m > 0 && (k as u64) < m => Row::new(
            "replication",
            Status::Fail,
            format!(
                "{k} replica(s) online, min-replicas-to-write {m}: writes are refused (NOREPLICAS)"
            ),
            "bring replicas back or lower min-replicas-to-write",
        ),
        (k, Some(m)) if m > 0 => Row::new(
            "replication",
            Status::Ok,
            format!(
                "{k} replica(s), min-replicas-to-write {m} (max lag {lag} s): a cut-off primary \
                 stops accepting writes after {lag} s; writes within that lag can still be lost \
                 by a failover unless waited for"
            ),
            "",
        ),
        (k, _) => Row::new(
            "replication",
            Status::Warn,
            format!(
                "{k} replica(s), asynchronous, min-replicas-to-write 0: a failover loses writes \
                 acknowledged but not yet replicated (a lock held twice, a request run again; \
                 fences never repeat)"
            ),
            fix,
        ),
    }
}

/// `slave0`, `slave1`, ... (INFO replication's replica lines).
fn is_replica_line(key: &str) -> bool {
    key.strip_prefix("slave")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

fn busy(n: &NodeFacts) -> Row {
    let ms: Option<i64> = n
        .setting("busy-reply-threshold", None)
        .or_else(|| n.setting("lua-time-limit", None))
        .and_then(|v| v.parse().ok());
    match ms {
        None => Row::new(
            "busy-reply-threshold",
            Status::Warn,
            "unknown (CONFIG GET refused)".into(),
            "",
        ),
        Some(ms) if ms <= 0 => Row::new(
            "busy-reply-threshold",
            Status::Warn,
            format!("{ms}: a runaway script blocks every client, with no BUSY reply and no way to SCRIPT KILL it"),
            "busy-reply-threshold 5000 (the default)",
        ),
        Some(ms) => Row::new(
            "busy-reply-threshold",
            Status::Ok,
            format!(
                "{ms} ms: a foreign script running longer makes the server answer BUSY (typed \
                 Rejected, retried within the retry policy; until then calls wait)"
            ),
            "",
        ),
    }
}

/// (product, version, at least 7.0?)
fn server_version(n: &NodeFacts) -> Option<(&'static str, &str, bool)> {
    let (product, v) = match n.info("valkey_version") {
        Some(v) => ("Valkey", v),
        None => ("Redis", n.info("redis_version")?),
    };
    let major: u32 = v.split('.').next()?.parse().ok()?;
    Some((product, v, major >= 7))
}

fn version(n: &NodeFacts) -> Row {
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

fn capabilities(n: &NodeFacts, opts: &DoctorOptions) -> Row {
    let modern = server_version(n).map(|(_, _, m)| m);
    let yes = |b: Option<bool>| match b {
        Some(true) => "yes",
        Some(false) => "no",
        None => "unknown",
    };
    let found = format!(
        "Functions {}, SET NX GET {}, native DELIFEQ {}, SET IFEQ {}",
        yes(modern),
        yes(modern),
        yes(n.delifeq),
        yes(n.set_ifeq)
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

fn library(n: &NodeFacts, opts: &DoctorOptions) -> Row {
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

fn cluster(n: &NodeFacts) -> Option<Row> {
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

fn acl(n: &NodeFacts) -> Vec<Row> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn node(info: &[(&str, &str)], config: &[(&str, &str)]) -> NodeFacts {
        let map = |kv: &[(&str, &str)]| -> HashMap<String, String> {
            kv.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        NodeFacts {
            addr: "n:1".into(),
            info: Ok(map(info)),
            config: Ok(map(config)),
            cluster: None,
            library: Library::Missing,
            delifeq: Some(false),
            set_ifeq: Some(false),
            acl: AclFacts::Unknown("test".into()),
        }
    }

    fn status(rows: &Report, check: &str) -> Status {
        rows.rows
            .iter()
            .find(|r| r.check == check)
            .map(|r| r.status)
            .unwrap()
    }

    /// Persistence: fsync always ok, everysec warns, RDB only and nothing fail with the window.
    #[test]
    fn persistence_rules() {
        let opts = DoctorOptions::default();
        let always = node(&[], &[("appendonly", "yes"), ("appendfsync", "always")]);
        assert_eq!(status(&judge(&[always], &opts), "persistence"), Status::Ok);
        let everysec = node(&[], &[("appendonly", "yes"), ("appendfsync", "everysec")]);
        assert_eq!(
            status(&judge(&[everysec], &opts), "persistence"),
            Status::Warn
        );
        let rdb = node(
            &[],
            &[("appendonly", "no"), ("save", "3600 1 300 100 60 10000")],
        );
        let r = judge(&[rdb], &opts);
        assert_eq!(status(&r, "persistence"), Status::Fail);
        assert!(r.rows.iter().any(|r| r.found.contains("up to 3600 s")));
        let none = node(&[], &[("appendonly", "no"), ("save", "")]);
        assert_eq!(status(&judge(&[none], &opts), "persistence"), Status::Fail);
        let from_info = node(&[("aof_enabled", "1")], &[]);
        assert_eq!(
            status(&judge(&[from_info], &opts), "persistence"),
            Status::Warn
        );
    }

    /// Replication: none warns, async warns, min-replicas ok, too few online fails.
    #[test]
    fn replication_rules() {
        let opts = DoctorOptions::default();
        let one = ("slave0", "ip=127.0.0.1,port=1,state=online,offset=1,lag=0");
        let r = |info: &[(&str, &str)], cfg: &[(&str, &str)]| {
            status(&judge(&[node(info, cfg)], &opts), "replication")
        };
        assert_eq!(r(&[("role", "master")], &[]), Status::Warn);
        assert_eq!(
            r(
                &[("role", "master"), one],
                &[("min-replicas-to-write", "0")]
            ),
            Status::Warn
        );
        assert_eq!(
            r(
                &[("role", "master"), one],
                &[("min-replicas-to-write", "1")]
            ),
            Status::Ok
        );
        assert_eq!(
            r(
                &[("role", "master"), one],
                &[("min-replicas-to-write", "2")]
            ),
            Status::Fail
        );
        assert_eq!(
            r(&[("role", "slave"), ("master_link_status", "down")], &[]),
            Status::Fail
        );
        assert!(!is_replica_line("slave_read_only") && is_replica_line("slave12"));
    }

    /// Identical findings on several nodes become one row listing them; failures fail the report.
    #[test]
    fn rows_merge_and_fail() {
        let opts = DoctorOptions::default();
        let mut a = node(
            &[("redis_version", "6.2.1")],
            &[
                ("maxmemory", "1048576"),
                ("maxmemory-policy", "allkeys-lru"),
            ],
        );
        let mut b = a.clone();
        a.addr = "a:1".into();
        b.addr = "b:2".into();
        let report = judge(&[a, b], &opts);
        let mm = report
            .rows
            .iter()
            .find(|r| r.check == "maxmemory-policy")
            .unwrap();
        assert_eq!((mm.status, mm.nodes.len()), (Status::Fail, 2));
        assert_eq!(status(&report, "version"), Status::Fail);
        assert!(!report.ok() && report.worst() == Status::Fail);
        assert_eq!(snapshot_window("900 1 300 10"), 900);
        assert_eq!(snapshot_window("bogus"), 0);
    }
}
