//! Quotas and counters in every mode: bounds under concurrency, TTL set once and extended only
//! forward, monotonic max, batch "ZADD unless smaller", bad input.

use crate::common::metrics::Recorded;
use crate::common::{env, patient, Env, MODES};
use redis_atomic::quota::{Bounded, Bounds, Quotas, Raise};
use redis_atomic::script::registry::QUOTA_ADD;
use redis_atomic::Error;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn quotas(env: &Env) -> Quotas {
    Quotas::new(env.client.clone(), env.keyspace.clone())
}

async fn pttl(env: &Env, key: &str) -> i64 {
    redis::from_redis_value(env.raw(redis::cmd("PTTL").arg(key)).await).unwrap()
}

/// 32 tasks add 1-5 (then refund 1-5) against [0, 100]: no reply and no final value leaves the
/// bounds, and the final value is exactly the sum of the applied deltas (refusals change nothing).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bounded_counter_never_leaves_its_bounds() {
    for mode in MODES {
        let env = env(mode, "quota-bounds", patient()).await;
        let q = quotas(&env);
        let bounds = Bounds::up_to(100).unwrap();
        let applied = Arc::new(AtomicI64::new(0));
        for sign in [1, -1] {
            let mut tasks = Vec::new();
            for t in 0..32i64 {
                let (q, applied) = (q.clone(), applied.clone());
                tasks.push(tokio::spawn(async move {
                    for i in 0..20 {
                        let delta = sign * (1 + (t + i) % 5);
                        match q.add("c", delta, bounds, None).await.unwrap() {
                            Bounded::Applied { value } => {
                                assert!((0..=100).contains(&value), "{value}");
                                applied.fetch_add(delta, Ordering::SeqCst);
                            }
                            Bounded::Refused { value } => {
                                assert!((0..=100).contains(&value), "{value}");
                                assert!(!(0..=100).contains(&(value + delta)));
                            }
                            _ => unreachable!(),
                        }
                    }
                }));
            }
            for t in tasks {
                t.await.unwrap();
            }
            let value = q.get("c").await.unwrap();
            assert_eq!(
                value,
                applied.load(Ordering::SeqCst),
                "{mode:?}: lost or phantom add"
            );
            assert!((0..=100).contains(&value), "{mode:?}: {value}");
        }
        // A refund larger than what was used stops at zero.
        q.add("r", 3, bounds, None).await.unwrap();
        assert_eq!(
            q.add_clamped("r", -5, bounds, None).await.unwrap(),
            Bounded::Applied { value: 0 }
        );
    }
}

/// The TTL given with the first add is never extended by later adds; `expire_once` sets a TTL
/// only where there is none; `extend_ttl` only moves expiry later.
#[tokio::test]
async fn ttl_set_once_and_extended_only_forward() {
    for mode in MODES {
        let env = env(mode, "quota-ttl", patient()).await;
        let q = quotas(&env);
        let b = Bounds::up_to(1000).unwrap();
        let key = q.keys("daily", None).unwrap().value;
        q.add("daily", 1, b, Some(Duration::from_secs(60)))
            .await
            .unwrap();
        q.add("daily", 1, b, Some(Duration::from_secs(3600)))
            .await
            .unwrap();
        let t = pttl(&env, &key).await;
        assert!(t > 0 && t <= 60_000, "{mode:?}: ttl stretched to {t}");
        assert!(!q
            .expire_once("daily", Duration::from_secs(3600))
            .await
            .unwrap());
        assert!(!q
            .extend_ttl("daily", Duration::from_secs(10))
            .await
            .unwrap());
        assert!(pttl(&env, &key).await > 10_000, "{mode:?}: ttl shortened");
        assert!(q
            .extend_ttl("daily", Duration::from_secs(600))
            .await
            .unwrap());
        assert!(pttl(&env, &key).await > 60_000);
        // No TTL yet: expire_once sets it; extend_ttl leaves a persistent key persistent.
        q.add("plain", 1, b, None).await.unwrap();
        let plain = q.keys("plain", None).unwrap().value;
        assert!(!q.extend_ttl("plain", Duration::from_secs(5)).await.unwrap());
        assert_eq!(pttl(&env, &plain).await, -1);
        assert!(q
            .expire_once("plain", Duration::from_secs(5))
            .await
            .unwrap());
        assert!(pttl(&env, &plain).await > 0);
    }
}

