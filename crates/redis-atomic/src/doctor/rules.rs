//! The rules: each node's facts → rows (the settings here, what the node is and may do in
//! [`super::checks`]), then identical findings on several nodes merged into one row. Pure functions of the facts, so every threshold is unit-tested without a server; what
//! each finding means for each primitive is `docs/durability.md`.

use super::checks::{acl, capabilities, cluster, library, version};
use super::facts::NodeFacts;
use super::module::module;
use super::{DoctorOptions, Report, Row, Status};
use crate::client::memory;

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
            module(n, opts),
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

#[cfg(test)]
mod tests {
    use super::super::acl::AclFacts;
    use super::super::facts::Library;
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
            native: crate::client::Capabilities::none(),
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
