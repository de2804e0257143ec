//! The watchdog ([`redis_atomic::lease::Watched`]) over a lock: renewals keep a busy holder's
//! lock, transient errors do not stop them, and the holder hears of a loss before a second holder
//! can proceed; and over every other lease kind (permits, idempotency claims, jobs): renewed
//! through each kind's own extend, handed back to end with its own verb, and given back after an
//! unconfirmed loss only where that cannot harm.

use crate::common::{all_modes, env, own_env, patient, queue, sem, standalone, Env, Mode};
use redis_atomic::idempotency::Response;
use redis_atomic::idempotency::{Begin, Fingerprint, Idempotency, IdempotencyConfig, Outcome};
use redis_atomic::lease::{Lease, OwnerToken, Release, Watched};
use redis_atomic::lock::{Acquire, LockLost, LockState, Locks, WatchdogConfig};
use redis_atomic::queue::{Ack, Claim, QueueConfig, RunAt};
use redis_atomic::script::registry;
use redis_atomic::semaphore::Acquire as Take;
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
        env.client.with_config(crate::common::patient()),
        env.keyspace.clone(),
    )
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
        let held = acquire(&locks, "r", ttl).await.watch().unwrap();
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
            matches!(locks.inspect("r").await.unwrap(), LockState::Locked { fence: f, .. } if f == fence)
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
    env.client.load(registry::ALL).await.unwrap();
    let locks = locks(&env);
    let ttl = Duration::from_millis(900);
    let held = acquire(&locks, "r", ttl).await.watch().unwrap();
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
        matches!(patient.inspect("r").await.unwrap(), LockState::Locked { fence: f, .. } if f == fence)
    );
    assert_eq!(
        patient.release("r", held.token(), fence).await.unwrap(),
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
        let env = own_env(mode, "wd-5698", config).await;
        env.client.load(registry::ALL).await.unwrap();
        let locks = locks(&env);
        let held = acquire(&locks, "r", Duration::from_millis(300))
            .await
            .watch()
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
                .release("r", held.token(), held.fence())
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
            .watch()
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
            matches!(locks.inspect("r").await.unwrap(), LockState::Locked { fence, .. } if fence == b.fence()),
            "{mode:?}: the stale watchdog disturbed the new holder"
        );
    });
    futures::future::join_all(runs).await;
}

/// Dropping a watched lock stops its renewals (Redisson #2714, renewal outliving its holder):
/// the lease runs out and another client acquires.
#[tokio::test]
async fn drop_stops_renewal() {
    let env = env(Mode::StandaloneEval, "wd-drop", patient()).await;
    let locks = locks(&env);
    let held = acquire(&locks, "r", Duration::from_millis(600))
        .await
        .watch()
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
    let env = env(Mode::StandaloneEval, "wd-bad", patient()).await;
    let locks = locks(&env);
    for config in [
        WatchdogConfig::default().renew_fraction(0.0),
        WatchdogConfig::default().renew_fraction(1.0),
        WatchdogConfig::default().margin_fraction(0.5),
        WatchdogConfig::default().margin_fraction(-0.1),
        WatchdogConfig::default().renew_fraction(f64::NAN),
    ] {
        let g = acquire(&locks, "r", Duration::from_secs(5)).await;
        let (token, fence) = (g.token().clone(), g.fence());
        assert!(matches!(g.watch_with(config), Err(Error::BadArgument(_))));
        locks.release("r", &token, fence).await.unwrap();
    }
}

/// The leases' ttl: renewed every 667 ms, so a renewal survives more than a second of scheduling
/// delay on a loaded machine (the test proves the watchdog renews, not how fast).
const WATCHED: Duration = Duration::from_secs(2);

/// Watches `lease` for 1.3 lease lengths (an unrenewed lease would be gone): renewed all along
/// (the loss never signalled), then handed back by `stop` with its fence and token unchanged.
async fn watched_past_its_ttl<L: Lease + Send + 'static>(lease: L) -> L {
    let (fence, token) = (lease.fence(), lease.token().clone());
    let held = Watched::new(lease).unwrap();
    tokio::select! {
        why = held.lost() => panic!("{}: lease lost while renewed: {why:?}", L::PRIMITIVE),
        _ = tokio::time::sleep(WATCHED * 13 / 10) => {}
    }
    assert!(held.is_held(), "{}", L::PRIMITIVE);
    assert_eq!((held.fence(), held.token()), (fence, &token));
    let lease = held.stop().await.unwrap();
    assert_eq!((lease.fence(), lease.token()), (fence, &token));
    assert_eq!(lease.ttl(), WATCHED, "{}", L::PRIMITIVE);
    lease
}

