//! The anchored window, whose clock is its key's expiry on the server, so no test clock drives
//! it: proven here on real time, in every mode — the model's decisions inside one window (single
//! script, policy script, request ids), exactly the limit under concurrency (ratelimit.rs), a
//! refusal that changes neither the count nor the expiry, a window that closes when its key
//! expires and not before, foreign state, and a test clock refused rather than ignored.

use crate::common::{env, patient, Env, MODES};
use redis_atomic::model::ratelimit::PolicyModel;
use redis_atomic::ratelimit::{Algorithm, Decision, Limit, Policy, RateLimiter};
use redis_atomic::script::registry::{RL_ANCHORED_WINDOW, RL_POLICY};
use redis_atomic::{Arg, Error};
use std::time::{Duration, Instant};

const HOUR: Duration = Duration::from_secs(3600);

fn anchored(n: u64, name: &str) -> Limit {
    Limit::anchored_window(n, HOUR)
        .unwrap()
        .named(name)
        .unwrap()
}

/// A small deterministic generator (xorshift), so a failure names its starting state.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

async fn pttl(env: &Env, key: &str) -> i64 {
    redis::from_redis_value(env.raw(redis::cmd("PTTL").arg(key)).await).unwrap()
}

async fn get(env: &Env, key: &str) -> Option<String> {
    redis::from_redis_value(env.raw(redis::cmd("GET").arg(key)).await).unwrap()
}

/// Inside one hour-long window (nothing expires while the test runs) every verdict equals the
/// model's: decision, remaining (overall and per limit), replay; a reset within the window;
/// retry equal to reset. Through the single-limit script and through `rl_policy` (two anchored
/// limits), with repeated request ids.
#[tokio::test]
async fn decisions_match_the_model_inside_a_window() {
    for mode in MODES {
        let env = env(mode, "rl-aw-model", patient()).await;
        let policies = [
            Policy::from(anchored(10, "one")),
            Policy::new(vec![anchored(7, "a"), anchored(11, "b")]).unwrap(),
        ];
        for (p, policy) in policies.into_iter().enumerate() {
            let limiter =
                RateLimiter::new(env.client.clone(), env.keyspace.clone(), policy.clone());
            let ttl = u64::try_from(limiter.request_ttl().as_micros()).unwrap();
            let mut model = PolicyModel::new(policy.clone(), ttl);
            let mut rng = Rng(0x9e37_79b9_7f4a_7c15 + p as u64);
            for step in 0..60 {
                let cost = 1 + rng.below(policy.max_cost().min(4));
                let id = (rng.below(3) == 0).then(|| format!("req-{}", rng.below(4)));
                let lua = limiter
                    .consume_detailed(&format!("who-{p}"), cost, id.as_deref())
                    .await
                    .unwrap();
                let expected = model.consume(1_700_000_000_000_000, cost, id.as_deref());
                let what = format!("{mode:?} policy {p} step {step} cost {cost} id {id:?}");
                assert_eq!(lua.replayed, expected.replayed, "{what}");
                assert_eq!(
                    lua.decision.is_allowed(),
                    expected.decision.is_allowed(),
                    "{what}"
                );
                let remaining = |v: &redis_atomic::ratelimit::Verdict| -> Vec<u64> {
                    v.limits.iter().map(|l| l.remaining).collect()
                };
                assert_eq!(remaining(&lua), remaining(&expected), "{what}");
                match lua.decision {
                    Decision::Allowed {
                        remaining,
                        reset_after,
                    } => {
                        let Decision::Allowed { remaining: m, .. } = expected.decision else {
                            unreachable!()
                        };
                        assert_eq!(remaining, m, "{what}");
                        assert!(
                            reset_after > Duration::ZERO && reset_after <= HOUR,
                            "{what}"
                        );
                    }
                    Decision::Limited {
                        retry_after,
                        reset_after,
                    } => {
                        assert!(
                            retry_after > Duration::ZERO && retry_after <= HOUR,
                            "{what}"
                        );
                        assert!(reset_after <= HOUR, "{what}");
                    }
                    _ => unreachable!(),
                }
            }
        }
    }
}

/// A refusal (the single script counts first, then takes the charge back) leaves the count as
/// it was and never extends the window.
#[tokio::test]
async fn a_refusal_changes_neither_count_nor_expiry() {
    for mode in MODES {
        let env = env(mode, "rl-aw-refused", patient()).await;
        let limiter = RateLimiter::new(env.client.clone(), env.keyspace.clone(), anchored(3, "x"));
        let key = limiter.keys("k", None).unwrap().limits.remove(0);
        for _ in 0..3 {
            assert!(limiter.consume("k", 1).await.unwrap().is_allowed());
        }
        let (count, ttl) = (get(&env, &key).await, pttl(&env, &key).await);
        assert_eq!(count.as_deref(), Some("3"), "{mode:?}");
        for cost in [1, 2, 3, 1] {
            let d = limiter.consume("k", cost).await.unwrap();
            let Decision::Limited {
                retry_after,
                reset_after,
            } = d
            else {
                panic!("{mode:?}: {d:?}")
            };
            assert_eq!(retry_after, reset_after, "{mode:?}");
        }
        assert_eq!(get(&env, &key).await, count, "{mode:?}");
        let after = pttl(&env, &key).await;
        assert!(
            after > 0 && after <= ttl,
            "{mode:?}: {ttl} ms, then {after} ms"
        );
    }
}

