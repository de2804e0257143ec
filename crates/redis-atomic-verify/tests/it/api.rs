//! The builder: a check of one's own adds a row, its violations fail the run, a check that
//! cannot run is a row that says why (and the run goes on); settings out of range and unknown
//! names are errors before anything runs.

use super::{client, namespace};
use futures::future::BoxFuture;
use redis_atomic_testkit::Verdict;
use redis_atomic_verify::{Check, CheckCtx, CheckResult, Findings, Status, Verify, VerifyError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Counts `INCR`s on a key of its own and compares with what it reads back at the end; with
/// `lose` it claims one more than it did (a violation it must report).
struct Counter {
    lose: bool,
}

impl Check for Counter {
    fn name(&self) -> &str {
        "counter"
    }

    fn invariant(&self) -> &str {
        "final counter = acknowledged INCRs"
    }

    fn run(&self, ctx: CheckCtx) -> BoxFuture<'static, CheckResult<Findings>> {
        let lose = self.lose;
        Box::pin(async move {
            let key = ctx.keyspace.key("test", 1, "counter", &["n"])?;
            let done = ctx
                .run_workers(|_, ctx| {
                    let key = key.clone();
                    async move {
                        let mut n = 0u64;
                        while ctx.running() {
                            ctx.client.command(redis::cmd("INCR").arg(&key)).await?;
                            n += 1;
                            ctx.tick();
                        }
                        Ok(n)
                    }
                })
                .await?;
            let acked: u64 = done.iter().sum::<u64>() + u64::from(lose);
            let stored: u64 = ctx.final_get(&key).await?.unwrap_or(0);
            let wrong = (stored != acked).then(|| format!("stored {stored}, acknowledged {acked}"));
            Ok(Findings::new(acked).with(Verdict::observed(acked, wrong.into_iter().collect())))
        })
    }
}

/// A check that cannot run.
struct Broken;

impl Check for Broken {
    fn name(&self) -> &str {
        "broken"
    }

    fn invariant(&self) -> &str {
        "none"
    }

    fn run(&self, _: CheckCtx) -> BoxFuture<'static, CheckResult<Findings>> {
        Box::pin(async { Err("no such primitive here".into()) })
    }
}

fn short(verify: Verify, test: &str) -> Verify {
    verify
        .duration(Duration::from_millis(300))
        .tasks(4)
        .namespace(namespace(test))
}

/// A check of one's own is a row after the built-in ones selected: its name, its invariant,
/// its operations; clean, the run is ok. When it finds a violation, the run is not.
#[tokio::test]
async fn a_check_of_ones_own_is_a_row() {
    let verify = short(Verify::new(client().await), "own-check")
        .add_check(Counter { lose: false })
        .only(["lock", "counter"]);
    let report = verify.run().await.unwrap();
    let names: Vec<&str> = report.checks.iter().map(|c| c.primitive.as_str()).collect();
    assert_eq!(names, ["lock", "counter"]);
    let row = &report.checks[1];
    assert_eq!(row.invariant, "final counter = acknowledged INCRs");
    assert!(
        row.operations > 0 && row.ok && row.violations == 0,
        "{row:?}"
    );
    assert!(report.ok);

    let verify = short(Verify::new(client().await), "own-check-bad")
        .checks([])
        .add_check(Counter { lose: true });
    let report = verify.run().await.unwrap();
    assert_eq!(report.checks.len(), 1);
    let row = &report.checks[0];
    assert_eq!((row.violations, row.ok, report.ok), (1, false, false));
    assert!(row.examples[0].starts_with("stored "), "{row:?}");
}

/// The built-in checks catch a bypassed primitive (sabotage): the lock's row fails.
#[tokio::test]
async fn sabotage_fails_the_builtin_rows() {
    let verify = short(Verify::new(client().await), "sabotage")
        .only(["lock"])
        .sabotage(true);
    let report = verify.run().await.unwrap();
    assert!(!report.ok);
    assert!(report.checks[0].violations > 0, "{:?}", report.checks[0]);
}

/// A check that errors, or panics, is a row with status `error` and the reason; the run goes on
/// with the next check and is not ok.
#[tokio::test]
async fn a_check_that_cannot_run_is_an_error_row() {
    let verify = short(Verify::new(client().await), "broken")
        .checks([])
        .add_check(Broken)
        .add_check(Panics)
        .add_check(Counter { lose: false });
    let report = verify.run().await.unwrap();
    let statuses: Vec<Status> = report.checks.iter().map(|c| c.status).collect();
    assert_eq!(statuses, [Status::Error, Status::Error, Status::Ok]);
    let broken = &report.checks[0];
    assert_eq!(broken.primitive, "broken");
    assert_eq!(broken.error.as_deref(), Some("no such primitive here"));
    assert!(!broken.ok);
    let panicked = report.checks[1].error.as_deref().unwrap_or_default();
    assert!(panicked.contains("panicked"), "{panicked}");
    assert!(report.checks[2].operations > 0);
    assert!(!report.ok);
}

