//! The semaphore's invariant (never more than `capacity` live permits, even with holders that
//! die) under real concurrency in every mode, plus fences, reclaim bounds and bad input. Faults
//! are in `semaphore_faults.rs`.

use crate::common::{all_modes, env, patient, sem, take, Env, Mode};
use redis_atomic::lease::{Extend, Lease, OwnerToken, Release};
use redis_atomic::semaphore::{Acquire, Semaphore, SemaphoreConfig, RECLAIM_PER_ACQUIRE};
use redis_atomic::{Error, Fence};
use redis_atomic_testkit::{history, LeaseSpan};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// 64 tasks race for 5 permits; about one holder in sixteen dies without releasing. Never more
/// than 5 holders at once and fences unique and increasing (the testkit's lease checker), every
/// mode; dead holders' permits come back once their lease ends.
///
/// Each holding is recorded as a sub-interval of the server-side lease (it starts after the
/// acquire reply and ends before the release is sent, or at send + lease for a holder that died),
/// so an overlap above capacity here is one on the server too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn never_more_than_capacity_with_dying_holders() {
    const CAPACITY: usize = 5;
    let envs = all_modes("sem-race").await;
    let runs = envs.iter().map(|env| async move {
        let mode = env.mode;
        let clock = Instant::now();
        let spans = Arc::new(Mutex::new(Vec::new()));
        let (deaths, fulls) = (Arc::new(Mutex::new(0)), Arc::new(Mutex::new(0)));
        let tasks: Vec<_> = (0..64)
            .map(|t| {
                let sem = sem(env, "pool", CAPACITY as u32);
                let (spans, deaths, fulls) = (spans.clone(), deaths.clone(), fulls.clone());
                tokio::spawn(async move {
                    let lease = Duration::from_millis(150);
                    // The lease surely lasts until send + lease (scores are server µs); 1 ms
                    // less leaves room for clock-rate differences.
                    let drift = Duration::from_millis(1);
                    let deadline = Instant::now() + Duration::from_secs(60);
                    for i in 0..8 {
                        let holder = OwnerToken::random();
                        let (permit, sent) = loop {
                            let sent = clock.elapsed();
                            match sem.acquire_with_token(&holder, lease).await.unwrap() {
                                Acquire::Acquired(permit) => break (permit, sent),
                                Acquire::Full { retry_after } => {
                                    *fulls.lock().unwrap() += 1;
                                    assert!(retry_after <= lease);
                                    assert!(Instant::now() < deadline, "starved");
                                    let pause = retry_after.min(Duration::from_millis(3));
                                    tokio::time::sleep(pause).await;
                                }
                                other => panic!("{other:?}"),
                            }
                        };
                        let mut span = LeaseSpan {
                            resource: "pool".into(),
                            fence: permit.fence().0,
                            acquire_invoked: sent,
                            acquire_completed: clock.elapsed(),
                            release_invoked: None,
                            lease: lease - drift,
                        };
                        tokio::time::sleep(Duration::from_millis(1 + (t + i) as u64 % 3)).await;
                        if (t * 7 + i * 3) % 16 == 0 {
                            *deaths.lock().unwrap() += 1; // dies: never releases
                            spans.lock().unwrap().push(span);
                            continue;
                        }
                        // The holder stops using the permit when it sends the release. A holder
                        // slower than its lease (a loaded test machine) held it only until the
                        // lease ended; its release then says Lost, which must not come back
                        // before the lease could have ended.
                        let lease_end = sent + lease - drift;
                        span.release_invoked = Some(clock.elapsed());
                        let fence = permit.fence();
                        let released = permit.release().await.unwrap();
                        assert!(
                            released == Release::Released { fence } || clock.elapsed() >= lease_end,
                            "{released:?} while the lease was surely live"
                        );
                        spans.lock().unwrap().push(span);
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        let spans = spans.lock().unwrap();
        let verdict = history::check_leases(&spans, CAPACITY);
        assert!(verdict.ok(), "{mode:?}: {:?}", verdict.violations);
        assert!(
            *deaths.lock().unwrap() > 0 && *fulls.lock().unwrap() > 0,
            "{mode:?}: not contended"
        );
        eprintln!(
            "{mode:?}: {} permits, {} deaths, {} full",
            spans.len(),
            deaths.lock().unwrap(),
            fulls.lock().unwrap()
        );
    });
    futures::future::join_all(runs).await;
}

/// Fences strictly increase; the same holder retrying gets its own fence back; release and
/// extend (through the permit or by parts) need the live permit's token and fence; Full says
/// when the first lease ends.
#[tokio::test]
async fn fences_retries_release_extend() {
    for env in all_modes("sem-basic").await {
        let mode = env.mode;
        let sem = sem(&env, "s", 2);
        let (a, b) = (OwnerToken::random(), OwnerToken::random());
        let pa = take(&sem, &a, Duration::from_secs(30)).await;
        let mut pb = take(&sem, &b, Duration::from_secs(5)).await;
        assert_eq!((pa.token(), pb.token()), (&a, &b));
        assert!(pb.fence() > pa.fence(), "{mode:?}");
        let again = take(&sem, &a, Duration::from_secs(30)).await;
        assert_eq!(
            again.fence(),
            pa.fence(),
            "{mode:?}: retry issued a new fence"
        );
        match sem.acquire(Duration::from_secs(1)).await.unwrap() {
            Acquire::Full { retry_after } => assert!(retry_after <= Duration::from_secs(5)),
            other => panic!("{mode:?}: third permit out of two: {other:?}"),
        }
        let state = sem.inspect().await.unwrap();
        assert_eq!((state.live, state.last_fence), (2, pb.fence()));
        let before = pb.expires_by();
        assert_eq!(
            pb.extend(Duration::from_secs(60)).await.unwrap(),
            Extend::Extended {
                fence: pb.fence(),
                ttl: Duration::from_secs(60)
            }
        );
        assert!(
            pb.expires_by() > before,
            "{mode:?}: local deadline not moved"
        );
        assert_eq!(
            sem.extend(&b, pb.fence(), Duration::from_secs(60))
                .await
                .unwrap(),
            Extend::Extended {
                fence: pb.fence(),
                ttl: Duration::from_secs(60)
            },
            "{mode:?}: extend by parts"
        );
        let fa = pa.fence();
        assert_eq!(pa.release().await.unwrap(), Release::Released { fence: fa });
        assert_eq!(
            sem.release(&a, fa).await.unwrap(),
            Release::Lost,
            "{mode:?}: double release"
        );
        assert_eq!(
            sem.extend(&a, fa, Duration::from_secs(1)).await.unwrap(),
            Extend::Lost
        );
        assert_eq!(sem.inspect().await.unwrap().live, 1);
        assert_eq!(
            sem.release(&b, pb.fence()).await.unwrap(),
            Release::Released { fence: pb.fence() },
            "{mode:?}: release by parts"
        );
    }
}

/// A holder whose permit expired and who acquired again under the same token holds a new fence;
/// its old permit can neither release nor extend the new one.
#[tokio::test]
async fn stale_incarnation_cannot_touch_new_permit() {
    for env in all_modes("sem-stale").await {
        let mode = env.mode;
        let sem = sem(&env, "s", 1);
        let holder = OwnerToken::random();
        let mut old = take(&sem, &holder, Duration::from_millis(50)).await;
        tokio::time::sleep(Duration::from_millis(120)).await;
        let new = take(&sem, &holder, Duration::from_secs(30)).await;
        assert!(new.fence() > old.fence(), "{mode:?}");
        assert_eq!(
            old.extend(Duration::from_secs(60)).await.unwrap(),
            Extend::Lost,
            "{mode:?}"
        );
        assert_eq!(old.release().await.unwrap(), Release::Lost, "{mode:?}");
        assert_eq!(
            sem.inspect().await.unwrap().live,
            1,
            "{mode:?}: new permit lost"
        );
        let fence = new.fence();
        assert_eq!(new.release().await.unwrap(), Release::Released { fence });
    }
}

async fn card(env: &Env, key: &str) -> usize {
    redis::from_redis_value(env.raw(redis::cmd("ZCARD").arg(key)).await).unwrap()
}

/// Expired permits are reclaimed inside acquire, at most RECLAIM_PER_ACQUIRE per call, and
/// never count against capacity while they wait to be reclaimed.
#[tokio::test]
async fn reclaim_is_bounded_and_expired_never_count() {
    let env = env(Mode::StandaloneEval, "sem-reclaim", patient()).await;
    let n = RECLAIM_PER_ACQUIRE + 36;
    let setup = sem(&env, "big", n as u32 + 1);
    let _long = take(&setup, &OwnerToken::random(), Duration::from_secs(30)).await;
    // Taken with long leases (a slow machine must not let the first expire while the last are
    // taken), then all shortened to 1 ms by extend: n expired permits, deterministically.
    let mut short = Vec::new();
    for _ in 0..n {
        short.push(take(&setup, &OwnerToken::random(), Duration::from_secs(30)).await);
    }
    for permit in &mut short {
        assert!(matches!(
            permit.extend(Duration::from_millis(1)).await.unwrap(),
            Extend::Extended { .. }
        ));
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
    let key = setup.keys().permits.clone();
    assert_eq!(card(&env, &key).await, n + 1);
    // The same semaphore used with capacity 3: one live permit, n expired ones.
    let small = sem(&env, "big", 3);
    let _ = take(&small, &OwnerToken::random(), Duration::from_secs(30)).await;
    assert_eq!(
        card(&env, &key).await,
        n + 1 - RECLAIM_PER_ACQUIRE + 1,
        "reclaim not bounded"
    );
    let _ = take(&small, &OwnerToken::random(), Duration::from_secs(30)).await;
    assert_eq!(card(&env, &key).await, 3, "leftovers not reclaimed");
    assert!(matches!(
        small.acquire(Duration::from_secs(1)).await.unwrap(),
        Acquire::Full { .. }
    ));
    assert_eq!(small.inspect().await.unwrap().live, 3);
}

/// Bad input is a typed error, in the binding and in the script.
#[tokio::test]
async fn bad_input_is_typed() {
    for env in all_modes("sem-bad").await {
        let c = env.client.clone();
        assert!(matches!(
            Semaphore::new(c.clone(), &env.keyspace, "s", SemaphoreConfig::new(0)),
            Err(Error::BadArgument(_))
        ));
        assert!(matches!(
            Semaphore::new(c.clone(), &env.keyspace, "", SemaphoreConfig::new(1)),
            Err(Error::BadArgument(_))
        ));
        assert!(matches!(
            Semaphore::new(c.clone(), &env.keyspace, "s", SemaphoreConfig::new(100_001)),
            Err(Error::BadArgument(_))
        ));
        let sem = sem(&env, "s", 1);
        let h = OwnerToken::random();
        assert!(matches!(
            sem.acquire(Duration::ZERO).await,
            Err(Error::BadArgument(_))
        ));
        assert!(matches!(
            sem.acquire_with_token(&h, Duration::from_secs(8 * 86400))
                .await,
            Err(Error::BadArgument(_))
        ));
        let mut p = take(&sem, &h, Duration::from_secs(30)).await;
        assert!(matches!(
            p.extend(Duration::ZERO).await,
            Err(Error::BadArgument(_))
        ));
        assert!(matches!(
            sem.extend(&h, p.fence(), Duration::from_secs(8 * 86400))
                .await,
            Err(Error::BadArgument(_))
        ));
        let k = crate::common::sem(&env, "raw", 1).keys().clone();
        for (holder, cap, lease) in [
            ("", "1", "10"),
            ("h", "0", "10"),
            ("h", "1", "0"),
            ("h", "x", "1"),
        ] {
            let r = c
                .call(
                    &redis_atomic::script::registry::SEM_ACQUIRE,
                    [&k.permits, &k.holders, &k.fence],
                    [holder.into(), cap.into(), lease.into()],
                )
                .await;
            assert!(
                matches!(r, Err(Error::BadArgument(_))),
                "{holder} {cap} {lease}: {r:?}"
            );
        }
    }
}

/// Extends any lease through the `Lease` trait; returns what the trait reads back.
async fn extend_via_trait(lease: &mut impl Lease, ttl: Duration) -> (Extend, Fence, OwnerToken) {
    let outcome = lease.extend(ttl).await.unwrap();
    (outcome, lease.fence(), lease.token().clone())
}

/// A `Permit` is a `Lease`: extended through the trait it keeps its fence and token and moves
/// its local deadline; once released by parts, the trait's extend answers `Lost` and the
/// deadline stays.
#[tokio::test]
async fn permit_works_through_the_lease_trait() {
    let env = env(Mode::StandaloneEval, "sem-lease", patient()).await;
    let sem = sem(&env, "s", 1);
    let token = OwnerToken::random();
    let mut permit = take(&sem, &token, Duration::from_secs(5)).await;
    let fence = permit.fence();
    let before = Lease::expires_by(&permit);
    let ttl = Duration::from_secs(60);
    let (outcome, f, t) = extend_via_trait(&mut permit, ttl).await;
    assert_eq!(outcome, Extend::Extended { fence, ttl });
    assert_eq!((f, &t), (fence, &token));
    let extended = Lease::expires_by(&permit);
    assert!(extended >= before + Duration::from_secs(55));
    assert_eq!(
        sem.release(&token, fence).await.unwrap(),
        Release::Released { fence }
    );
    let (outcome, ..) = extend_via_trait(&mut permit, ttl).await;
    assert_eq!(outcome, Extend::Lost);
    assert_eq!(Lease::expires_by(&permit), extended);
}
