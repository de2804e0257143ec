//! Idempotency under faults: lost replies on begin and on complete (finished by parts), script
//! flush and restart mid-run.

use super::basics::{claimed, fp, parts, store, tok};
use crate::common::standalone;
use redis_atomic::idempotency::{Begin, Idempotency, Outcome, Response, Stored};
use redis_atomic::script::registry;
use redis_atomic::{ClientConfig, Error, RetryPolicy};
use redis_atomic_testkit::ServerOptions;
use std::time::Duration;

/// Lost replies on begin and on complete (server stalled past the client timeout), then retries
/// with the same token: the request executes exactly once.
#[tokio::test]
async fn lost_replies_then_retry_execute_once() {
    let config = ClientConfig::default()
        .timeout(Duration::from_millis(200))
        .retry(RetryPolicy::none());
    let env = standalone("idem-lost", ServerOptions::default(), config).await;
    let store = store(&env, Duration::from_secs(30));
    env.client.load(registry::ALL).await.unwrap(); // every script cached: no stalled NOSCRIPT
    let server = env.server.as_ref().unwrap();
    server.pause();
    let lost = store
        .begin_with_token("t", b"k", fp("r"), &tok("tok"))
        .await;
    server.resume();
    assert!(
        matches!(lost, Err(Error::OutcomeUnknown { .. })),
        "{lost:?}"
    );
    // Another client sees the lost begin's claim once the server has read it (bounded wait).
    assert!(
        wait_for(&store, |b| matches!(b, Begin::InProgress { .. })).await,
        "lost begin never ran"
    );
    let claim = claimed(
        store
            .begin_with_token("t", b"k", fp("r"), &tok("tok"))
            .await
            .unwrap(),
    );
    // The lost begin's claim, not a new one: no takeover, and the same fence again.
    assert!(!claim.is_takeover(), "the retry took over instead");
    let again = claimed(
        store
            .begin_with_token("t", b"k", fp("r"), &tok("tok"))
            .await
            .unwrap(),
    );
    assert_eq!(
        again.fence(),
        claim.fence(),
        "the retry must get the lost begin's claim back"
    );
    let resp = Response::new(200, "done");
    // Reconnect the pool's discarded connection first, so the stalled complete is sent (a
    // connection attempt during the stall would be NotSent, which is not this test's point).
    for _ in 0..ClientConfig::default().pool_size * 2 {
        env.raw(&redis::cmd("PING")).await;
    }
    let (token, fence) = parts(&claim);
    server.pause();
    let lost = claim.complete(&resp).await;
    server.resume();
    assert!(
        matches!(lost, Err(Error::OutcomeUnknown { .. })),
        "{lost:?}"
    );
    assert!(
        wait_for(&store, |b| matches!(b, Begin::Replay(_))).await,
        "lost complete never ran"
    );
    // The end verb consumed the claim: it is finished by parts, with what was read before.
    assert_eq!(
        store
            .complete("t", b"k", &token, fence, &resp)
            .await
            .unwrap(),
        Outcome::Stored,
        "repeat not idempotent"
    );
    assert!(
        matches!(store.begin("t", b"k", fp("r")).await.unwrap(), Begin::Replay(Stored::Completed(r)) if r == resp)
    );
}

/// Polls `begin` with a fresh token (bounded, 2 s) until `pred` holds.
async fn wait_for(store: &Idempotency, pred: impl Fn(&Begin) -> bool) -> bool {
    for _ in 0..200 {
        let b = store
            .begin_with_token("t", b"k", fp("r"), &tok("observer"))
            .await
            .unwrap();
        assert!(
            !matches!(b, Begin::Claimed(_)),
            "an observer claimed the key: the lost call did not hold it"
        );
        if pred(&b) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

/// `SCRIPT FLUSH` and a restart mid-run: the state machine survives (AOF) and the client recovers.
#[tokio::test]
async fn script_flush_and_restart_mid_run() {
    let config = ClientConfig::default().retry(RetryPolicy::new(10, Duration::from_secs(5)));
    let mut env = standalone(
        "idem-restart",
        ServerOptions {
            appendonly: true,
            ..Default::default()
        },
        config,
    )
    .await;
    let store = store(&env, Duration::from_secs(30));
    let c = claimed(store.begin("t", b"k", fp("r")).await.unwrap());
    env.raw(redis::cmd("SCRIPT").arg("FLUSH")).await;
    assert!(matches!(
        store.begin("t", b"k", fp("r")).await.unwrap(),
        Begin::InProgress { .. }
    ));
    env.server.as_mut().unwrap().restart().unwrap();
    assert!(matches!(
        store.begin("t", b"k", fp("r")).await.unwrap(),
        Begin::InProgress { .. }
    ));
    assert_eq!(
        c.complete(&Response::new(200, "ok")).await.unwrap(),
        Outcome::Stored
    );
    assert!(matches!(
        store.begin("t", b"k", fp("r")).await.unwrap(),
        Begin::Replay(_)
    ));
}
