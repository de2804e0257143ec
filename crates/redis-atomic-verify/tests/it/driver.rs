//! `verify --driver`: rows run through a program in another language. The program here is a
//! stdlib Python driver with its own RESP client (`tests/drivers/resp_driver.py`): correct, it
//! passes its rows clean and under faults; broken on purpose, the relevant row catches it — the
//! harness can fail for a foreign client, not only for ours — and a driver that crashes, hangs or
//! answers garbage is an `error` row, never the end of the run.

use super::{client, namespace};
use redis_atomic_testkit::RedisServer;
use redis_atomic_verify::{CheckReport, Driver, FaultKind, Report, Status, Verify};
use std::time::Duration;

fn driver(broken: &str) -> Driver {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/drivers/resp_driver.py");
    Driver::new(format!("python3 {script} --broken={broken}")).timeout(Duration::from_secs(2))
}

async fn run(driver: Driver, only: &[&str], faults: &[FaultKind]) -> Report {
    Verify::new(client().await)
        .urls([RedisServer::shared().url()])
        .checks(driver.checks())
        .only(only.iter().copied())
        .namespace(namespace("driver"))
        .duration(Duration::from_millis(1500))
        .tasks(4)
        .faults(!faults.is_empty())
        .fault_kinds(faults.iter().copied())
        .run()
        .await
        .unwrap()
}

fn row<'a>(report: &'a Report, name: &str, fault: &str) -> &'a CheckReport {
    report
        .checks
        .iter()
        .find(|c| c.primitive == name && c.fault == fault)
        .unwrap_or_else(|| panic!("no row {name}/{fault} in {report:?}"))
}

/// A correct driver keeps every row it declares, clean and under killed connections and lost
/// replies, with operations judged (not an empty pass).
#[tokio::test(flavor = "multi_thread")]
async fn a_correct_driver_passes_its_rows_under_faults() {
    let faults = [FaultKind::ConnectionKills, FaultKind::LostReplies];
    let rows = ["lock", "mutex", "quota", "semaphore"];
    let report = run(driver(""), &rows, &faults).await;
    for c in &report.checks {
        assert_eq!(c.status, Status::Ok, "{c:?}");
        assert!(c.operations > 0, "{c:?}");
    }
    assert_eq!(report.checks.len(), 12);
    assert!(report.ok);
}

/// A release that does not check the owner: the lock row's zombie deletes the next holder's
/// lease, and a third worker gets in beside it; the semaphore row's zombie frees a holder's
/// permit, and one worker more than the limit gets in.
#[tokio::test(flavor = "multi_thread")]
async fn a_release_without_the_owner_check_is_caught() {
    let report = run(driver("release"), &["lock", "mutex", "semaphore"], &[]).await;
    assert_eq!(report.checks.len(), 3);
    for c in &report.checks {
        assert_eq!(c.status, Status::Violations, "{c:?}");
    }
    assert!(!report.ok);
}

/// A semaphore that admits one holder over its limit: the row's holders keep their permits
/// until every permit is held and more acquisitions were tried, so the extra holder is seen.
#[tokio::test(flavor = "multi_thread")]
async fn a_semaphore_over_its_limit_is_caught() {
    let report = run(driver("limit"), &["semaphore", "lock"], &[]).await;
    let semaphore = row(&report, "semaphore", "none");
    assert_eq!(semaphore.status, Status::Violations, "{semaphore:?}");
    assert!(semaphore.violations > 0, "{semaphore:?}");
    assert_eq!(row(&report, "lock", "none").status, Status::Ok);
    assert!(!report.ok);
}

/// Resending a call that is not retry-safe after a lost reply: clean, nothing is lost and the
/// row holds; under lost replies the counter shows adds applied twice and reported once.
#[tokio::test(flavor = "multi_thread")]
async fn a_resend_after_a_lost_reply_is_caught() {
    let report = run(driver("resend"), &["quota"], &[FaultKind::LostReplies]).await;
    assert_eq!(row(&report, "quota", "none").status, Status::Ok);
    let lost = row(&report, "quota", "lost-reply");
    assert_eq!(lost.status, Status::Violations, "{lost:?}");
    assert!(!report.ok);
}

/// A driver slow to start (longer than the row's duration) still meets the row's faults: they
/// are injected from the row's first call, not from when its processes were started.
#[tokio::test(flavor = "multi_thread")]
async fn a_slow_start_does_not_spend_the_faults() {
    let report = run(driver("slow"), &["quota"], &[FaultKind::LostReplies]).await;
    let lost = row(&report, "quota", "lost-reply");
    assert_eq!(lost.status, Status::Ok, "{lost:?}");
    assert!(
        lost.unknown > 0,
        "no reply was lost during the row: {lost:?}"
    );
}

/// A row the driver does not declare is `unsupported`, not a pass; the run is ok on the rows
/// it judged.
#[tokio::test(flavor = "multi_thread")]
async fn an_undeclared_row_is_unsupported() {
    let report = run(driver(""), &["lock", "ratelimit-sl"], &[]).await;
    assert_eq!(row(&report, "lock", "none").status, Status::Ok);
    let rate = row(&report, "ratelimit-sl", "none");
    assert_eq!(rate.status, Status::Unsupported);
    assert!(!rate.ok);
    assert!(report.ok);
    let all_unsupported = run(driver(""), &["ratelimit-sl"], &[]).await;
    assert!(!all_unsupported.ok, "a run that judged nothing passed");
}

/// A driver that crashes, answers garbage, hangs or cannot start is an `error` row naming the
/// fault; the run reports every row.
#[tokio::test(flavor = "multi_thread")]
async fn a_misbehaving_driver_is_an_error_row() {
    let cases = [
        (driver("crash"), "exited"),
        (driver("garbage"), "garbage"),
        (driver("hang"), "did not answer"),
        (Driver::new("/nonexistent/driver"), "exited"),
    ];
    for (driver, says) in cases {
        let report = run(driver, &["lock", "quota"], &[]).await;
        assert_eq!(report.checks.len(), 2);
        for c in &report.checks {
            assert_eq!(c.status, Status::Error, "{c:?}");
            let error = c.error.as_deref().unwrap_or_default();
            assert!(error.contains(says), "{says}: {error}");
        }
        assert!(!report.ok);
    }
}

/// The queue rows: a correct driver keeps them clean and under killed connections and lost
/// replies, every acknowledged job acked (after the drain) and judged.
#[tokio::test(flavor = "multi_thread")]
async fn a_correct_queue_driver_passes_under_faults() {
    let faults = [FaultKind::ConnectionKills, FaultKind::LostReplies];
    let report = run(driver(""), &["queue", "queue-alo"], &faults).await;
    for c in &report.checks {
        assert_eq!(c.status, Status::Ok, "{c:?}");
        assert!(c.operations > 0, "{c:?}");
    }
    assert_eq!(report.checks.len(), 6);
    assert!(report.ok);
}

/// An ack that does not check the claim: the queue rows' zombie acks after its lease ran out and
/// the job was claimed again, so the job is acked twice — caught by both rows, with the job's
/// history.
#[tokio::test(flavor = "multi_thread")]
async fn an_ack_without_the_claim_check_is_caught() {
    let report = run(driver("ack"), &["queue", "queue-alo"], &[]).await;
    assert_eq!(report.checks.len(), 2);
    for c in &report.checks {
        assert_eq!(c.status, Status::Violations, "{c:?}");
        let example = c.examples.first().map(String::as_str).unwrap_or_default();
        assert!(example.contains("accepted 2 times"), "{example}");
        assert!(example.contains("a minimal history"), "{example}");
    }
    assert!(!report.ok);
}
