//! Optimistic CAS on real servers, standalone and cluster: no lost update under contention or
//! when a watched key changes, expires or disappears mid-attempt; the classic examples (a quota
//! window, setMax, a profile and its index); no watch left behind on any exit path. (No scripts are involved, so delivery does not matter.)

use crate::common::metrics::Recorded;
use crate::common::{env, patient, Env, Mode};
use redis_atomic::cas::{Cas, CasOutcome, Decision, Read, CAS_ABORTS_TOTAL};
use redis_atomic::write::Write;
use redis_atomic::{ClientConfig, Error, RetryPolicy};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// `redis_atomic_ops_total` of CAS updates that ended with `outcome`.
pub(crate) fn updates(m: &Recorded, outcome: &str) -> u64 {
    m.counter(
        "redis_atomic_ops_total",
        &[
            ("primitive", "cas"),
            ("op", "update"),
            ("script", "watch_multi_exec"),
            ("version", "-"),
            ("outcome", outcome),
        ],
    )
}

/// A policy with the contention backoff and these bounds.
pub(crate) fn contention(attempts: u32, deadline: Duration) -> RetryPolicy {
    RetryPolicy::contention()
        .max_attempts(attempts)
        .deadline(deadline)
}

pub(crate) const TOPOLOGIES: [Mode; 2] = [Mode::StandaloneEval, Mode::ClusterEval];

pub(crate) async fn get_i64(env: &Env, key: &str) -> Option<i64> {
    redis::from_redis_value(env.raw(redis::cmd("GET").arg(key)).await).unwrap()
}

/// Increment through CAS: read, add one, write.
async fn increment(cas: &Cas, key: &str) -> CasOutcome<i64> {
    cas.update(&[Read::get(key)], |s| {
        let next = s.get::<Option<i64>>(0)?.unwrap_or(0) + 1;
        Ok(Decision::commit(
            vec![Write::set(key, next.to_string())],
            next,
        ))
    })
    .await
    .unwrap()
}

/// 32 tasks × 200 increments of one counter: the final value equals the number of `Committed`
/// outcomes (conflicts that ran out of attempts are counted apart, and wrote nothing); the
/// aborted `EXEC`s are counted by the abort metric, the outcomes by `redis_atomic_ops_total`.
#[test]
fn counter_race_final_equals_committed() {
    let m = Recorded::new();
    m.block_on(counter_race(&m));
}

