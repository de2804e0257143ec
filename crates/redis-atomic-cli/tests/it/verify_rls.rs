//! `verify`'s `rls` row ([`RlsCheck`]) as `redis-atomic verify` runs it: clean it holds with work
//! done; with the face deciding each descriptor alone (sabotage) it finds refused requests that
//! charged the global limit, faults or not; under every standalone fault it holds. (The
//! binary runs it in the whole matrix, the cluster's faults included: [`crate::all_faults`].)

use redis_atomic::{Client, ClientConfig};
use redis_atomic_cli::cmd::verify::rls::RlsCheck;
use redis_atomic_testkit::{unique_prefix, RedisServer};
use redis_atomic_verify::{FaultKind, Report, Verify, CLEAN_TIMEOUT};
use std::time::Duration;

async fn run(test: &str, sabotage: bool, faults: bool) -> Report {
    let config = ClientConfig::default().timeout(CLEAN_TIMEOUT);
    let client = Client::connect(&RedisServer::shared().url(), config)
        .await
        .unwrap();
    Verify::new(client)
        .checks([])
        .add_check(RlsCheck)
        .duration(Duration::from_millis(if faults { 1000 } else { 1500 }))
        .tasks(8)
        .namespace(unique_prefix(test))
        .sabotage(sabotage)
        .faults(faults)
        .progress(false)
        .run()
        .await
        .unwrap()
}

/// Clean: the row holds, many requests answered (most refused once each user's 20 are spent).
#[tokio::test]
async fn the_rls_row_holds_clean() {
    let report = run("rls-verify", false, false).await;
    let row = &report.checks[0];
    assert_eq!(row.primitive, "rls");
    assert!(row.operations > 100, "{row:?}");
    assert!(report.ok && row.violations == 0, "{row:?}");
}

/// Sabotaged (each descriptor alone, as envoyproxy/ratelimit decides): refused requests charged
/// the global limit, and the row says so, clean and under every standalone fault (a crash's
/// second of unknown outcomes included).
#[tokio::test]
async fn the_rls_row_catches_descriptors_decided_alone() {
    let report = run("rls-verify-sabotage", true, true).await;
    assert!(!report.ok);
    assert_eq!(report.checks.len(), 1 + FaultKind::STANDALONE.len());
    for row in &report.checks {
        assert!(row.violations > 0, "{row:?}");
        assert!(
            row.examples[0].contains("refused requests were charged"),
            "{row:?}"
        );
    }
}

/// Under each standalone fault the row holds and judges work.
#[tokio::test]
async fn the_rls_row_holds_under_faults() {
    let report = run("rls-verify-faults", false, true).await;
    assert_eq!(report.checks.len(), 1 + FaultKind::STANDALONE.len());
    for row in &report.checks {
        assert!(row.operations > 0 && row.violations == 0, "{row:?}");
    }
    assert!(report.ok);
}
