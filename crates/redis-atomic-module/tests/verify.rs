//! `verify` with the module: the embedded server started through the one bootstrap loads it, and
//! the rows it covers run its natives — counted by the servers, not assumed. Clean rows on the
//! embedded server (its `INFO commandstats`: natives called, no script at all), then each row under
//! every standalone fault on the fault servers, which load the module too (each row's
//! `server_calls`: natives called), and the invariants hold throughout.
//! A cluster whose nodes all load it goes through failovers on the natives.
//!
//! One test binary, one module for the process ([`embed_module`]).

mod common;

use common::module_path;
use redis_atomic::{Client, ClientConfig};
use redis_atomic_testkit::command_calls;
use redis_atomic_verify::{
    connect_or_embed, embed_module, FaultKind, Report, Verify, CLEAN_TIMEOUT,
};
use std::time::Duration;

/// The rows whose every call is a native when the module is loaded.
const NATIVE_ROWS: [&str; 9] = [
    "lock",
    "ratelimit-fw",
    "ratelimit-aw",
    "ratelimit-sl",
    "ratelimit-sw",
    "ratelimit-tb",
    "ratelimit-gcra",
    "quota",
    "semaphore",
];

/// The natives those rows call, each at least once (and a lock release: `RATOMIC.LOCK_RELEASE`,
/// or the server's own compare-and-delete where it has one, which the library prefers).
const NATIVES: [&str; 10] = [
    "ratomic.lock_acquire",
    "ratomic.rl_fixed_window",
    "ratomic.rl_anchored_window",
    "ratomic.rl_sliding_log",
    "ratomic.rl_sliding_window",
    "ratomic.rl_token_bucket",
    "ratomic.rl_gcra",
    "ratomic.quota_add_id",
    "ratomic.sem_acquire",
    "ratomic.sem_release",
];

fn failures(report: &Report) -> Vec<String> {
    report
        .checks
        .iter()
        .filter(|c| !c.ok)
        .map(|c| {
            format!(
                "{} ({}): {:?} {:?}",
                c.primitive, c.fault, c.error, c.examples
            )
        })
        .collect()
}

async fn embedded(cluster: bool) -> (Client, redis_atomic_verify::Embedded) {
    embed_module(module_path());
    let config = ClientConfig::default().timeout(CLEAN_TIMEOUT);
    let (client, embedded) = connect_or_embed(None, cluster, config)
        .await
        .expect("the embedded server with the module");
    let described = embedded.describe().expect("embedded");
    assert!(described.contains(" with module ratomic "), "{described}");
    (client, embedded)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clean_rows_run_only_natives() {
    let (client, embedded) = embedded(false).await;
    let report = Verify::new(client)
        .duration(Duration::from_millis(400))
        .tasks(8)
        .only(NATIVE_ROWS)
        .run()
        .await
        .expect("a report");
    assert!(report.ok, "{:?}", failures(&report));
    assert!(report.server.module.is_some(), "{:?}", report.server);
    let url = embedded.urls().remove(0);
    let calls = command_calls(&redis::Client::open(url).expect("url")).expect("commandstats");
    for native in NATIVES {
        assert!(
            calls.get(native).is_some_and(|&n| n > 0),
            "{native}: {calls:?}"
        );
    }
    let releases = ["ratomic.lock_release", "delifeq", "delex"].map(|c| calls.get(c));
    assert!(releases.iter().flatten().any(|&&n| n > 0), "{calls:?}");
    for script in ["evalsha", "eval", "fcall", "evalsha_ro", "fcall_ro"] {
        assert_eq!(calls.get(script), None, "{script}: {calls:?}");
    }
}

/// Every row under `kinds` (every standalone fault when None) on the fault servers: each row's
/// invariant held, and its servers executed natives.
async fn under_faults(
    client: Client,
    rows: &[&str],
    kinds: Option<Vec<FaultKind>>,
    expected: usize,
) {
    let mut run = Verify::new(client)
        .duration(Duration::from_millis(600))
        .tasks(8)
        .only(rows.iter().copied())
        .faults(true);
    if let Some(kinds) = kinds {
        run = run.fault_kinds(kinds);
    }
    let report = run.run().await.expect("a report");
    assert!(report.ok, "{:?}", failures(&report));
    let faulted: Vec<_> = report.checks.iter().filter(|c| c.fault != "none").collect();
    assert_eq!(faulted.len(), expected, "every row under every fault");
    for row in faulted {
        let calls = row.server_calls.expect("a fault row counts its calls");
        assert!(
            calls.natives > 0,
            "{} ({}): {calls:?}",
            row.primitive,
            row.fault
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_run_natives_under_every_fault() {
    let (client, _embedded) = embedded(false).await;
    let rows = ["lock", "ratelimit-fw", "quota"];
    under_faults(
        client,
        &rows,
        None,
        rows.len() * FaultKind::STANDALONE.len(),
    )
    .await;
}

/// A cluster whose every node loads the module: a failover promotes a replica that has it, and
/// the rows go on with the natives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_rows_run_natives_through_failovers() {
    let (client, _embedded) = embedded(true).await;
    let rows = ["lock", "ratelimit-fw"];
    let kinds = vec![FaultKind::ManualFailover, FaultKind::ConnectionKills];
    under_faults(client, &rows, Some(kinds), rows.len() * 2).await;
}