/// A window of 250 ms: its limit is admitted at once, nothing more until its key expires, and the
/// first admission after that opens a new window (remaining limit − 1) no sooner than 250 ms
/// after the first request was sent.
#[tokio::test]
async fn the_window_closes_when_its_key_expires() {
    let period = Duration::from_millis(250);
    for mode in MODES {
        let env = env(mode, "rl-aw-expiry", patient()).await;
        let limit = Limit::anchored_window(3, period).unwrap();
        let limiter = RateLimiter::new(env.client.clone(), env.keyspace.clone(), limit);
        let sent = Instant::now();
        for i in 0..3 {
            let d = limiter.consume("k", 1).await.unwrap();
            assert!(
                matches!(d, Decision::Allowed { remaining, reset_after } if remaining == 2 - i && reset_after <= period),
                "{mode:?} #{i}: {d:?}"
            );
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        let reopened = loop {
            let d = limiter.consume("k", 1).await.unwrap();
            match d {
                Decision::Allowed { remaining, .. } => break (remaining, sent.elapsed()),
                Decision::Limited { retry_after, .. } => {
                    assert!(retry_after <= period, "{mode:?}: {d:?}");
                    assert!(Instant::now() < deadline, "{mode:?}: never reopened");
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                _ => unreachable!(),
            }
        };
        assert_eq!(
            reopened.0, 2,
            "{mode:?}: a new window counts from its first request"
        );
        assert!(
            reopened.1 >= period - Duration::from_millis(1),
            "{mode:?}: reopened after {:?}",
            reopened.1
        );
    }
}

/// A counter found without expiry (not written by us, or persisted) gets a whole window and
/// keeps its count; foreign data is WRONGTYPE and kept; a test clock is refused, by the
/// library before sending and by both scripts for callers that bypass it, writing nothing.
#[tokio::test]
async fn foreign_state_and_test_clocks_are_refused_or_healed() {
    for mode in MODES {
        let env = env(mode, "rl-aw-foreign", patient()).await;
        let limiter = RateLimiter::new(env.client.clone(), env.keyspace.clone(), anchored(5, "x"));
        let key = limiter.keys("bare", None).unwrap().limits.remove(0);
        env.raw(redis::cmd("SET").arg(&key).arg("3")).await;
        let d = limiter.consume("bare", 1).await.unwrap();
        assert!(
            matches!(d, Decision::Allowed { remaining: 1, .. }),
            "{mode:?}: {d:?}"
        );
        let ttl = pttl(&env, &key).await;
        assert!(ttl > 0 && ttl <= 3_600_000, "{mode:?}: {ttl}");

        let key = limiter.keys("text", None).unwrap().limits.remove(0);
        env.raw(redis::cmd("SET").arg(&key).arg("not-a-count"))
            .await;
        let r = limiter.consume("text", 1).await;
        assert!(matches!(r, Err(Error::WrongType(_))), "{mode:?}: {r:?}");
        assert_eq!(get(&env, &key).await.as_deref(), Some("not-a-count"));

        let mixed = Policy::new(vec![anchored(5, "x"), Limit::gcra(5, HOUR).unwrap()]).unwrap();
        let mixed = RateLimiter::new(env.client.clone(), env.keyspace.clone(), mixed);
        for l in [&limiter, &mixed] {
            let r = l.consume_at("clock", 1, None, 1_700_000_000_000_000).await;
            assert!(matches!(r, Err(Error::BadArgument(_))), "{mode:?}: {r:?}");
        }
        let keys = mixed.keys("clock", Some("id")).unwrap();
        // The single script takes no clock; it refuses what the types would (0 ms, cost > limit).
        for bad in [
            ["1", "5", "0"],
            ["6", "5", "1000"],
            ["1", "0", "1000"],
            ["1", "5", "x"],
        ] {
            let r = env
                .client
                .call(&RL_ANCHORED_WINDOW, [&keys.limits[0]], bad.map(Arg::from))
                .await;
            assert!(
                matches!(r, Err(Error::BadArgument(_))),
                "{mode:?} {bad:?}: {r:?}"
            );
        }
        let req = keys.request.unwrap();
        let args = [
            "1",
            "",
            "1000000",
            "1700000000000000",
            "aw",
            "5",
            "3600000000",
            "5",
        ];
        let r = env
            .client
            .call(&RL_POLICY, &[&req, &keys.limits[0]], &args.map(Arg::from))
            .await;
        assert!(matches!(r, Err(Error::BadArgument(_))), "{mode:?}: {r:?}");
        for key in keys.limits {
            let exists = env.raw(redis::cmd("EXISTS").arg(&key)).await;
            assert_eq!(
                redis::from_redis_value::<i64>(exists).unwrap(),
                0,
                "{mode:?}"
            );
        }
        assert!(!Algorithm::AnchoredWindow.takes_test_clock());
    }
}