/// A check that panics.
struct Panics;

impl Check for Panics {
    fn name(&self) -> &str {
        "panics"
    }

    fn invariant(&self) -> &str {
        "none"
    }

    fn run(&self, _: CheckCtx) -> BoxFuture<'static, CheckResult<Findings>> {
        Box::pin(async { panic!("a bug in the check") })
    }
}

/// Settings out of range and unknown checks are refused before any check runs, one line each.
#[tokio::test]
async fn bad_settings_are_refused() {
    let cases: [(Verify, &str); 5] = [
        (
            Verify::new(client().await).only(["nope"]),
            "no check `nope`; known: lock,",
        ),
        (
            Verify::new(client().await).duration(Duration::ZERO),
            "duration",
        ),
        (
            Verify::new(client().await).duration(Duration::from_secs(3601)),
            "duration",
        ),
        (Verify::new(client().await).tasks(0), "tasks"),
        (
            Verify::new(client().await).namespace("a*"),
            "namespace `a*`",
        ),
    ];
    for (verify, expected) in cases {
        match verify.run().await {
            Err(e @ VerifyError::Settings(_)) => {
                let text = e.to_string();
                assert!(text.contains(expected) && !text.contains('\n'), "{text}");
            }
            other => panic!("{expected}: {other:?}"),
        }
    }
}

/// Refuses every call for its first 150 ms (`EVALSHA` of a script the server does not have:
/// `NOSCRIPT`, nothing ran), then serves them (`PING`): a primitive made unavailable for a while.
/// `refusing` is the least the row's outage can be: from when the first refused call returned
/// (it was invoked before) to when the last refused call was chosen (invoked after, and ended
/// later still). The 150 ms themselves are no bound: the row's clock starts at the first call's
/// invocation and stops at the last refusal's end, both a scheduling gap inside the 150 ms.
struct Outage {
    refusing: Arc<Mutex<Duration>>,
}

impl Check for Outage {
    fn name(&self) -> &str {
        "outage"
    }

    fn invariant(&self) -> &str {
        "counts refusals"
    }

    fn run(&self, ctx: CheckCtx) -> BoxFuture<'static, CheckResult<Findings>> {
        let bound = self.refusing.clone();
        Box::pin(async move {
            let missing = redis::cmd("EVALSHA").arg("0".repeat(40)).arg(0).clone();
            let started = Instant::now();
            let (mut refused, mut served) = (0u64, 0u64);
            let (mut first_returned, mut last_chosen) = (None, started);
            while ctx.running() || served == 0 {
                let now = Instant::now();
                let refusing = now.duration_since(started) < Duration::from_millis(150);
                let cmd = if refusing {
                    last_chosen = now;
                    &missing
                } else {
                    &redis::cmd("PING")
                };
                let result = ctx.command(cmd).await;
                match result {
                    Ok(_) => served += 1,
                    Err(e) => {
                        first_returned.get_or_insert_with(Instant::now);
                        assert!(e.nothing_ran(), "{e:?}");
                        ctx.absorb(e)?;
                        refused += 1;
                    }
                }
                ctx.tick();
            }
            assert!(refused > 0);
            let first = first_returned.expect("a refusal");
            *bound.lock().unwrap() = last_chosen.saturating_duration_since(first);
            Ok(Findings::new(refused + served))
        })
    }
}

/// A row's availability: every call counted, the refused ones (nothing ran) apart, and the
/// longest stretch in which every call was refused — at least the stretch the check saw refused
/// — and in which none was served (at least as long).
#[tokio::test]
async fn availability_counts_refusals_and_the_longest_outage() {
    let refusing = Arc::new(Mutex::new(Duration::ZERO));
    let outage = Outage {
        refusing: refusing.clone(),
    };
    let report = short(Verify::new(client().await), "outage")
        .checks([])
        .add_check(outage)
        .tasks(1)
        .run()
        .await
        .unwrap();
    let row = &report.checks[0];
    let a = &row.availability;
    assert_eq!(row.status, Status::Ok, "{row:?}");
    assert_eq!(a.calls, row.operations, "{a:?}");
    assert!(a.refused > 0 && a.refused < a.calls, "{a:?}");
    assert!((a.refused_share - a.refused as f64 / a.calls as f64).abs() < 1e-9);
    let refusing = *refusing.lock().unwrap();
    assert!(
        u128::from(a.longest_outage_ms) >= refusing.as_millis(),
        "{a:?} {refusing:?}"
    );
    assert!(a.longest_unserved_ms >= a.longest_outage_ms, "{a:?}");
    assert_eq!(row.unknown, 0);
}
