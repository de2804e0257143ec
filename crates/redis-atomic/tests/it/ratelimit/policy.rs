//! Multi-limit policies (all or nothing), retry-safe request ids and bad input, in every mode.

use crate::common::{env, patient, Env, MODES};
use redis_atomic::client::Arg;
use redis_atomic::ratelimit::{Algorithm, Decision, Limit, Policy, RateLimiter};
use redis_atomic::script::registry::{RL_GCRA, RL_POLICY};
use redis_atomic::Error;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

const HOUR: Duration = Duration::from_secs(3600);

/// One limit of each algorithm, named after it, `n` per hour (units regenerate every 360 s at
/// the fastest: nothing does while a test runs).
fn every_algorithm(n: [u64; 6]) -> Policy {
    let limits = Algorithm::ALL
        .iter()
        .zip(n)
        .map(|(&a, n)| Limit::new(a, n, HOUR).unwrap())
        .collect();
    Policy::new(limits).unwrap()
}

/// Every limit's raw state: values and sorted-set members, not TTLs.
async fn snapshot(env: &Env, limiter: &RateLimiter, key: &str) -> Vec<redis::Value> {
    let mut out = Vec::new();
    for k in limiter.keys(key, None).unwrap().limits {
        let t = env.raw(redis::cmd("TYPE").arg(&k)).await;
        let v = match redis::from_redis_value::<String>(t).unwrap().as_str() {
            "zset" => {
                env.raw(
                    redis::cmd("ZRANGE")
                        .arg(&k)
                        .arg(0)
                        .arg(-1)
                        .arg("WITHSCORES"),
                )
                .await
            }
            _ => env.raw(redis::cmd("GET").arg(&k)).await,
        };
        out.push(v);
    }
    out
}