/// 32 tasks raise one value concurrently: it ends at the largest candidate, and every reply is
/// at least its candidate (a max that never decreases; no GETSET loop).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn monotonic_max_never_decreases() {
    for mode in MODES {
        let env = env(mode, "quota-max", patient()).await;
        let q = quotas(&env);
        let mut tasks = Vec::new();
        for t in 0..32i64 {
            let q = q.clone();
            tasks.push(tokio::spawn(async move {
                for i in 0..20i64 {
                    let candidate = (t * 7919 + i * 104_729) % 10_007;
                    match q.raise("hwm", candidate).await.unwrap() {
                        Raise::Raised { value } => assert_eq!(value, candidate),
                        Raise::Kept { value } => assert!(value >= candidate),
                        _ => unreachable!(),
                    }
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        let expected = (0..32i64)
            .flat_map(|t| (0..20i64).map(move |i| (t * 7919 + i * 104_729) % 10_007))
            .max()
            .unwrap();
        assert_eq!(q.get("hwm").await.unwrap(), expected, "{mode:?}");
        assert_eq!(
            q.raise("hwm", 5).await.unwrap(),
            Raise::Kept { value: expected }
        );
    }
}

/// `ZADD GT CH`: new members are added, larger scores raise, smaller ones never lower.
#[tokio::test]
async fn batch_zadd_unless_smaller() {
    for mode in MODES {
        let env = env(mode, "quota-zgt", patient()).await;
        let q = quotas(&env);
        let set = q.keys("last-seen", None).unwrap().value;
        assert_eq!(
            q.add_unless_smaller("last-seen", &[(100, b"u1"), (50, b"u2")])
                .await
                .unwrap(),
            2
        );
        let changed = q
            .add_unless_smaller("last-seen", &[(90, b"u1"), (70, b"u2"), (10, b"u3")])
            .await
            .unwrap();
        assert_eq!(changed, 2, "{mode:?}: u2 raised and u3 added, u1 kept");
        let v = env
            .raw(
                redis::cmd("ZRANGE")
                    .arg(&set)
                    .arg(0)
                    .arg(-1)
                    .arg("WITHSCORES"),
            )
            .await;
        let pairs: Vec<(String, i64)> = redis::from_redis_value(v).unwrap();
        assert_eq!(
            pairs,
            vec![("u3".into(), 10), ("u2".into(), 70), ("u1".into(), 100)]
        );
    }
}

/// Bad bounds, deltas, TTLs and raw script arguments are typed errors; foreign data is
/// WRONGTYPE and left untouched.
#[tokio::test]
async fn bad_input_is_typed_and_harmless() {
    assert!(Bounds::new(5, 1).is_err());
    assert!(Bounds::new(0, 1 << 53).is_err());
    for mode in MODES {
        let env = env(mode, "quota-bad", patient()).await;
        let q = quotas(&env);
        let b = Bounds::up_to(10).unwrap();
        assert!(matches!(
            q.add("c", 1 << 53, b, None).await,
            Err(Error::BadArgument(_))
        ));
        assert!(matches!(
            q.add("c", 1, b, Some(Duration::ZERO)).await,
            Err(Error::BadArgument(_))
        ));
        assert!(matches!(
            q.add("", 1, b, None).await,
            Err(Error::BadArgument(_))
        ));
        assert!(matches!(
            q.add_unless_smaller("s", &[]).await,
            Err(Error::BadArgument(_))
        ));
        let key = q.keys("raw", None).unwrap().value;
        for args in [
            ["x", "0", "10", "refuse", "0"],
            ["1", "5", "1", "refuse", "0"],
            ["1", "0", "10", "maybe", "0"],
            ["1", "0", "10", "clamp", "-1"],
        ] {
            let r = env
                .client
                .call(&QUOTA_ADD, [&key], args.map(Into::into))
                .await;
            assert!(matches!(r, Err(Error::BadArgument(_))), "{args:?}: {r:?}");
        }
        let foreign = q.keys("foreign", None).unwrap().value;
        env.raw(redis::cmd("SET").arg(&foreign).arg("12abc")).await;
        assert!(matches!(
            q.add("foreign", 1, b, None).await,
            Err(Error::WrongType(_))
        ));
        assert!(matches!(
            q.raise("foreign", 1).await,
            Err(Error::WrongType(_))
        ));
        let v = env.raw(redis::cmd("GET").arg(&foreign)).await;
        assert_eq!(redis::from_redis_value::<String>(v).unwrap(), "12abc");
    }
}

/// `i64::MIN` (whose `abs()` once overflowed: a panic in debug, a skipped bound check and
/// an out-of-bound `ZADD GT` score in release) and every magnitude past 2^53 − 1 are refused with
/// a typed error before anything is sent: the keys stay absent.
#[tokio::test]
async fn magnitudes_past_the_bound_are_refused_before_sending() {
    let env = env(MODES[0], "quota-min", patient()).await;
    let q = quotas(&env);
    let b = Bounds::new(-10, 10).unwrap();
    let edge = redis_atomic::quota::MAX_VALUE;
    for n in [i64::MIN, i64::MIN + 1, -edge - 1, edge + 1, i64::MAX] {
        let results = [
            q.add("c", n, b, None).await.map(|_| ()),
            q.add_clamped("c", n, b, None).await.map(|_| ()),
            q.raise("c", n).await.map(|_| ()),
            q.add_unless_smaller("s", &[(1, b"ok"), (n, b"m")])
                .await
                .map(|_| ()),
        ];
        for r in results {
            assert!(matches!(r, Err(Error::BadArgument(_))), "{n}: {r:?}");
        }
    }
    for name in ["c", "s"] {
        let key = q.keys(name, None).unwrap().value;
        let exists = env.raw(redis::cmd("EXISTS").arg(&key)).await;
        assert_eq!(redis::from_redis_value::<i64>(exists).unwrap(), 0, "{name}");
    }
    // The bound itself is accepted.
    assert!(q.raise("edge", -edge).await.is_ok());
    assert!(q
        .add_unless_smaller("edge-set", &[(-edge, b"m")])
        .await
        .is_ok());
}

/// `redis_atomic_ops_total` for quota operation `op` sent as `script`, outcome `ok`, version `-`.
fn ops(m: &Recorded, op: &str, script: &str) -> u64 {
    let with = [
        ("primitive", "quota"),
        ("op", op),
        ("script", script),
        ("version", "-"),
        ("outcome", "ok"),
    ];
    m.counter(redis_atomic::observe::OPS_TOTAL, &with)
}

/// Quota's own commands run on the client's one call path: each is an observed operation of
/// primitive `quota`, named by its op and (lower-case) command.
#[tokio::test]
async fn own_commands_are_observed_operations() {
    let m = Recorded::new();
    let _recording = m.on_this_thread();
    let env = env(MODES[0], "quota-observed", patient()).await;
    let q = quotas(&env);
    let cases = [
        ("get", "get"),
        ("expire_once", "pexpire_nx"),
        ("extend_ttl", "pexpire_gt"),
        ("add_unless_smaller", "zadd_gt_ch"),
    ];
    let before = cases.map(|(op, script)| ops(&m, op, script));
    let b = Bounds::up_to(10).unwrap();
    q.add("seen", 1, b, None).await.unwrap();
    assert_eq!(q.get("seen").await.unwrap(), 1);
    assert!(q
        .expire_once("seen", Duration::from_secs(60))
        .await
        .unwrap());
    assert!(q
        .extend_ttl("seen", Duration::from_secs(120))
        .await
        .unwrap());
    let member: &[u8] = b"m";
    assert_eq!(
        q.add_unless_smaller("set", &[(5, member)]).await.unwrap(),
        1
    );
    for (i, (op, script)) in cases.into_iter().enumerate() {
        assert!(
            ops(&m, op, script) > before[i],
            "quota {op} ({script}) not counted"
        );
    }
}
