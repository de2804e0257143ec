//! The lock's invariant under real concurrency, faults and bad input, in every mode
//! (standalone and cluster × EVALSHA and FCALL).

use crate::common::{env, own_env, patient, Env, Mode, MODES};
use redis_atomic::lease::{Extend, Fence, OwnerToken, Release};
use redis_atomic::lock::{Acquire, LockState, Locks};
use redis_atomic::Error;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

const TASKS: usize = 32;
const PER_TASK: usize = 500;

fn locks(env: &Env) -> Locks {
    Locks::new(env.client.clone(), env.keyspace.clone())
}

async fn get_counter(env: &Env, key: &str) -> i64 {
    let v = env.raw(redis::cmd("GET").arg(key)).await;
    redis::from_redis_value::<Option<i64>>(v)
        .unwrap()
        .unwrap_or(0)
}

/// Retries until the lock is acquired (bounded by a deadline). Between attempts a waiter sleeps
/// until a releasing task nudges it or 2 ms pass. The nudge is only a scheduling hint that keeps
/// handoffs quick; exclusion comes from Redis alone, and the 2 ms retries of the other waiters
/// keep contending for the lock while it is held. (A busy spin would queue 31 useless attempts
/// ahead of every command of the holder.)
async fn acquire_spin(
    locks: &Locks,
    resource: &str,
    nudge: &Notify,
) -> redis_atomic::lock::LockGuard {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Acquire::Acquired(g) = locks
            .acquire(resource, Duration::from_secs(10))
            .await
            .unwrap()
        {
            return g;
        }
        assert!(Instant::now() < deadline, "could not acquire within 60 s");
        tokio::select! {
            _ = nudge.notified() => {}
            _ = tokio::time::sleep(Duration::from_millis(2)) => {}
        }
    }
}

/// 32 tasks × 500 acquisitions doing a non-atomic read-modify-write inside the critical section:
/// no lost update, never two holders at once, fences strictly increasing in acquisition order.
/// One test per mode: the critical sections of one mode are serial by construction, so the modes
/// run side by side.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn race_no_lost_update_no_overlap_increasing_fences_standalone_eval() {
    race(Mode::StandaloneEval).await;
}

/// The race, standalone, FCALL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn race_no_lost_update_no_overlap_increasing_fences_standalone_functions() {
    race(Mode::StandaloneFunctions).await;
}

/// The race, cluster, EVALSHA.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn race_no_lost_update_no_overlap_increasing_fences_cluster_eval() {
    race(Mode::ClusterEval).await;
}

/// The race, cluster, FCALL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn race_no_lost_update_no_overlap_increasing_fences_cluster_functions() {
    race(Mode::ClusterFunctions).await;
}

