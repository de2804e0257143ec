//! The deployment audit on real servers: what `Client::server_report` (and so `redis-atomic
//! doctor`) says about a default server, a safe one, an evicting one, a cluster, a conflicting
//! Function library and a restricted user; and the check every client makes when it connects.
//! The connect-time warning is counted in a metrics recorder of the test's own.

use crate::common::metrics::Recorded;
use redis_atomic::doctor::{DoctorOptions, Report, Status};
use redis_atomic::{Client, ClientConfig};
use redis_atomic_testkit::{Fsync, RedisCluster, RedisServer, ServerOptions};

fn server_warnings(m: &Recorded) -> u64 {
    m.counter(redis_atomic::observe::SERVER_WARNINGS_TOTAL, &[])
}

/// The status of `check` (panics when absent or when its nodes disagree).
fn status(report: &Report, check: &str) -> Status {
    let rows: Vec<_> = report.rows.iter().filter(|r| r.check == check).collect();
    assert_eq!(rows.len(), 1, "{check}: {rows:#?}");
    rows[0].status
}

async fn report_of(opts: ServerOptions) -> (RedisServer, Client, Report) {
    let server = RedisServer::start(opts).unwrap();
    let client = Client::connect(&server.url(), ClientConfig::default())
        .await
        .unwrap();
    let report = client
        .server_report(&DoctorOptions::default())
        .await
        .unwrap();
    (server, client, report)
}

/// The testkit's default server (no persistence, no replica, noeviction): persistence fails,
/// replication warns, everything else is fine — and the connected default user may run all.
#[tokio::test]
async fn default_server_fails_persistence_only() {
    let (_s, client, report) = report_of(ServerOptions::default()).await;
    assert_eq!(status(&report, "maxmemory-policy"), Status::Ok);
    assert_eq!(status(&report, "persistence"), Status::Fail);
    assert_eq!(status(&report, "replication"), Status::Warn);
    assert_eq!(status(&report, "busy-reply-threshold"), Status::Ok);
    assert_eq!(status(&report, "version"), Status::Ok);
    assert_eq!(status(&report, "function-library"), Status::Ok);
    assert_eq!(status(&report, "acl lock"), Status::Ok);
    assert_eq!(status(&report, "acl cas/multi/dedup"), Status::Ok);
    assert!(report.rows.iter().all(|r| r.check != "cluster-slots"));
    let failures: Vec<_> = report.failures().map(|r| r.check.as_str()).collect();
    assert_eq!(failures, ["persistence"], "{report:#?}");
    assert_eq!(client.memory_check().unwrap().status, Status::Ok);
}

/// AOF with fsync always and a noeviction limit: no failure at all.
#[tokio::test]
async fn durable_server_passes() {
    let (_s, _c, report) = report_of(ServerOptions {
        appendonly: true,
        appendfsync: Some(Fsync::Always),
        maxmemory: Some(64 << 20),
        ..Default::default()
    })
    .await;
    assert_eq!(status(&report, "persistence"), Status::Ok);
    assert_eq!(status(&report, "maxmemory-policy"), Status::Ok);
    assert!(report.ok(), "{report:#?}");
}

/// `allkeys-lru` with a memory limit fails the audit, and the client flagged it when it
/// connected: a Fail check, a warning counted in `redis_atomic_server_warnings_total`.
#[tokio::test]
async fn evicting_policy_fails_and_is_flagged_at_connect() {
    let m = Recorded::new();
    let _recording = m.on_this_thread();
    let server_warnings = || server_warnings(&m);
    let before = server_warnings();
    let (_s, client, report) = report_of(ServerOptions {
        maxmemory: Some(16 << 20),
        maxmemory_policy: Some("allkeys-lru".into()),
        ..Default::default()
    })
    .await;
    assert_eq!(status(&report, "maxmemory-policy"), Status::Fail);
    let check = client.memory_check().unwrap();
    assert_eq!(check.status, Status::Fail);
    assert!(check.found.contains("allkeys-lru"), "{check:?}");
    assert!(server_warnings() > before);
    // Without a limit, an evicting policy is only a warning (and not counted).
    let now = server_warnings();
    let (_s, client, report) = report_of(ServerOptions {
        extra_config: vec!["maxmemory-policy volatile-ttl".into()],
        ..Default::default()
    })
    .await;
    assert_eq!(status(&report, "maxmemory-policy"), Status::Warn);
    assert_eq!(client.memory_check().unwrap().status, Status::Warn);
    assert_eq!(server_warnings(), now);
}

