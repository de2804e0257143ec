//! The lock watchdog: renewals keep a busy holder's lock, transient errors do not stop them, and
//! the holder hears of a loss before a second holder can proceed.
#![allow(clippy::unwrap_used)]

mod common;

use common::{env, standalone, Env, Mode, MODES};
use redis_atomic::lease::{OwnerToken, Release};
use redis_atomic::lock::{Acquire, LockLost, LockState, Locks, WatchdogConfig};
use redis_atomic::{ClientConfig, Error, RetryPolicy};
use redis_atomic_testkit::ServerOptions;
use std::time::{Duration, Instant};

fn locks(env: &Env) -> Locks {
    Locks::new(env.client.clone(), env.keyspace.clone())
}

/// Acquires a free lock; a timed-out attempt (these tests use short client timeouts, and a loaded
/// machine may exceed one) is resent with the same token, which finds its own lease (bounded).
async fn acquire(locks: &Locks, resource: &str, ttl: Duration) -> redis_atomic::lock::LockGuard {
    let token = OwnerToken::random();
    for _ in 0..50 {
        match locks.acquire_with_token(resource, &token, ttl).await {
            Ok(Acquire::Acquired(g)) => return g,
            Err(Error::OutcomeUnknown { .. }) | Err(Error::NotSent(_)) => {}
            other => panic!("free lock not acquired: {other:?}"),
        }
    }
    panic!("free lock not acquired in 50 attempts")
}

/// The same connections with a patient timeout: for the checks after a fault.
fn patient_locks(env: &Env) -> Locks {
    Locks::new(
        env.client.with_config(common::patient()),
        env.keyspace.clone(),
    )
}

/// One environment per mode, set up one after another (server and cluster start-up block), so
/// the tests can then run the modes concurrently.
async fn all_modes(test: &str) -> Vec<Env> {
    let mut envs = Vec::new();
    for mode in MODES {
        envs.push(env(mode, test, ClientConfig::default()).await);
    }
    envs
}

/// A holder working for 8× its TTL keeps the lock in every mode: every contender attempt is
/// refused, the loss signal never fires, and the release finds its own fence.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn holder_keeps_lock_for_eight_ttls() {
    let envs = all_modes("wd-keep").await;
    let runs = envs.iter().map(|env| async move {
        let mode = env.mode;
        let locks = locks(env);
        // Renewed every ttl/3: 800 ms leaves a renewal 530 ms of scheduling slack on a loaded
        // 2-core machine (300 ms, 200 ms of slack, once lost a lease under load 8).
        let ttl = Duration::from_millis(800);
        let held = acquire(&locks, "r", ttl).await.watchdog().unwrap();
        let lost = held.lost();
        let contender = async {
            let mut refused = 0;
            let until = Instant::now() + ttl * 8;
            while Instant::now() < until {
                match locks.acquire("r", ttl).await.unwrap() {
                    Acquire::Held { .. } => refused += 1,
                    other => panic!("{mode:?}: second holder while the first worked: {other:?}"),
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            refused
        };
        let refused = tokio::select! {
            why = lost => panic!("{mode:?}: lock lost while renewed: {why:?}"),
            refused = contender => refused,
        };
        assert!(refused >= 10, "{mode:?}: contender barely ran ({refused})");
        assert!(held.is_held(), "{mode:?}");
        let fence = held.fence();
        assert!(
            matches!(locks.inspect("r").await.unwrap(), LockState::Held { fence: f, .. } if f == fence)
        );
        assert_eq!(held.release().await.unwrap(), Release::Released { fence });
    });
    futures::future::join_all(runs).await;
}

/// Redisson #775 (renewal stopped): renewals that fail (server stalled past the client timeout,
/// no client retries) are retried within the lease; the lock is still held, with the same
/// fence, long after the errors.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redisson_775_renewal_survives_transient_errors() {
    let config = ClientConfig::default()
        .timeout(Duration::from_millis(60))
        .retry(RetryPolicy::none());
    let env = standalone("wd-775", ServerOptions::default(), config).await;
    env.client.load_all().await.unwrap();
    let locks = locks(&env);
    let ttl = Duration::from_millis(900);
    let held = acquire(&locks, "r", ttl).await.watchdog().unwrap();
    let server = env.server.as_ref().unwrap();
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(250)).await;
        server.pause(); // requests in flight time out: renewals fail
        tokio::time::sleep(Duration::from_millis(200)).await;
        server.resume();
    }
    tokio::time::sleep(ttl * 2).await; // renewals after the errors keep it
    assert!(
        held.failed_renewals() > 0,
        "no renewal failed: the test did not inject an error"
    );
    assert!(held.is_held(), "watchdog gave up after transient errors");
    let fence = held.fence();
    let patient = patient_locks(&env);
    assert!(
        matches!(patient.inspect("r").await.unwrap(), LockState::Held { fence: f, .. } if f == fence)
    );
    assert_eq!(
        patient.release("r", held.token()).await.unwrap(),
        Release::Released { fence }
    );
}

