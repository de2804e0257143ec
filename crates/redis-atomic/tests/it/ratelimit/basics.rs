//! Each rate-limit algorithm under real concurrency, in every mode (standalone and cluster ×
//! EVALSHA and FCALL): exact admission counts, bounds across windows, GCRA at high rates, costs.

use crate::common::{env, patient, Env, MODES};
use redis_atomic::ratelimit::{Algorithm, Decision, Limit, Policy, RateLimiter};
use redis_atomic::Error;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const DAY: Duration = Duration::from_secs(24 * 3600);
const T0: u64 = 1_700_000_000_000_000;

/// A limit of `n` per long period: nothing regenerates while a test runs (GCRA and the token
/// bucket regain one unit per 36 s; windows last an hour or 366 days).
fn long_limit(algorithm: Algorithm, n: u64) -> Limit {
    let period = match algorithm {
        Algorithm::FixedWindow | Algorithm::AnchoredWindow | Algorithm::SlidingWindow => 366 * DAY,
        _ => Duration::from_secs(3600),
    };
    Limit::new(algorithm, n, period).unwrap()
}

/// Waits (at most 20 s, practically never) until the server's clock is not within 20 s of the
/// end of a 366-day window, so a fixed window cannot roll over during a test.
async fn clear_of_window_end(env: &Env) {
    let t: Vec<String> = redis::from_redis_value(env.raw(&redis::cmd("TIME")).await).unwrap();
    let now_s = t[0].parse::<u64>().unwrap();
    let left = 366 * DAY.as_secs() - now_s % (366 * DAY.as_secs());
    if left < 20 {
        tokio::time::sleep(Duration::from_secs(left + 1)).await;
    }
}

/// 1000 requests from 32 tasks against a limit of 100 inside one window: exactly 100 admitted,
/// for every algorithm, in every mode (the classic concurrency test, asserting equality, not just
/// ≤).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exactly_the_limit_of_1000_concurrent_requests() {
    for mode in MODES {
        let env = env(mode, "rl-exact", patient()).await;
        clear_of_window_end(&env).await;
        for algorithm in Algorithm::ALL {
            let limiter = RateLimiter::new(
                env.client.clone(),
                env.keyspace.clone(),
                long_limit(algorithm, 100),
            );
            let allowed = Arc::new(AtomicU64::new(0));
            let mut tasks = Vec::new();
            for t in 0..32u64 {
                let (limiter, allowed) = (limiter.clone(), allowed.clone());
                let n = if t < 1000 % 32 {
                    1000 / 32 + 1
                } else {
                    1000 / 32
                };
                tasks.push(tokio::spawn(async move {
                    for _ in 0..n {
                        if limiter.consume("tenant-42", 1).await.unwrap().is_allowed() {
                            allowed.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                }));
            }
            for t in tasks {
                t.await.unwrap();
            }
            assert_eq!(
                allowed.load(Ordering::SeqCst),
                100,
                "{mode:?} {algorithm}: admitted count"
            );
        }
    }
}

/// Phases of 32 concurrent requests (costs 1-3) at a test clock stepping by period/7, for 6
/// periods: no algorithm admits more than it permits in any window, and a fixed window admits
/// exactly its limit in each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn across_windows_never_more_than_permitted() {
    for mode in MODES {
        let env = env(mode, "rl-windows", patient()).await;
        // The anchored window's clock is its key's expiry: ratelimit_anchored.rs.
        for algorithm in Algorithm::ALL.into_iter().filter(|a| a.takes_test_clock()) {
            let mut limit = Limit::new(algorithm, 10, Duration::from_secs(7)).unwrap();
            if algorithm.has_burst() {
                limit = limit.with_burst(5).unwrap();
            }
            let admitted = run_phases(&env, &limit, 42, Duration::from_secs(1)).await;
            check_bounds(&limit, &admitted, mode);
        }
    }
}