async fn counter_race(m: &Recorded) {
    for mode in TOPOLOGIES {
        let aborts_before = m.counter(CAS_ABORTS_TOTAL, &[]);
        let (committed_before, conflicts_before) =
            (updates(m, "committed"), updates(m, "conflict"));
        let env = Arc::new(env(mode, "cas-race", patient()).await);
        let key = env.keyspace.key("cas", 1, "counter", &[]).unwrap();
        let (committed, conflicts) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let tasks: Vec<_> = (0..32)
            .map(|_| {
                let (env, key, committed, conflicts) = (
                    env.clone(),
                    key.clone(),
                    committed.clone(),
                    conflicts.clone(),
                );
                tokio::spawn(async move {
                    let cas = Cas::new(env.client.clone());
                    for _ in 0..200 {
                        match increment(&cas, &key).await {
                            CasOutcome::Committed(_) => committed.fetch_add(1, Ordering::Relaxed),
                            CasOutcome::Conflict { .. } => {
                                conflicts.fetch_add(1, Ordering::Relaxed)
                            }
                            other => panic!("{other:?}"),
                        };
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        let (committed, conflicts) = (
            committed.load(Ordering::Relaxed),
            conflicts.load(Ordering::Relaxed),
        );
        assert_eq!(committed + conflicts, 6400);
        assert!(committed > 0);
        assert_eq!(
            get_i64(&env, &key).await.unwrap_or(0),
            committed as i64,
            "{mode:?}: lost update (conflicts: {conflicts})"
        );
        let aborts = m.counter(CAS_ABORTS_TOTAL, &[]) - aborts_before;
        assert!(aborts >= conflicts, "{mode:?}: aborts not counted");
        assert_eq!(
            updates(m, "committed") - committed_before,
            committed,
            "{mode:?}: commits not counted"
        );
        assert_eq!(
            updates(m, "conflict") - conflicts_before,
            conflicts,
            "{mode:?}: conflicts not counted"
        );
        eprintln!("{mode:?}: {committed} committed, {conflicts} gave up, {aborts} EXEC aborts");
    }
}

/// A watched key changed, deleted, or expired between the read and `EXEC` makes the attempt
/// abort and retry on the new state: never a lost update, and the closure ran twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watched_key_changed_mid_attempt_is_retried() {
    for mode in TOPOLOGIES {
        let env = env(mode, "cas-mid", patient()).await;
        let cas = Cas::new(env.client.clone());
        for (case, expect) in [("changed", 101), ("deleted", 1), ("expired", 1)] {
            let key = env.keyspace.key("cas", 1, case, &[]).unwrap();
            env.raw(redis::cmd("SET").arg(&key).arg(5)).await;
            let interferer = env.client.clone();
            let mut calls = 0;
            let out = cas
                .update(&[Read::get(&key)], |s| {
                    calls += 1;
                    if calls == 1 {
                        interfere(&interferer, case, &key);
                    }
                    let next = s.get::<Option<i64>>(0)?.unwrap_or(0) + 1;
                    Ok(Decision::commit(
                        vec![Write::set(&key, next.to_string())],
                        next,
                    ))
                })
                .await
                .unwrap();
            assert_eq!(out, CasOutcome::Committed(expect), "{mode:?} {case}");
            assert_eq!(calls, 2, "{mode:?} {case}: attempt not retried");
            assert_eq!(get_i64(&env, &key).await, Some(expect), "{mode:?} {case}");
        }
    }
}

/// Another client's change, made while the closure runs (blocking here is fine: the closure
/// is synchronous and the test runtime has two workers).
pub(crate) fn interfere(client: &redis_atomic::Client, case: &str, key: &str) {
    let client = client.clone();
    let (case, key) = (case.to_string(), key.to_string());
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            match case.as_str() {
                "changed" => client.command(redis::cmd("SET").arg(&key).arg(100)).await,
                "deleted" => client.command(redis::cmd("DEL").arg(&key)).await,
                _ => {
                    client
                        .command(redis::cmd("PEXPIRE").arg(&key).arg(1))
                        .await
                        .unwrap();
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    client.command(redis::cmd("EXISTS").arg(&key)).await
                }
            }
            .unwrap();
        });
    })
    .join()
    .unwrap();
}