async fn race(mode: Mode) {
    {
        let started = Instant::now();
        let env = Arc::new(env(mode, "lock-race", patient()).await);
        let counter = env.keyspace.key("test", 1, "race", &["counter"]).unwrap();
        let inside = Arc::new(AtomicU32::new(0));
        let fences = Arc::new(Mutex::new(Vec::with_capacity(TASKS * PER_TASK)));
        let nudge = Arc::new(Notify::new());
        let mut tasks = Vec::new();
        for _ in 0..TASKS {
            let (env, counter, inside, fences, nudge) = (
                env.clone(),
                counter.clone(),
                inside.clone(),
                fences.clone(),
                nudge.clone(),
            );
            tasks.push(tokio::spawn(async move {
                let locks = locks(&env);
                for _ in 0..PER_TASK {
                    let guard = acquire_spin(&locks, "race", &nudge).await;
                    assert_eq!(
                        inside.fetch_add(1, Ordering::SeqCst),
                        0,
                        "two holders at once"
                    );
                    fences.lock().unwrap().push(guard.fence());
                    let n = get_counter(&env, &counter).await;
                    env.raw(redis::cmd("SET").arg(&counter).arg(n + 1)).await;
                    inside.fetch_sub(1, Ordering::SeqCst);
                    assert!(matches!(
                        guard.release().await.unwrap(),
                        Release::Released { .. }
                    ));
                    nudge.notify_one();
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        let total = (TASKS * PER_TASK) as i64;
        assert_eq!(
            get_counter(&env, &counter).await,
            total,
            "{mode:?}: lost update"
        );
        let fences = fences.lock().unwrap();
        assert_eq!(fences.len(), TASKS * PER_TASK);
        assert!(
            fences.windows(2).all(|w| w[0] < w[1]),
            "{mode:?}: fences not strictly increasing"
        );
        eprintln!(
            "{mode:?}: {} critical sections in {:?}",
            TASKS * PER_TASK,
            started.elapsed()
        );
    }
}

/// Release and extend by a non-owner (even one that knows the fence), or by the owner with
/// another lease's fence, answer Lost and change nothing.
#[tokio::test]
async fn non_owner_cannot_release_or_extend() {
    for mode in MODES {
        let env = env(mode, "lock-nonowner", patient()).await;
        let locks = locks(&env);
        let Acquire::Acquired(guard) = locks.acquire("r", Duration::from_secs(30)).await.unwrap()
        else {
            panic!("{mode:?}: free lock not acquired");
        };
        let intruder = OwnerToken::random();
        let (fence, long) = (guard.fence(), Duration::from_secs(600));
        assert_eq!(
            locks.release("r", &intruder, fence).await.unwrap(),
            Release::Lost
        );
        assert_eq!(
            locks.extend("r", &intruder, fence, long).await.unwrap(),
            Extend::Lost
        );
        let other_lease = Fence(fence.0 - 1);
        let token = guard.token();
        assert_eq!(
            locks.release("r", token, other_lease).await.unwrap(),
            Release::Lost
        );
        assert_eq!(
            locks.extend("r", token, other_lease, long).await.unwrap(),
            Extend::Lost
        );
        match locks.inspect("r").await.unwrap() {
            LockState::Locked { fence, ttl } => {
                assert_eq!(fence, guard.fence());
                assert!(
                    ttl <= Duration::from_secs(30),
                    "{mode:?}: intruder extended the lease"
                );
            }
            other => panic!("{mode:?}: lock lost: {other:?}"),
        }
        let fence = guard.fence();
        assert_eq!(guard.release().await.unwrap(), Release::Released { fence });
        assert!(
            matches!(locks.inspect("r").await.unwrap(), LockState::Free { last_fence } if last_fence == fence)
        );
    }
}

/// Extend sets an absolute lease from now; it never adds to the remaining one.
#[tokio::test]
async fn extend_is_absolute() {
    for mode in MODES {
        let env = env(mode, "lock-extend", patient()).await;
        let locks = locks(&env);
        // Leases far longer than any stall of a loaded machine: the lock cannot run out between
        // the extend and the inspect, so what the inspect finds is the extend's doing.
        let (taken, shorter) = (Duration::from_secs(1200), Duration::from_secs(300));
        let Acquire::Acquired(mut guard) = locks.acquire("r", taken).await.unwrap() else {
            panic!("not acquired");
        };
        let out = guard.extend(shorter).await.unwrap();
        assert!(matches!(out, Extend::Extended { ttl, .. } if ttl == shorter));
        let state = locks.inspect("r").await.unwrap();
        let LockState::Locked { ttl, fence } = state else {
            panic!("{mode:?}: the extended lock is not held: {state:?}")
        };
        assert_eq!(fence, guard.fence());
        assert!(
            ttl <= shorter && ttl > shorter / 2,
            "{mode:?}: extend added to the lease: {ttl:?}"
        );
        assert!(matches!(
            guard.release().await.unwrap(),
            Release::Released { .. }
        ));
    }
}

/// A holder that stalls past its lease loses the lock: the next holder gets a larger fence, and
/// the stale holder can neither extend nor release.
#[tokio::test]
async fn stalled_holder_is_superseded_with_larger_fence() {
    for mode in MODES {
        let env = env(mode, "lock-stall", patient()).await;
        let locks = locks(&env);
        let Acquire::Acquired(mut a) = locks
            .acquire("r", Duration::from_millis(100))
            .await
            .unwrap()
        else {
            panic!()
        };
        tokio::time::sleep(Duration::from_millis(250)).await; // A "pauses" past its lease
        let Acquire::Acquired(b) = locks.acquire("r", Duration::from_secs(10)).await.unwrap()
        else {
            panic!("{mode:?}: expired lock not free")
        };
        assert!(b.fence() > a.fence());
        assert_eq!(
            a.extend(Duration::from_secs(10)).await.unwrap(),
            Extend::Lost
        );
        assert_eq!(a.release().await.unwrap(), Release::Lost);
        assert!(
            matches!(locks.inspect("r").await.unwrap(), LockState::Locked { fence, .. } if fence == b.fence())
        );
    }
}

/// The server itself stalls (SIGSTOP) past the lease: once it runs again the lease is over and
/// the next holder gets a larger fence.
#[tokio::test]
async fn server_stall_past_lease() {
    for mode in [Mode::StandaloneEval, Mode::StandaloneFunctions] {
        let env = own_env(mode, "lock-sigstop", patient()).await;
        let locks = locks(&env);
        let Acquire::Acquired(a) = locks
            .acquire("r", Duration::from_millis(150))
            .await
            .unwrap()
        else {
            panic!()
        };
        let server = env.server.as_ref().unwrap();
        server.pause();
        tokio::time::sleep(Duration::from_millis(300)).await;
        server.resume();
        let Acquire::Acquired(b) = locks.acquire("r", Duration::from_secs(10)).await.unwrap()
        else {
            panic!("{mode:?}: lease survived the stall")
        };
        assert!(b.fence() > a.fence());
    }
}

/// Acquiring again with the same token while holding returns the same fence (retry-safe).
#[tokio::test]
async fn reacquire_same_token_same_fence() {
    for mode in MODES {
        let env = env(mode, "lock-reacquire", patient()).await;
        let locks = locks(&env);
        let token = OwnerToken::random();
        let Acquire::Acquired(a) = locks
            .acquire_with_token("r", &token, Duration::from_secs(5))
            .await
            .unwrap()
        else {
            panic!()
        };
        let Acquire::Acquired(again) = locks
            .acquire_with_token("r", &token, Duration::from_secs(5))
            .await
            .unwrap()
        else {
            panic!("{mode:?}: owner refused its own lock")
        };
        assert_eq!(a.fence(), again.fence());
        assert!(matches!(
            locks.acquire("r", Duration::from_secs(5)).await.unwrap(),
            Acquire::Held { .. }
        ));
    }
}

/// `acquire_timeout` waits for a lease to end, and gives up after its wait.
#[tokio::test]
async fn acquire_timeout_waits_and_gives_up() {
    let env = env(Mode::StandaloneEval, "lock-wait", patient()).await;
    let locks = locks(&env);
    let Acquire::Acquired(first) = locks
        .acquire("r", Duration::from_millis(200))
        .await
        .unwrap()
    else {
        panic!()
    };
    let out = locks
        .acquire_timeout("r", Duration::from_secs(5), Duration::from_secs(3))
        .await
        .unwrap();
    let Acquire::Acquired(second) = out else {
        panic!("did not wait for the lease to end")
    };
    assert!(second.fence() > first.fence());
    let started = Instant::now();
    let out = locks
        .acquire_timeout("r", Duration::from_secs(5), Duration::from_millis(100))
        .await
        .unwrap();
    assert!(matches!(out, Acquire::Held { .. }));
    assert!(started.elapsed() >= Duration::from_millis(100));
}

/// Bad input is a typed error and overwrites nothing.
#[tokio::test]
async fn bad_input_is_typed_and_harmless() {
    for mode in MODES {
        bad_input(env(mode, "lock-bad", patient()).await).await;
    }
}

async fn bad_input(env: Env) {
    let locks = locks(&env);
    let ttl = Duration::from_secs(1);
    assert!(matches!(
        locks.acquire("", ttl).await,
        Err(Error::BadArgument(_))
    ));
    assert!(matches!(
        locks.acquire("r", Duration::ZERO).await,
        Err(Error::BadArgument(_))
    ));
    assert!(matches!(
        locks.acquire("r", Duration::from_micros(999)).await,
        Err(Error::BadArgument(_))
    ));
    assert!(matches!(
        locks.acquire("r", Duration::from_secs(8 * 24 * 3600)).await,
        Err(Error::BadArgument(_))
    ));
    assert!(matches!(
        locks.acquire("r", Duration::MAX).await,
        Err(Error::BadArgument(_))
    ));
    assert!(matches!(
        OwnerToken::from_bytes(&[0xff, 0xfe]),
        Err(Error::BadArgument(_))
    ));
    assert!(matches!(OwnerToken::new(""), Err(Error::BadArgument(_))));
    assert!(matches!(
        OwnerToken::new("x".repeat(257)),
        Err(Error::BadArgument(_))
    ));

    // The script validates too (for callers that bypass the Rust binding).
    let raw = locks.keys("raw").unwrap();
    for bad_ttl in ["-5", "0", "1.5", "abc", "604800001"] {
        let r = env
            .client
            .call(
                &redis_atomic::script::registry::LOCK_ACQUIRE,
                [&raw.lock, &raw.fence],
                ["tok".into(), bad_ttl.into()],
            )
            .await;
        assert!(
            matches!(r, Err(Error::BadArgument(_))),
            "ttl {bad_ttl}: {r:?}"
        );
    }

    // Wrong type at the lock key: typed error, the hash untouched.
    let hash_key = locks.keys("h").unwrap().lock;
    env.raw(redis::cmd("HSET").arg(&hash_key).arg("f").arg("v"))
        .await;
    assert!(matches!(
        locks.acquire("h", ttl).await,
        Err(Error::WrongType(_))
    ));
    let v = env.raw(redis::cmd("HGET").arg(&hash_key).arg("f")).await;
    assert_eq!(redis::from_redis_value::<String>(v).unwrap(), "v");

    // A fence key that does not hold an integer: typed error, lock not taken, value kept.
    let fence_key = locks.keys("f").unwrap().fence;
    env.raw(redis::cmd("SET").arg(&fence_key).arg("not-a-number"))
        .await;
    assert!(matches!(
        locks.acquire("f", ttl).await,
        Err(Error::WrongType(_))
    ));
    let v = env.raw(redis::cmd("GET").arg(&fence_key)).await;
    assert_eq!(
        redis::from_redis_value::<String>(v).unwrap(),
        "not-a-number"
    );
    let lock_f = locks.keys("f").unwrap().lock;
    let exists = env.raw(redis::cmd("EXISTS").arg(&lock_f)).await;
    assert_eq!(redis::from_redis_value::<i64>(exists).unwrap(), 0);

    // Someone else's plain string at the lock key counts as held, never overwritten.
    let foreign = locks.keys("foreign").unwrap().lock;
    env.raw(redis::cmd("SET").arg(&foreign).arg("someone-else"))
        .await;
    assert!(matches!(
        locks.acquire("foreign", ttl).await.unwrap(),
        Acquire::Held { .. }
    ));
    let v = env.raw(redis::cmd("GET").arg(&foreign)).await;
    assert_eq!(
        redis::from_redis_value::<String>(v).unwrap(),
        "someone-else"
    );
}

/// Fences stay increasing even when the fence key is lost (as after a failover to a lagging
/// replica): the server-time floor keeps them above every fence issued before.
#[tokio::test]
async fn fences_survive_loss_of_fence_key() {
    let env = env(Mode::StandaloneEval, "lock-fenceloss", patient()).await;
    let locks = locks(&env);
    let mut last = Fence(0);
    for _ in 0..50 {
        let Acquire::Acquired(g) = locks.acquire("r", Duration::from_secs(5)).await.unwrap() else {
            panic!()
        };
        assert!(g.fence() > last);
        last = g.fence();
        g.release().await.unwrap();
        let fence_key = locks.keys("r").unwrap().fence;
        env.raw(redis::cmd("DEL").arg(fence_key)).await; // what a lagging replica would not have
    }
}