/// Other code loaded under this build's library name fails the audit.
#[tokio::test]
async fn conflicting_function_library_fails() {
    let (_s, client, _) = report_of(ServerOptions::default()).await;
    let name = redis_atomic::script::registry::LIBRARY_NAME;
    let code =
        format!("#!lua name={name}\nredis.register_function('ra_other', function() return 1 end)");
    client
        .command(redis::cmd("FUNCTION").arg("LOAD").arg(code))
        .await
        .unwrap();
    let report = client
        .server_report(&DoctorOptions::default())
        .await
        .unwrap();
    assert_eq!(status(&report, "function-library"), Status::Fail);
}

/// A user missing one command fails the primitives that need it, and only those; a user that
/// may not run `ACL` or `CONFIG` gets warnings (nothing could be checked), never a failure for it.
#[tokio::test]
async fn acl_rows_name_what_is_missing() {
    let (server, admin, _) = report_of(ServerOptions::default()).await;
    let mut setuser = redis::cmd("ACL");
    setuser
        .arg("SETUSER")
        .arg("app")
        .arg("on")
        .arg(">pw")
        .arg(redis_atomic::script::acl_rules("app"))
        .arg("-zadd");
    admin.command(&setuser).await.unwrap();
    let opts = DoctorOptions::default().acl_user("app");
    let report = admin.server_report(&opts).await.unwrap();
    assert_eq!(status(&report, "acl lock"), Status::Ok);
    for needs_zadd in ["acl queue", "acl cas/multi/dedup"] {
        let row = report.rows.iter().find(|r| r.check == needs_zadd).unwrap();
        assert_eq!(row.status, Status::Fail, "{row:?}");
        assert!(row.found.contains("zadd"), "{row:?}");
    }
    let url = server.url().replace("redis://", "redis://app:pw@");
    let app = Client::connect(&url, ClientConfig::default())
        .await
        .unwrap();
    assert_eq!(app.memory_check().unwrap().status, Status::Warn);
    let report = app.server_report(&DoctorOptions::default()).await.unwrap();
    assert_eq!(status(&report, "acl"), Status::Warn);
    assert_eq!(status(&report, "maxmemory-policy"), Status::Warn);
    let failures: Vec<_> = report.failures().map(|r| r.check.as_str()).collect();
    assert!(failures.iter().all(|c| *c == "persistence"), "{failures:?}");
}

/// On the cluster every node is audited: the rows together name all six nodes, all slots are
/// served, and the replication rows tell primaries (asynchronous replicas) from replicas.
#[tokio::test]
async fn cluster_audits_every_node() {
    let cluster = RedisCluster::shared();
    let client = Client::connect_cluster(&cluster.urls(), ClientConfig::default())
        .await
        .unwrap();
    assert_eq!(client.memory_check().unwrap().status, Status::Ok);
    let report = client
        .server_report(&DoctorOptions::default())
        .await
        .unwrap();
    let slots = report
        .rows
        .iter()
        .find(|r| r.check == "cluster-slots")
        .unwrap();
    assert_eq!(
        (slots.status, slots.nodes.len()),
        (Status::Ok, 6),
        "{slots:?}"
    );
    let replication: Vec<_> = report
        .rows
        .iter()
        .filter(|r| r.check == "replication")
        .collect();
    let nodes = |s: Status| -> usize {
        replication
            .iter()
            .filter(|r| r.status == s)
            .map(|r| r.nodes.len())
            .sum()
    };
    assert_eq!(
        (nodes(Status::Warn), nodes(Status::Ok)),
        (3, 3),
        "{replication:#?}"
    );
    let mut seen: Vec<&String> = report.rows.iter().flat_map(|r| &r.nodes).collect();
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 6);
}
