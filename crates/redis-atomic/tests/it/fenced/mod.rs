//! Fenced writes in every mode: the zombie holder is rejected after a newer holder wrote, racing
//! holders never make the state go back, batches apply entirely or not at all, bad input is typed.

use crate::common::{env, patient, Env, MODES};
use redis_atomic::fenced::{Fenced, FencedWrites};
use redis_atomic::lease::Fence;
use redis_atomic::lock::{Acquire, LockGuard, Locks};
use redis_atomic::write::Write;
use redis_atomic::Error;
use redis_atomic_testkit::{history, FencedWrite};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

async fn all_modes(test: &str) -> Vec<Env> {
    let mut envs = Vec::new();
    for mode in MODES {
        envs.push(env(mode, test, patient()).await);
    }
    envs
}

fn parts(env: &Env) -> (Locks, FencedWrites) {
    (
        Locks::new(env.client.clone(), env.keyspace.clone()),
        FencedWrites::new(env.client.clone(), env.keyspace.clone()),
    )
}

async fn acquire(locks: &Locks, resource: &str, ttl: Duration) -> LockGuard {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        if let Acquire::Acquired(g) = locks.acquire(resource, ttl).await.unwrap() {
            return g;
        }
        assert!(Instant::now() < until, "lock never free");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

async fn hget(env: &Env, key: &str, field: &str) -> Option<String> {
    redis::from_redis_value(env.raw(redis::cmd("HGET").arg(key).arg(field)).await).unwrap()
}

/// The zombie worker: A pauses past its lease, B acquires and writes, A wakes and writes:
/// A is rejected and B's data is intact, in every mode.
#[tokio::test]
async fn zombie_rejected_after_newer_holder_wrote() {
    for env in all_modes("fenced-zombie").await {
        let mode = env.mode;
        let (locks, fenced) = parts(&env);
        let data = fenced.key("order-42", "state").unwrap();
        let a = acquire(&locks, "order-42", Duration::from_millis(100)).await;
        tokio::time::sleep(Duration::from_millis(200)).await; // A is paused past its lease
        let b = acquire(&locks, "order-42", Duration::from_secs(10)).await;
        let wrote = fenced
            .fenced_write(
                "order-42",
                b.fence(),
                &[Write::hset(&data, [("owner", "B"), ("step", "2")])],
            )
            .await
            .unwrap();
        assert_eq!(
            wrote,
            Fenced::Applied {
                fence: b.fence(),
                writes: 1
            },
            "{mode:?}"
        );
        let zombie = fenced
            .fenced_write(
                "order-42",
                a.fence(),
                &[Write::hset(&data, [("owner", "A")]), Write::del(&data)],
            )
            .await
            .unwrap();
        assert_eq!(zombie, Fenced::Stale { highest: b.fence() }, "{mode:?}");
        assert_eq!(
            hget(&env, &data, "owner").await.as_deref(),
            Some("B"),
            "{mode:?}: B's data lost"
        );
        assert_eq!(hget(&env, &data, "step").await.as_deref(), Some("2"));
        assert_eq!(fenced.highest("order-42").await.unwrap(), b.fence());
    }
}

/// 16 workers take the lock with short leases; every fourth one pauses past its lease before
/// writing. No write is applied with a fence below one already acknowledged before it was sent,
/// the final state is the largest applied fence (the testkit's fenced-register checker), and
/// zombies were indeed refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_holders_never_go_back() {
    let envs = all_modes("fenced-race").await;
    let runs = envs.iter().map(|env| async move {
        let mode = env.mode;
        let data = FencedWrites::new(env.client.clone(), env.keyspace.clone())
            .key("r", "v")
            .unwrap();
        let clock = Instant::now();
        let writes = Arc::new(Mutex::new(Vec::new()));
        let stale = Arc::new(AtomicU64::new(0));
        let tasks: Vec<_> = (0..16u64)
            .map(|t| {
                let (locks, fenced) = parts(env);
                let (data, writes, stale) = (data.clone(), writes.clone(), stale.clone());
                tokio::spawn(async move {
                    for i in 0..6u64 {
                        let guard = acquire(&locks, "r", Duration::from_millis(40)).await;
                        if (t + i) % 4 == 0 {
                            tokio::time::sleep(Duration::from_millis(60)).await;
                            // zombie
                        }
                        let fence = guard.fence();
                        let w = [Write::set(&data, fence.0.to_string())];
                        let invoked = clock.elapsed();
                        let applied = match fenced.fenced_write("r", fence, &w).await.unwrap() {
                            Fenced::Applied { .. } => true,
                            Fenced::Stale { highest } => {
                                assert!(highest > fence);
                                stale.fetch_add(1, Ordering::SeqCst);
                                false
                            }
                            other => panic!("{other:?}"),
                        };
                        writes.lock().unwrap().push(FencedWrite {
                            resource: "r".into(),
                            fence: fence.0,
                            invoked,
                            completed: clock.elapsed(),
                            applied: Some(applied),
                        });
                        let _ = guard.release().await.unwrap();
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        assert!(
            stale.load(Ordering::SeqCst) > 0,
            "{mode:?}: no zombie was refused"
        );
        let stored: u64 =
            redis::from_redis_value(env.raw(redis::cmd("GET").arg(&data)).await).unwrap();
        let finals = HashMap::from([("r".to_string(), stored)]);
        let verdict = history::check_fenced_writes(&writes.lock().unwrap(), &finals);
        assert!(verdict.ok(), "{mode:?}: {:?}", verdict.violations);
    });
    futures::future::join_all(runs).await;
}

/// Every op applies as typed, with one script call; the same batch again with the same fence is
/// harmless (retry-safe); a batch meeting a key of the wrong type applies nothing at all.
#[tokio::test]
async fn ops_apply_as_typed_and_batches_are_all_or_nothing() {
    for env in all_modes("fenced-ops").await {
        let mode = env.mode;
        let (_, fenced) = parts(&env);
        let k = |p: &str| fenced.key("res", p).unwrap();
        env.raw(redis::cmd("HSET").arg(k("h")).arg("old").arg("1"))
            .await;
        env.raw(redis::cmd("SADD").arg(k("s")).arg("gone")).await;
        env.raw(redis::cmd("SET").arg(k("d")).arg("x")).await;
        let batch = [
            Write::set_px(k("str"), "v", Duration::from_secs(60)),
            Write::hset(k("h"), [("a", "1"), ("b", "2")]),
            Write::hdel(k("h"), ["old"]),
            Write::sadd(k("s"), ["m1", "m2"]),
            Write::srem(k("s"), ["gone"]),
            Write::del(k("d")),
            Write::expire(k("h"), Duration::from_secs(120)),
        ];
        for _ in 0..2 {
            let out = fenced.fenced_write("res", Fence(10), &batch).await.unwrap();
            assert_eq!(
                out,
                Fenced::Applied {
                    fence: Fence(10),
                    writes: 7
                },
                "{mode:?}"
            );
        }
        let int = |cmd: redis::Cmd| {
            let env = &env;
            async move { redis::from_redis_value::<i64>(env.raw(&cmd).await).unwrap() }
        };
        assert_eq!(int(redis::cmd("HLEN").arg(k("h")).clone()).await, 2);
        assert_eq!(int(redis::cmd("SCARD").arg(k("s")).clone()).await, 2);
        assert_eq!(int(redis::cmd("EXISTS").arg(k("d")).clone()).await, 0);
        let pttl = int(redis::cmd("PTTL").arg(k("str")).clone()).await;
        assert!(pttl > 0 && pttl <= 60_000);
        let pttl = int(redis::cmd("PTTL").arg(k("h")).clone()).await;
        assert!(pttl > 60_000 && pttl <= 120_000);

        // All or nothing: the third write meets a string where it needs a set.
        let partial = [
            Write::set(k("first"), "1"),
            Write::hset(k("h"), [("c", "3")]),
            Write::sadd(k("str"), ["x"]),
        ];
        let r = fenced.fenced_write("res", Fence(11), &partial).await;
        assert!(matches!(r, Err(Error::WrongType(_))), "{mode:?}: {r:?}");
        assert_eq!(
            int(redis::cmd("EXISTS").arg(k("first")).clone()).await,
            0,
            "{mode:?}: half applied"
        );
        assert_eq!(int(redis::cmd("HLEN").arg(k("h")).clone()).await, 2);
        assert_eq!(
            fenced.highest("res").await.unwrap(),
            Fence(10),
            "{mode:?}: fence recorded"
        );
    }
}

/// Bad input is a typed error before anything is sent (or from the script, for callers that
/// bypass the binding), and nothing is written.
#[tokio::test]
async fn bad_input_is_typed() {
    for env in all_modes("fenced-bad").await {
        let (_, fenced) = parts(&env);
        let mine = fenced.key("res", "x").unwrap();
        let other = fenced.key("other", "x").unwrap();
        let f = Fence(5);
        let bad = |r: Result<Fenced, Error>| {
            matches!(r, Err(Error::BadArgument(_)) | Err(Error::CrossSlot { .. }))
        };
        assert!(bad(fenced.fenced_write("res", f, &[]).await));
        assert!(bad(fenced
            .fenced_write("res", Fence(0), &[Write::del(&mine)])
            .await));
        assert!(bad(fenced
            .fenced_write("res", Fence(1 << 53), &[Write::del(&mine)])
            .await));
        assert!(bad(fenced
            .fenced_write("res", f, &[Write::del(&other)])
            .await));
        assert!(bad(fenced
            .fenced_write("res", f, &[Write::del("no-tag")])
            .await));
        assert!(bad(fenced.fenced_write("", f, &[Write::del(&mine)]).await));
        assert!(bad(fenced
            .fenced_write("res", f, &vec![Write::del(&mine); 65])
            .await));
        assert!(bad(fenced
            .fenced_write("res", f, &[Write::expire(&mine, Duration::ZERO)])
            .await));
        assert!(FencedWrites::new(env.client.clone(), env.keyspace.clone())
            .with_retention(Duration::ZERO)
            .is_err());
        assert_eq!(fenced.highest("res").await.unwrap(), Fence(0));

        let record = fenced.keys("res").unwrap().fence;
        let script = &redis_atomic::script::registry::FENCED_WRITE;
        for args in [
            vec!["5", "1000", "set", "2", "v"], // argc beyond the spec
            vec!["5", "1000", "bogus", "0"],    // unknown op
            vec!["5", "1000", "set", "3", "v", "EX", "1"], // only PX
            vec!["0", "1000", "del", "0"],      // fence 0
            vec!["5", "0", "del", "0"],         // retention 0
            vec!["5", "1000", "del", "0", "extra"], // trailing arguments
        ] {
            let args: Vec<redis_atomic::Arg<'_>> = args.into_iter().map(Into::into).collect();
            let r = env.client.call(script, &[&record, &mine], &args).await;
            assert!(matches!(r, Err(Error::BadArgument(_))), "{r:?}");
        }
        let r = env
            .client
            .call(script, &[&record], &["5".into(), "1000".into()])
            .await;
        assert!(matches!(r, Err(Error::BadArgument(_))), "no writes: {r:?}");
        let r = env.client.call(script, &[], &[]).await;
        assert!(
            matches!(r, Err(Error::BadArgument(_))),
            "below the fixed part: {r:?}"
        );
        assert_eq!(fenced.highest("res").await.unwrap(), Fence(0));
    }
}