/// The watchdog renews every lease kind through its own extend (a permit, an idempotency claim,
/// a job: each would be gone after one lease length otherwise), in every mode, and `stop`
/// hands the handle back to end it with its own verb, which finds the lease still held.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_lease_kind_is_renewed_and_handed_back() {
    let envs = all_modes("wd-kinds").await;
    let runs = envs.iter().map(|env| async move {
        let mode = env.mode;
        let semaphore = sem(env, "s", 1);
        let Take::Acquired(permit) = semaphore.acquire(WATCHED).await.unwrap() else {
            panic!("{mode:?}: free permit refused")
        };
        let permit = watched_past_its_ttl(permit).await;
        let fence = permit.fence();
        assert_eq!(permit.release().await.unwrap(), Release::Released { fence });

        let config = IdempotencyConfig::default().ttl(WATCHED);
        let store = Idempotency::new(env.client.clone(), env.keyspace.clone())
            .with_config(config)
            .unwrap();
        let fp = Fingerprint::of(&[b"op"]);
        let Begin::Claimed(claim) = store.begin("t", b"k", fp).await.unwrap() else {
            panic!("{mode:?}: fresh key not claimed")
        };
        let claim = watched_past_its_ttl(claim).await;
        let response = Response::new(201, b"done".to_vec());
        assert_eq!(claim.complete(&response).await.unwrap(), Outcome::Stored);

        let queue = queue(env, "q", QueueConfig::default());
        queue.enqueue("j", b"x", RunAt::Now).await.unwrap();
        let worker = OwnerToken::new("w").unwrap();
        let Claim::Claimed(mut jobs) = queue.claim(&worker, WATCHED, 1).await.unwrap() else {
            panic!("{mode:?}: due job not claimed")
        };
        let job = watched_past_its_ttl(jobs.remove(0)).await;
        assert_eq!(job.ack().await.unwrap(), Ack::Acked, "{mode:?}");
    });
    futures::future::join_all(runs).await;
}

/// What a watchdog does after an unconfirmed loss ([`Lease::give_back`]), per kind: a lock and a
/// permit are given back (freed at once, by token and fence); an idempotency claim and a job are
/// not (a duplicate or another worker could start while this holder finishes): they stay held
/// until their lease runs out.
#[tokio::test]
async fn give_back_frees_locks_and_permits_only() {
    let env = env(Mode::StandaloneEval, "wd-give-back", patient()).await;
    let long = Duration::from_secs(60);
    let locks = locks(&env);
    let mut guard = acquire(&locks, "r", long).await;
    guard.give_back().await.unwrap();
    let state = locks.inspect("r").await.unwrap();
    assert!(matches!(state, LockState::Free { .. }), "{state:?}");

    let semaphore = sem(&env, "s", 1);
    let Take::Acquired(mut permit) = semaphore.acquire(long).await.unwrap() else {
        panic!("free permit refused")
    };
    permit.give_back().await.unwrap();
    assert_eq!(semaphore.inspect().await.unwrap().live, 0);

    let store = Idempotency::new(env.client.clone(), env.keyspace.clone());
    let fp = Fingerprint::of(&[b"op"]);
    let Begin::Claimed(mut claim) = store.begin("t", b"k", fp).await.unwrap() else {
        panic!("fresh key not claimed")
    };
    claim.give_back().await.unwrap();
    let again = store.begin("t", b"k", fp).await.unwrap();
    assert!(matches!(again, Begin::InProgress { .. }), "{again:?}");

    let queue = queue(&env, "q", QueueConfig::default());
    queue.enqueue("j", b"x", RunAt::Now).await.unwrap();
    let worker = OwnerToken::new("w").unwrap();
    let Claim::Claimed(mut jobs) = queue.claim(&worker, long, 1).await.unwrap() else {
        panic!("due job not claimed")
    };
    let mut job = jobs.remove(0);
    job.give_back().await.unwrap();
    assert_eq!(queue.stats().await.unwrap().running, 1);
    assert_eq!(job.ack().await.unwrap(), Ack::Acked);
}
