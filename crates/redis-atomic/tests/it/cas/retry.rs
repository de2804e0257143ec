//! How an optimistic update ends when it cannot commit: the attempt count of a `Conflict`, and
//! the one retry rule — a failure before `EXEC` was sent is retried, a lost `EXEC` reply is not.

use crate::cas::basics::{contention, get_i64, interfere, updates, TOPOLOGIES};
use crate::common::metrics::Recorded;
use crate::common::{env, patient, stalled_for, standalone};
use redis_atomic::cas::{Cas, CasOutcome, Decision, Read, CAS_ABORTS_TOTAL};
use redis_atomic::write::Write;
use redis_atomic::{ClientConfig, Error};
use redis_atomic_testkit::ServerOptions;
use std::time::Duration;

/// A key changed during every attempt: the update ends `Conflict` with the number of attempts
/// made — the policy's when it bounds by attempts, as many as the closure ran when the deadline
/// does — each one an aborted `EXEC`, and nothing of the update written.
#[test]
fn conflict_reports_every_attempt() {
    let m = Recorded::new();
    m.block_on(conflicts(&m));
}

async fn conflicts(m: &Recorded) {
    for mode in TOPOLOGIES {
        let env = env(mode, "cas-conflict", patient()).await;
        for (case, policy) in [
            ("attempts", contention(3, Duration::from_secs(30))),
            ("deadline", contention(u32::MAX, Duration::from_secs(1))),
        ] {
            let key = env.keyspace.key("cas", 1, case, &[]).unwrap();
            let interferer = env.client.clone();
            let conflict_retries = || {
                m.counter(
                    "redis_atomic_retries_total",
                    &[("primitive", "cas"), ("reason", "conflict")],
                )
            };
            let (aborts_before, conflicts_before, retries_before) = (
                m.counter(CAS_ABORTS_TOTAL, &[]),
                updates(m, "conflict"),
                conflict_retries(),
            );
            let mut calls = 0u32;
            let out = Cas::new(env.client.clone())
                .with_policy(policy)
                .update(&[Read::get(&key)], |s| {
                    calls += 1;
                    interfere(&interferer, "changed", &key);
                    let next = s.get::<Option<i64>>(0)?.unwrap_or(0) + 1;
                    Ok(Decision::commit(
                        vec![Write::set(&key, next.to_string())],
                        next,
                    ))
                })
                .await
                .unwrap();
            assert_eq!(
                out,
                CasOutcome::Conflict { attempts: calls },
                "{mode:?} {case}"
            );
            if case == "attempts" {
                assert_eq!(calls, 3, "{mode:?}: not the policy's attempts");
            } else {
                assert!(
                    calls > 1,
                    "{mode:?}: conflict not retried before the deadline"
                );
            }
            let aborts = m.counter(CAS_ABORTS_TOTAL, &[]) - aborts_before;
            assert!(
                aborts >= u64::from(calls),
                "{mode:?} {case}: {aborts} aborts"
            );
            assert!(updates(m, "conflict") > conflicts_before, "{mode:?} {case}");
            assert!(
                conflict_retries() - retries_before >= u64::from(calls - 1),
                "{mode:?} {case}: conflicts retried without reason=conflict"
            );
            assert_eq!(get_i64(&env, &key).await, Some(100), "{mode:?} {case}");
        }
    }
}

/// A lost reply to `WATCH` and the reads wrote nothing: retried (the closure then runs once, on
/// a fresh connection), the retry counted with reason `timeout`. A lost `EXEC` reply may have
/// written: not retried, the closure ran once, the error says the outcome is unknown.
#[test]
fn lost_read_retried_lost_exec_not() {
    let m = Recorded::new();
    m.block_on(lost_read_and_exec(&m));
}

async fn lost_read_and_exec(m: &Recorded) {
    let config = ClientConfig::default().timeout(Duration::from_millis(100));
    let env = standalone("cas-lost", ServerOptions::default(), config).await;
    let server = env.server.as_ref().unwrap();
    let cas = Cas::new(env.client.clone()).with_policy(contention(50, Duration::from_secs(20)));
    let key = env.keyspace.key("cas", 1, "lost", &[]).unwrap();
    drop(env.client.dedicated(&key).await.unwrap()); // an idle dedicated connection to stall
    let retried = || {
        m.counter(
            "redis_atomic_retries_total",
            &[
                ("primitive", "cas"),
                ("op", "update"),
                ("reason", "timeout"),
            ],
        )
    };
    let before = retried();
    let mut calls = 0;
    let increment = |s: &redis_atomic::cas::Snapshot| {
        calls += 1;
        let next = s.get::<Option<i64>>(0)?.unwrap_or(0) + 1;
        Ok(Decision::commit(
            vec![Write::set(&key, next.to_string())],
            next,
        ))
    };
    let reads = [Read::get(&key)];
    let update = cas.update(&reads, increment);
    let out = stalled_for(server, Duration::from_millis(300), update).await;
    assert_eq!(out.unwrap(), CasOutcome::Committed(1));
    assert_eq!(calls, 1, "the closure ran on a lost read");
    assert!(retried() > before, "the retry was not counted");

    let mut calls = 0;
    let lost = cas
        .update(&[Read::get(&key)], |s| {
            calls += 1;
            server.pause(); // EXEC goes out into a stopped server
            let next = s.get::<Option<i64>>(0)?.unwrap_or(0) + 1;
            Ok(Decision::commit(
                vec![Write::set(&key, next.to_string())],
                (),
            ))
        })
        .await;
    server.resume();
    assert!(
        matches!(lost, Err(Error::OutcomeUnknown { attempts: 1, .. })),
        "{lost:?}"
    );
    assert_eq!(calls, 1, "a lost EXEC reply was retried");
}