/// Sends 32 concurrent requests at each of `phases` instants `step` apart; (time, cost) admitted.
async fn run_phases(env: &Env, limit: &Limit, phases: u64, step: Duration) -> Vec<(u64, u64)> {
    let limiter = RateLimiter::new(env.client.clone(), env.keyspace.clone(), limit.clone());
    let key = format!("phases-{}", limit.algorithm());
    let admitted = Arc::new(Mutex::new(Vec::new()));
    for phase in 0..phases {
        let now = T0 + phase * u64::try_from(step.as_micros()).unwrap();
        let mut tasks = Vec::new();
        for t in 0..32u64 {
            let (limiter, admitted, key) = (limiter.clone(), admitted.clone(), key.clone());
            tasks.push(tokio::spawn(async move {
                let cost = 1 + (t + phase) % 3;
                let v = limiter.consume_at(&key, cost, None, now).await.unwrap();
                if v.decision.is_allowed() {
                    admitted.lock().unwrap().push((now, cost));
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
    }
    let out = admitted.lock().unwrap().clone();
    out
}

fn check_bounds(limit: &Limit, admitted: &[(u64, u64)], mode: crate::common::Mode) {
    let (l, p, b, t) = (
        limit.limit(),
        limit.period_us(),
        limit.burst(),
        limit.interval_us(),
    );
    let sum = |f: &dyn Fn(u64) -> bool| -> u64 {
        admitted
            .iter()
            .filter(|(at, _)| f(*at))
            .map(|(_, c)| c)
            .sum()
    };
    let times: Vec<u64> = admitted.iter().map(|(at, _)| *at).collect();
    let what = format!("{mode:?} {}", limit.algorithm());
    match limit.algorithm() {
        Algorithm::FixedWindow | Algorithm::SlidingWindow => {
            for w in times.iter().map(|at| at / p) {
                let n = sum(&|at| at / p == w);
                assert!(n <= l, "{what}: {n} admitted in window {w}");
                // Costs of 1-3 from 32 requests fill a fixed window to its limit.
                if limit.algorithm() == Algorithm::FixedWindow {
                    assert_eq!(n, l, "{what}: window {w} not filled");
                }
            }
        }
        Algorithm::SlidingLog => {
            for &end in &times {
                let n = sum(&|at| at + p > end && at <= end);
                assert!(n <= l, "{what}: {n} admitted in the period ending {end}");
            }
        }
        algorithm => {
            for &a in &times {
                for &z in times.iter().filter(|&&z| z >= a) {
                    let n = sum(&|at| at >= a && at <= z);
                    let refills = if algorithm == Algorithm::Gcra {
                        (z - a) / t
                    } else {
                        (z - a).div_ceil(t)
                    };
                    assert!(n <= b + refills, "{what}: {n} admitted in [{a}, {z}]");
                }
            }
        }
    }
    assert!(!admitted.is_empty(), "{what}: nothing admitted");
}

/// GCRA at 1 000 000/s (one unit per µs) with burst 10: exactly the burst at once, then exactly
/// one unit per interval: retry_after is one interval, not two, and never zero.
#[tokio::test]
async fn gcra_high_rate_has_no_off_by_one_interval() {
    for mode in MODES {
        let env = env(mode, "rl-gcra", patient()).await;
        for (rate, per) in [
            (1_000_000, Duration::from_secs(1)),
            (100, Duration::from_secs(1)),
        ] {
            let limit = Limit::gcra(rate, per).unwrap().with_burst(10).unwrap();
            let t = limit.interval_us();
            let limiter = RateLimiter::new(env.client.clone(), env.keyspace.clone(), limit);
            let key = format!("gcra-{rate}");
            let count = |now: u64| {
                let limiter = limiter.clone();
                let key = key.clone();
                async move {
                    let mut n = 0;
                    loop {
                        let v = limiter.consume_at(&key, 1, None, now).await.unwrap();
                        match v.decision {
                            Decision::Allowed { remaining, .. } => {
                                n += 1;
                                assert!(remaining < 10);
                            }
                            Decision::Limited { retry_after, .. } => {
                                assert!(retry_after > Duration::ZERO);
                                assert!(retry_after <= Duration::from_micros(t));
                                return n;
                            }
                            _ => unreachable!(),
                        }
                    }
                }
            };
            assert_eq!(count(T0).await, 10, "{mode:?} {rate}/s: burst");
            assert_eq!(count(T0 + t - 1).await, 0, "{mode:?} {rate}/s: early");
            assert_eq!(count(T0 + t).await, 1, "{mode:?} {rate}/s: one interval");
            assert_eq!(count(T0 + 3 * t).await, 2, "{mode:?} {rate}/s: two more");
            assert_eq!(count(T0 + 100 * t).await, 10, "{mode:?} {rate}/s: refilled");
        }
    }
}

/// A cost above the burst is an error, not a wait, and writes nothing; cost 0 is bad input.
#[tokio::test]
async fn cost_above_burst_is_an_error() {
    for mode in MODES {
        let env = env(mode, "rl-cost", patient()).await;
        for algorithm in Algorithm::ALL {
            let mut limit = long_limit(algorithm, 10);
            if algorithm.has_burst() {
                limit = limit.with_burst(4).unwrap();
            }
            let burst = limit.burst();
            let limiter = RateLimiter::new(env.client.clone(), env.keyspace.clone(), limit);
            let r = limiter.consume("k", burst + 1).await;
            assert!(
                matches!(r, Err(Error::CostExceedsBurst { cost, burst: b }) if cost == burst + 1 && b == burst),
                "{mode:?} {algorithm}: {r:?}"
            );
            assert!(matches!(
                limiter.consume("k", 0).await,
                Err(Error::BadArgument(_))
            ));
            for key in limiter.keys("k", None).unwrap().limits {
                let exists = env.raw(redis::cmd("EXISTS").arg(&key)).await;
                assert_eq!(redis::from_redis_value::<i64>(exists).unwrap(), 0);
            }
            assert!(limiter.consume("k", burst).await.unwrap().is_allowed());
        }
    }
}

/// Every admission leaves each limit's state with a TTL covering the decision's reset (until the
/// state stops mattering) plus at most 1 s of slack (and clock granularity): set on a fresh key, extended by later
/// admissions, through the single-limit scripts and the policy script alike. Without a TTL state
/// would leak; with a shorter one a limit would forget what it counted. (The anchored window's
/// TTL is its reset: its expiry is its window.)
#[tokio::test]
async fn state_expires_once_it_stops_mattering() {
    for mode in MODES {
        let env = env(mode, "rl-ttl", patient()).await;
        for algorithm in Algorithm::ALL {
            let limit = Limit::new(algorithm, 10, Duration::from_secs(60)).unwrap();
            let other = Limit::new(algorithm, 20, Duration::from_secs(30)).unwrap();
            let single = RateLimiter::new(env.client.clone(), env.keyspace.clone(), limit.clone());
            let policy = Policy::new(vec![limit, other.named("other").unwrap()]).unwrap();
            let both = RateLimiter::new(env.client.clone(), env.keyspace.clone(), policy);
            for (limiter, key) in [(single, "single"), (both, "policy")] {
                for i in 0..3 {
                    let v = limiter.consume_detailed(key, 2, None).await.unwrap();
                    assert!(v.decision.is_allowed(), "{mode:?} {algorithm} {key}: {v:?}");
                    for (state, status) in limiter
                        .keys(key, None)
                        .unwrap()
                        .limits
                        .iter()
                        .zip(&v.limits)
                    {
                        let pttl = env.raw(redis::cmd("PTTL").arg(state)).await;
                        let pttl = redis::from_redis_value::<i64>(pttl).unwrap();
                        let reset = i64::try_from(status.reset_after.as_millis()).unwrap();
                        // Slack: the script's 1 s, plus up to 3 ms of granularity — a TTL set
                        // at an earlier admission (KEEPTTL since rl_* v5) was rounded up to ms
                        // from the µs TIME, expiry counts whole ms, and reset is truncated.
                        // The anchored window's expiry is its window: its TTL is the reset,
                        // less the time since the decision (bounded here by 1 s).
                        let ok = match algorithm {
                            Algorithm::AnchoredWindow => pttl <= reset && pttl + 1000 >= reset,
                            _ => pttl >= reset && pttl <= reset + 1003,
                        };
                        assert!(
                            ok,
                            "{mode:?} {algorithm} {key} admission {i}: PTTL {pttl} ms, reset {reset} ms"
                        );
                    }
                }
            }
        }
    }
}