/// 1000 requests from 32 tasks against six limits of every algorithm (the tightest 10): exactly
/// 10 admitted, and every limit was charged exactly 10: no limit over-consumed by refusals of
/// another (node-rate-limiter-flexible #280).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn policy_is_all_or_nothing_under_contention() {
    for mode in MODES {
        let env = env(mode, "rl-policy", patient()).await;
        let limits = [40, 30, 10, 20, 50, 60];
        let limiter = RateLimiter::new(
            env.client.clone(),
            env.keyspace.clone(),
            every_algorithm(limits),
        );
        let allowed = Arc::new(AtomicU64::new(0));
        let mut tasks = Vec::new();
        for t in 0..32 {
            let (limiter, allowed) = (limiter.clone(), allowed.clone());
            tasks.push(tokio::spawn(async move {
                for _ in 0..(1000 / 32 + u64::from(t < 1000 % 32)) {
                    if limiter.consume("acme", 1).await.unwrap().is_allowed() {
                        allowed.fetch_add(1, Ordering::SeqCst);
                    }
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(allowed.load(Ordering::SeqCst), 10, "{mode:?}");
        let v = limiter.consume_detailed("acme", 1, None).await.unwrap();
        assert!(!v.decision.is_allowed());
        for (status, n) in v.limits.iter().zip(limits) {
            assert_eq!(
                status.remaining,
                n - 10,
                "{mode:?}: a limit was over-charged"
            );
        }
        assert!(v.limits[2].retry_after > Duration::ZERO);
    }
}

/// Refused requests leave every limit's stored state byte-for-byte unchanged (a refusal charges
/// nothing: node-rate-limiter-flexible #286), for each algorithm as the refusing one.
#[tokio::test]
async fn refused_requests_change_no_state() {
    for mode in MODES {
        let env = env(mode, "rl-refused", patient()).await;
        for tight in 0..6 {
            let mut n = [50; 6];
            n[tight] = 3;
            let limiter =
                RateLimiter::new(env.client.clone(), env.keyspace.clone(), every_algorithm(n));
            let key = format!("tight-{tight}");
            for _ in 0..3 {
                assert!(limiter.consume(&key, 1).await.unwrap().is_allowed());
            }
            let before = snapshot(&env, &limiter, &key).await;
            for cost in [1, 2, 3, 1] {
                let d = limiter.consume(&key, cost).await.unwrap();
                assert!(matches!(d, Decision::Limited { .. }), "{mode:?} {tight}");
            }
            assert_eq!(
                snapshot(&env, &limiter, &key).await,
                before,
                "{mode:?}: limit {tight} refused but state changed"
            );
        }
    }
}

/// A request id repeated (sequentially and by 32 concurrent senders) is charged once and gets
/// the first decision back; a different id is charged again. The decision is recorded at the
/// request key [`RateLimiter::keys`] names, for the request TTL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_request_id_is_charged_once() {
    for mode in MODES {
        let env = env(mode, "rl-reqid", patient()).await;
        let policy = Policy::new(vec![
            Limit::gcra(100, HOUR).unwrap(),
            Limit::sliding_log(100, HOUR).unwrap(),
        ])
        .unwrap();
        let limiter = RateLimiter::new(env.client.clone(), env.keyspace.clone(), policy);
        let first = limiter.consume_with_id("k", 3, "req-1").await.unwrap();
        let Decision::Allowed {
            remaining: 97,
            reset_after,
        } = first
        else {
            panic!("{mode:?}: {first:?}")
        };
        for _ in 0..5 {
            // The same decision; its reset is counted from now, so it can only be shorter.
            let again = limiter.consume_with_id("k", 3, "req-1").await.unwrap();
            assert!(
                matches!(again, Decision::Allowed { remaining: 97, reset_after: r } if r <= reset_after),
                "{mode:?}: {again:?}"
            );
        }
        let replay = limiter
            .consume_detailed("k", 3, Some("req-1"))
            .await
            .unwrap();
        assert!(replay.replayed && replay.decision.is_allowed());
        let keys = limiter.keys("k", Some("req-1")).unwrap();
        let plain = limiter.keys("k", None).unwrap();
        assert_eq!((keys.limits.len(), &keys.limits), (2, &plain.limits));
        assert_eq!(plain.request, None);
        let request = keys.request.unwrap();
        assert_ne!(
            Some(&request),
            limiter.keys("k", Some("req-2")).unwrap().request.as_ref()
        );
        let pttl = env.raw(redis::cmd("PTTL").arg(&request)).await;
        let pttl = redis::from_redis_value::<i64>(pttl).unwrap();
        let ttl = i64::try_from(limiter.request_ttl().as_millis()).unwrap();
        assert!(
            pttl > 0 && pttl <= ttl + 1001,
            "{mode:?}: record PTTL {pttl} ms"
        );
        let mut tasks = Vec::new();
        for _ in 0..32 {
            let limiter = limiter.clone();
            tasks.push(tokio::spawn(async move {
                limiter.consume_with_id("k", 2, "req-2").await.unwrap()
            }));
        }
        for t in tasks {
            assert!(t.await.unwrap().is_allowed());
        }
        let d = limiter.consume("k", 1).await.unwrap();
        assert!(
            matches!(d, Decision::Allowed { remaining: 94, .. }),
            "{mode:?}: charged {d:?}"
        );
    }
}

/// Bad limits, costs, names, ids and raw script arguments are typed errors; foreign data at a
/// state key is WRONGTYPE and left untouched.
#[tokio::test]
async fn bad_input_is_typed_and_harmless() {
    let s = Duration::from_secs(1);
    for a in Algorithm::ALL {
        assert!(matches!(Limit::new(a, 0, s), Err(Error::BadArgument(_))));
        assert!(matches!(
            Limit::new(a, 1, Duration::ZERO),
            Err(Error::BadArgument(_))
        ));
        assert!(Limit::new(a, 1, Duration::from_micros(999)).is_err());
        assert!(Limit::new(a, 1, Duration::from_secs(367 * 86400)).is_err());
        assert!(Limit::new(a, 1_000_000_001, s).is_err());
        assert!(Limit::new(a, 5, s).unwrap().with_burst(0).is_err());
    }
    assert!(Limit::sliding_log(10_001, s).is_err());
    assert!(Limit::fixed_window(5, s).unwrap().with_burst(10).is_err());
    assert!(Limit::sliding_window(100_000, 366 * 86400 * s).is_err());
    assert!(Limit::gcra(1, 366 * 86400 * s)
        .unwrap()
        .with_burst(1_000)
        .is_err());
    assert!(Limit::gcra(5, s).unwrap().named("a b").is_err());
    assert!(Policy::new(vec![]).is_err());
    let g = Limit::gcra(5, s).unwrap();
    assert!(Policy::new(vec![g.clone(), g.clone()]).is_err());
    assert!(Policy::new(vec![g.clone(); 9]).is_err());
    assert!("leaky-bucket".parse::<Algorithm>().is_err());
    for mode in MODES {
        bad_input(env(mode, "rl-bad", patient()).await).await;
    }
}

async fn bad_input(env: Env) {
    let limiter = RateLimiter::new(
        env.client.clone(),
        env.keyspace.clone(),
        Limit::gcra(5, HOUR).unwrap(),
    );
    assert!(limiter.clone().with_request_ttl(Duration::ZERO).is_err());
    assert!(matches!(
        limiter.consume("", 1).await,
        Err(Error::BadArgument(_))
    ));
    let long_id = "x".repeat(257);
    assert!(matches!(
        limiter.consume_with_id("k", 1, &long_id).await,
        Err(Error::BadArgument(_))
    ));
    // The scripts check again, for callers that bypass the Rust types.
    let keys = limiter.keys("raw", None).unwrap().limits;
    for (i, bad) in [
        (1, "-5"),
        (1, "0"),
        (1, "1.5"),
        (2, "abc"),
        (2, "999"),
        (3, "0"),
        (0, "6"),
        (0, "-1"),
        (4, "soon"), // the test clock
    ] {
        let mut args = ["1", "5", "3600000000", "5", ""];
        args[i] = bad;
        let r = env
            .client
            .call(&RL_GCRA, [&keys[0]], args.map(Into::into))
            .await;
        assert!(
            matches!(r, Err(Error::BadArgument(_))),
            "arg {i} = {bad}: {r:?}"
        );
    }
    // Any request key of the identity: the same slot as its state.
    let req = limiter.keys("raw", Some("id")).unwrap().request.unwrap();
    // rl_policy: an unknown algorithm; a request TTL out of range (checked with a request id).
    for (algorithm, id, ttl) in [("leaky", "", "1000000"), ("gcra", "id", "0")] {
        let args = ["1", id, ttl, "", algorithm, "5", "1000000", "5"].map(Arg::from);
        let r = env.client.call(&RL_POLICY, &[&req, &keys[0]], &args).await;
        assert!(
            matches!(r, Err(Error::BadArgument(_))),
            "{algorithm} {id} {ttl}: {r:?}"
        );
    }
    let exists = env.raw(redis::cmd("EXISTS").arg(&keys[0]).arg(&req)).await;
    assert_eq!(redis::from_redis_value::<i64>(exists).unwrap(), 0);
    // Foreign data at the state key: typed error, data kept.
    let key = &limiter.keys("foreign", None).unwrap().limits[0];
    env.raw(redis::cmd("SET").arg(key).arg("not-a-tat")).await;
    assert!(matches!(
        limiter.consume("foreign", 1).await,
        Err(Error::WrongType(_))
    ));
    let v = env.raw(redis::cmd("GET").arg(key)).await;
    assert_eq!(redis::from_redis_value::<String>(v).unwrap(), "not-a-tat");
    let key = &limiter.keys("hash", None).unwrap().limits[0];
    env.raw(redis::cmd("HSET").arg(key).arg("f").arg("v")).await;
    assert!(matches!(
        limiter.consume("hash", 1).await,
        Err(Error::WrongType(_))
    ));
}
