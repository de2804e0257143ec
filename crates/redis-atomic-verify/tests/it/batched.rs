//! Verify on a client that batches ([`redis_atomic::Batching`], on by default): the rows of the
//! primitives whose decisions may ride in batches (the rate limits, quota, lock, semaphore,
//! idempotency) really send batches, and their invariants hold; a sabotaged row whose decisions
//! still ride in batches is still caught.
//!
//! Each row runs on a client of its own, so its batch counters ([`Client::batch_stats`]) are its
//! own; the rows run side by side, about a second in all, 64 tasks each. The lock's workload is
//! one contended lock whose waiters retry about every 20 ms: its decisions wait together mainly
//! when the tasks start and when waves of retries meet (16 tasks alone sent about one batch a
//! second), so it gets the many tasks.
//!
//! [`Client::batch_stats`]: redis_atomic::Client::batch_stats

use super::{client, namespace};
use redis_atomic::BatchStats;
use redis_atomic_verify::{Report, Verify};
use std::time::Duration;

/// The rows whose primitives' decisions are batchable scripts.
const BATCHABLE: [&str; 5] = [
    "lock",
    "idempotency",
    "ratelimit-gcra",
    "quota",
    "semaphore",
];

/// Runs row `name` (sabotaged or not) on a client of its own: the report and what its client's
/// batching did.
async fn row(name: &str, sabotage: bool) -> (Report, BatchStats) {
    let client = client().await;
    assert!(
        client.config().batching.enabled,
        "batching is on by default"
    );
    let verify = Verify::new(client.clone())
        .only([name])
        .duration(Duration::from_secs(1))
        .tasks(64)
        .sabotage(sabotage)
        .namespace(namespace(&format!("batched-{name}")));
    let report = verify.run().await.unwrap();
    (report, client.batch_stats())
}

/// Every batchable row holds its invariant with its decisions leaving in batches of several.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batchable_rows_run_batched_and_hold() {
    let rows = futures::future::join_all(BATCHABLE.map(|name| row(name, false))).await;
    for (name, (report, stats)) in BATCHABLE.iter().zip(rows) {
        let check = &report.checks[0];
        assert!(report.ok && check.operations > 0, "{name}: {check:?}");
        assert!(
            stats.batches > 0 && stats.batched >= 3 * stats.batches,
            "{name}: no batch of several decisions: {stats:?}"
        );
        assert_eq!(
            stats.alone + stats.batched + stats.separate,
            stats.decisions,
            "{name}: every decision left once: {stats:?}"
        );
    }
}

/// Sabotaged, the idempotency row forgets each claim after its effect ran (its `begin`s still
/// the library's, riding in batches): the duplicate effects are caught.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sabotaged_row_is_caught_while_batched() {
    let (report, stats) = row("idempotency", true).await;
    let check = &report.checks[0];
    assert!(!report.ok && check.violations > 0, "{check:?}");
    assert!(stats.batches > 0, "{stats:?}");
}