/// The WATCH quota update: 16 tasks × 10 tries against a limit of 50. Grants never
/// exceed the limit, the counter equals the grants, and the window TTL is set.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quota_update_with_watch() {
    for mode in TOPOLOGIES {
        let env = Arc::new(env(mode, "cas-quota", patient()).await);
        let key = env.keyspace.key("cas", 1, "user-7", &["minute"]).unwrap();
        let granted = Arc::new(AtomicU64::new(0));
        let tasks: Vec<_> = (0..16)
            .map(|_| {
                let (env, key, granted) = (env.clone(), key.clone(), granted.clone());
                tokio::spawn(async move {
                    let cas = Cas::new(env.client.clone())
                        .with_policy(contention(50, Duration::from_secs(10)));
                    for _ in 0..10 {
                        let out = cas
                            .update(&[Read::get(&key)], |s| {
                                let current = s.get::<Option<i64>>(0)?.unwrap_or(0);
                                if current >= 50 {
                                    return Ok(Decision::abort(false));
                                }
                                let writes = vec![
                                    Write::set(&key, (current + 1).to_string()),
                                    Write::expire(&key, Duration::from_secs(60)),
                                ];
                                Ok(Decision::commit(writes, true))
                            })
                            .await
                            .unwrap();
                        if out == CasOutcome::Committed(true) {
                            granted.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        let granted = granted.load(Ordering::Relaxed) as i64;
        assert!(granted <= 50, "{mode:?}: quota exceeded: {granted}");
        assert_eq!(get_i64(&env, &key).await, Some(granted), "{mode:?}");
        let pttl: i64 =
            redis::from_redis_value(env.raw(redis::cmd("PTTL").arg(&key)).await).unwrap();
        assert!(pttl > 0 && pttl <= 60_000, "{mode:?}: window TTL {pttl}");
    }
}

/// The one-script version of setMax (rung 5): never aborts.
const SET_MAX: &str = "#!lua\nlocal cur = tonumber(redis.call('GET', KEYS[1]))\nlocal new = tonumber(ARGV[1])\nif cur == nil or new > cur then redis.call('SET', KEYS[1], ARGV[1]) return 1 end\nreturn 0\n";

/// setMax, via WATCH and via one script, raced by 16 tasks: both end at the maximum
/// of the values whose update completed; only WATCH needed retries.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_max_watch_vs_script() {
    for mode in TOPOLOGIES {
        let env = Arc::new(env(mode, "cas-setmax", patient()).await);
        let watch_key = env.keyspace.key("max", 1, "m", &["watch"]).unwrap();
        let script_key = env.keyspace.key("max", 1, "m", &["script"]).unwrap();
        let completed_max = Arc::new(AtomicU64::new(0));
        let tasks: Vec<_> = (0..16u64)
            .map(|t| {
                let (env, wk, sk, completed_max) = (
                    env.clone(),
                    watch_key.clone(),
                    script_key.clone(),
                    completed_max.clone(),
                );
                tokio::spawn(async move {
                    let cas = Cas::new(env.client.clone());
                    for i in 0..20u64 {
                        let value = (i * 7919 + t * 104_729) % 100_000;
                        let out = cas
                            .update(&[Read::get(&wk)], |s| match s.get::<Option<u64>>(0)? {
                                Some(cur) if cur >= value => Ok(Decision::abort(())),
                                _ => Ok(Decision::commit(
                                    vec![Write::set(&wk, value.to_string())],
                                    (),
                                )),
                            })
                            .await
                            .unwrap();
                        if !matches!(out, CasOutcome::Conflict { .. }) {
                            completed_max.fetch_max(value, Ordering::Relaxed);
                        }
                        env.raw(redis::cmd("EVAL").arg(SET_MAX).arg(1).arg(&sk).arg(value))
                            .await;
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        let expected = (0..16u64)
            .flat_map(|t| (0..20u64).map(move |i| (i * 7919 + t * 104_729) % 100_000))
            .max()
            .unwrap() as i64;
        assert_eq!(
            get_i64(&env, &script_key).await,
            Some(expected),
            "{mode:?}: script"
        );
        assert_eq!(
            get_i64(&env, &watch_key).await,
            Some(completed_max.load(Ordering::Relaxed) as i64),
            "{mode:?}: WATCH"
        );
    }
}

/// Profile + secondary index: 8 tasks change one user's email concurrently; afterwards the
/// user is in exactly the index set of its current email.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn profile_and_secondary_index_stay_consistent() {
    const EMAILS: [&str; 4] = ["a@x", "b@x", "c@x", "d@x"];
    for mode in TOPOLOGIES {
        let env = Arc::new(env(mode, "cas-index", patient()).await);
        let profile = env
            .keyspace
            .key("user", 1, "tenant-1", &["user-9"])
            .unwrap();
        let index = |email: &str| {
            env.keyspace
                .key("user", 1, "tenant-1", &["by-email", email])
                .unwrap()
        };
        let tasks: Vec<_> = (0..8usize)
            .map(|t| {
                let env = env.clone();
                let profile = profile.clone();
                let indexes: Vec<String> = EMAILS.iter().map(|e| index(e)).collect();
                tokio::spawn(async move {
                    let cas = Cas::new(env.client.clone())
                        .with_policy(contention(100, Duration::from_secs(20)));
                    for i in 0..15 {
                        let new = (t + i) % EMAILS.len();
                        let out = cas
                            .update(&[Read::hget(&profile, "email")], |s| {
                                let old: Option<String> = s.get(0)?;
                                let mut writes =
                                    vec![Write::hset(&profile, [("email", EMAILS[new])])];
                                if let Some(old) =
                                    old.and_then(|o| EMAILS.iter().position(|e| *e == o))
                                {
                                    writes.push(Write::srem(&indexes[old], ["user-9"]));
                                }
                                writes.push(Write::sadd(&indexes[new], ["user-9"]));
                                Ok(Decision::commit(writes, ()))
                            })
                            .await
                            .unwrap();
                        assert!(matches!(out, CasOutcome::Committed(())), "{out:?}");
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        let email: String =
            redis::from_redis_value(env.raw(redis::cmd("HGET").arg(&profile).arg("email")).await)
                .unwrap();
        for e in EMAILS {
            let member: bool = redis::from_redis_value(
                env.raw(redis::cmd("SISMEMBER").arg(index(e)).arg("user-9"))
                    .await,
            )
            .unwrap();
            assert_eq!(member, e == email, "{mode:?}: index {e} vs profile {email}");
        }
    }
}

/// Bad input is refused before anything is sent; a closure error is returned as is; and no
/// exit path leaves a watch behind (the next update on the pooled connection commits at once).
#[tokio::test]
async fn bad_input_and_no_watch_left_behind() {
    for mode in TOPOLOGIES {
        let env = env(mode, "cas-bad", patient()).await;
        let cas = Cas::new(env.client.clone()).with_policy(contention(1, Duration::from_secs(5)));
        let a = env.keyspace.key("cas", 1, "a", &[]).unwrap();
        let b = env.keyspace.key("cas", 1, "b", &[]).unwrap();
        let noop = |_: &redis_atomic::cas::Snapshot| Ok(Decision::commit(Vec::new(), ()));
        assert!(matches!(
            cas.update(&[], noop).await,
            Err(Error::BadArgument(_))
        ));
        assert!(matches!(
            cas.update(&[Read::get("")], noop).await,
            Err(Error::BadArgument(_))
        ));
        assert!(matches!(
            cas.update(&[Read::get(&a), Read::get(&b)], noop).await,
            Err(Error::CrossSlot { .. })
        ));
        // Writes in another slot than the reads: refused after the read, the watch released.
        let cross = cas
            .update(&[Read::get(&a)], |_| {
                Ok(Decision::commit(vec![Write::set(&b, "x")], ()))
            })
            .await;
        assert!(matches!(cross, Err(Error::CrossSlot { .. })), "{cross:?}");
        assert_eq!(
            get_i64(&env, &b).await,
            None,
            "{mode:?}: cross-slot write applied"
        );
        let failed: Result<CasOutcome<()>, Error> = cas
            .update(&[Read::get(&a)], |_| {
                Err(Error::BadArgument("closure says no".into()))
            })
            .await;
        assert!(matches!(failed, Err(Error::BadArgument(m)) if m == "closure says no"));
        let bad_write = cas
            .update(&[Read::get(&a)], |_| {
                Ok(Decision::commit(
                    vec![Write::expire(&a, Duration::ZERO)],
                    (),
                ))
            })
            .await;
        assert!(matches!(bad_write, Err(Error::BadArgument(_))));
        // If any of those had left `a` watched on the pooled connection, this change to `a`
        // would abort the next update's EXEC (one attempt allowed: Conflict).
        env.raw(redis::cmd("SET").arg(&a).arg(1)).await;
        let c = env.keyspace.key("cas", 1, "a", &["other"]).unwrap();
        let out = cas
            .update(&[Read::get(&c)], |_| {
                Ok(Decision::commit(vec![Write::set(&c, "1")], ()))
            })
            .await
            .unwrap();
        assert_eq!(
            out,
            CasOutcome::Committed(()),
            "{mode:?}: stale watch aborted EXEC"
        );
        // A read of the wrong type is a typed error.
        let h = env.keyspace.key("cas", 1, "a", &["hash"]).unwrap();
        env.raw(redis::cmd("HSET").arg(&h).arg("f").arg("v")).await;
        let wrong = cas.update(&[Read::get(&h)], noop).await;
        assert!(matches!(wrong, Err(Error::WrongType(_))), "{wrong:?}");
    }
}

/// Clients over a caller's own connection cannot open dedicated connections: a typed error.
#[tokio::test]
async fn caller_connection_is_refused() {
    let server = redis_atomic_testkit::RedisServer::start(Default::default()).unwrap();
    let conn = server
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let client = redis_atomic::Client::from_connection(conn, ClientConfig::default());
    let out = Cas::new(client)
        .update(&[Read::get("k")], |_| Ok(Decision::commit(Vec::new(), ())))
        .await;
    assert!(matches!(out, Err(Error::BadArgument(_))));
}
