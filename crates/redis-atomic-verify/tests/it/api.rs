//! The builder: a check of one's own adds a row, its violations fail the run, its errors name
//! it; settings out of range and unknown names are errors before anything runs.

use super::{client, namespace};
use futures::future::BoxFuture;
use redis_atomic_testkit::Verdict;
use redis_atomic_verify::{Check, CheckCtx, CheckResult, Findings, Verify, VerifyError};
use std::time::Duration;

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

/// A check that errors is an error naming it, not a row.
#[tokio::test]
async fn a_check_that_cannot_run_is_an_error_naming_it() {
    let verify = short(Verify::new(client().await), "broken")
        .checks([])
        .add_check(Broken);
    match verify.run().await {
        Err(VerifyError::Check { name, source }) => {
            assert_eq!(name, "broken");
            assert_eq!(source.to_string(), "no such primitive here");
        }
        other => panic!("{other:?}"),
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