/// Redisson #5698 (two holders): the server stalls for longer than the lease. The holder is told
/// it lost the lock (`Unconfirmed`) before a second client acquires it, and the second holder's
/// fence is larger.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redisson_5698_loss_signalled_before_second_holder() {
    for mode in [Mode::StandaloneEval, Mode::StandaloneFunctions] {
        let config = ClientConfig::default()
            .timeout(Duration::from_millis(100))
            .retry(RetryPolicy::none());
        let env = env(mode, "wd-5698", config).await;
        env.client.load_all().await.unwrap();
        let locks = locks(&env);
        let held = acquire(&locks, "r", Duration::from_millis(300))
            .await
            .watchdog()
            .unwrap();
        let lost = tokio::spawn({
            let lost = held.lost();
            async move { (lost.await, Instant::now()) }
        });
        let server = env.server.as_ref().unwrap();
        server.pause();
        tokio::time::sleep(Duration::from_millis(800)).await;
        server.resume();
        let second = async {
            let until = Instant::now() + Duration::from_secs(10);
            loop {
                match locks.acquire("r", Duration::from_secs(5)).await {
                    Ok(Acquire::Acquired(g)) => return (g, Instant::now()),
                    Ok(_) | Err(Error::OutcomeUnknown { .. }) | Err(Error::NotSent(_)) => {}
                    Err(e) => panic!("{mode:?}: {e}"),
                }
                assert!(Instant::now() < until, "{mode:?}: lock never freed");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        };
        let (b, b_at) = second.await;
        let (why, lost_at) = lost.await.unwrap();
        assert_eq!(why, LockLost::Unconfirmed, "{mode:?}");
        assert!(
            lost_at < b_at,
            "{mode:?}: second holder proceeded before the first was told"
        );
        assert!(!held.is_held());
        assert!(b.fence() > held.fence());
        assert_eq!(
            patient_locks(&env)
                .release("r", held.token())
                .await
                .unwrap(),
            Release::Lost,
            "{mode:?}: stale holder released the new lease"
        );
    }
}

/// A lock taken over behind the holder's back (key deleted, as after a failover to a replica
/// that never saw it) is reported as `NotHeld` at the next renewal, in every mode.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn takeover_is_reported_not_held() {
    let envs = all_modes("wd-takeover").await;
    let runs = envs.iter().map(|env| async move {
        let mode = env.mode;
        let locks = locks(env);
        let held = acquire(&locks, "r", Duration::from_millis(300))
            .await
            .watchdog()
            .unwrap();
        let key = locks.keys("r").unwrap().lock;
        env.raw(redis::cmd("DEL").arg(&key)).await;
        let b = acquire(&locks, "r", Duration::from_secs(10)).await;
        let why = tokio::time::timeout(Duration::from_secs(10), held.lost())
            .await
            .unwrap_or_else(|_| panic!("{mode:?}: loss never reported"));
        assert_eq!(why, LockLost::NotHeld, "{mode:?}");
        assert!(!held.is_held());
        assert!(
            matches!(locks.inspect("r").await.unwrap(), LockState::Held { fence, .. } if fence == b.fence()),
            "{mode:?}: the stale watchdog disturbed the new holder"
        );
    });
    futures::future::join_all(runs).await;
}

/// Dropping a watched lock stops its renewals (Redisson #2714, renewal outliving its holder):
/// the lease runs out and another client acquires.
#[tokio::test]
async fn drop_stops_renewal() {
    let env = env(Mode::StandaloneEval, "wd-drop", ClientConfig::default()).await;
    let locks = locks(&env);
    let held = acquire(&locks, "r", Duration::from_millis(600))
        .await
        .watchdog()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(700)).await; // renewed at least once
    assert!(held.is_held());
    drop(held);
    let out = locks
        .acquire_timeout("r", Duration::from_secs(5), Duration::from_secs(5))
        .await
        .unwrap();
    assert!(
        matches!(out, Acquire::Acquired(_)),
        "lease renewed after drop"
    );
}

/// Bad watchdog settings are typed errors.
#[tokio::test]
async fn bad_config_is_typed() {
    let env = env(Mode::StandaloneEval, "wd-bad", ClientConfig::default()).await;
    let locks = locks(&env);
    for config in [
        WatchdogConfig::default().renew_fraction(0.0),
        WatchdogConfig::default().renew_fraction(1.0),
        WatchdogConfig::default().margin_fraction(0.5),
        WatchdogConfig::default().margin_fraction(-0.1),
        WatchdogConfig::default().renew_fraction(f64::NAN),
    ] {
        let g = acquire(&locks, "r", Duration::from_secs(5)).await;
        let token = g.token().clone();
        assert!(matches!(
            g.watchdog_with(config),
            Err(Error::BadArgument(_))
        ));
        locks.release("r", &token).await.unwrap();
    }
}
