//! Event dedup on `SET NX PX GET`, standalone and cluster: one first sighting per id under a
//! race, batches, expiry, a lost reply answered the same on retry, typed bad input.

use crate::common::metrics::Recorded;
use crate::common::{env, own_env, patient, Env, Mode};
use redis_atomic::dedup::{Dedup, MAX_BATCH};
use redis_atomic::lease::OwnerToken;
use redis_atomic::{ClientConfig, Error, RetryPolicy};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

const TOPOLOGIES: [Mode; 2] = [Mode::StandaloneEval, Mode::ClusterEval];

fn dedup(env: &Env) -> Dedup {
    Dedup::new(env.client.clone(), env.keyspace.clone())
}

/// `redis_atomic_ops_total` of sightings answered `outcome`.
fn sightings(m: &Recorded, outcome: &str) -> u64 {
    m.counter(
        "redis_atomic_ops_total",
        &[
            ("primitive", "dedup"),
            ("op", "first_seen"),
            ("script", "set_nx_get"),
            ("version", "-"),
            ("outcome", outcome),
        ],
    )
}

/// 100 tasks racing on one event id: exactly one `true`; the answers are counted by outcome.
#[test]
fn hundred_racers_one_first() {
    let m = Recorded::new();
    m.block_on(hundred_racers(&m));
}

async fn hundred_racers(m: &Recorded) {
    for mode in TOPOLOGIES {
        let (firsts_before, duplicates_before) = (sightings(m, "first"), sightings(m, "duplicate"));
        let env = env(mode, "dedup-race", patient()).await;
        let firsts = Arc::new(AtomicU64::new(0));
        let tasks: Vec<_> = (0..100)
            .map(|_| {
                let (d, firsts) = (dedup(&env), firsts.clone());
                tokio::spawn(async move {
                    if d.first_seen("evt-1", Duration::from_secs(60))
                        .await
                        .unwrap()
                    {
                        firsts.fetch_add(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(firsts.load(Ordering::SeqCst), 1, "{mode:?}");
        assert_eq!(sightings(m, "first") - firsts_before, 1, "{mode:?}");
        assert_eq!(
            sightings(m, "duplicate") - duplicates_before,
            99,
            "{mode:?}"
        );
    }
}

/// 8 tasks send the same 50-id batch (ids spread over slots, one repeated inside the batch):
/// each id is `true` for exactly one task, and the repeat never twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_batches_one_first_per_id() {
    for mode in TOPOLOGIES {
        let env = env(mode, "dedup-batch", patient()).await;
        let mut ids: Vec<String> = (0..50).map(|i| format!("evt-{i}")).collect();
        ids.push("evt-7".into());
        let ids = Arc::new(ids);
        let tasks: Vec<_> = (0..8)
            .map(|_| {
                let (d, ids) = (dedup(&env), ids.clone());
                tokio::spawn(async move {
                    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
                    d.first_seen_many(&refs, Duration::from_secs(60))
                        .await
                        .unwrap()
                })
            })
            .collect();
        let mut firsts = vec![0; 51];
        for t in tasks {
            for (i, first) in t.await.unwrap().into_iter().enumerate() {
                firsts[i] += u32::from(first);
            }
        }
        let evt7 = firsts[7] + firsts[50];
        firsts.truncate(50);
        firsts[7] = evt7;
        assert!(firsts.iter().all(|&n| n == 1), "{mode:?}: {firsts:?}");
    }
}

/// The id is remembered for its ttl (set on the key), then forgotten.
#[tokio::test]
async fn remembered_for_ttl_then_forgotten() {
    let env = env(Mode::StandaloneEval, "dedup-ttl", patient()).await;
    let d = dedup(&env);
    assert!(d.first_seen("e", Duration::from_millis(100)).await.unwrap());
    assert!(!d.first_seen("e", Duration::from_millis(100)).await.unwrap());
    let key = d.keys("e").unwrap().seen;
    let pttl: i64 = redis::from_redis_value(env.raw(redis::cmd("PTTL").arg(&key)).await).unwrap();
    assert!(pttl > 0 && pttl <= 100);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(d.first_seen("e", Duration::from_secs(5)).await.unwrap());
}

/// A lost reply (server stalled past the timeout, no client retries): OutcomeUnknown; asking
/// again with the same token says `true`, any other token `false`.
#[tokio::test]
async fn lost_reply_same_token_same_answer() {
    let config = ClientConfig::default()
        .timeout(Duration::from_millis(100))
        .retry(RetryPolicy::none());
    let env = own_env(Mode::StandaloneEval, "dedup-lost", config).await;
    let d = dedup(&env);
    let token = OwnerToken::random();
    let server = env.server.as_ref().unwrap();
    server.pause();
    let r = d.first_seen_as("e", Duration::from_secs(60), &token).await;
    server.resume();
    assert!(matches!(r, Err(Error::OutcomeUnknown { .. })), "{r:?}");
    let key = d.keys("e").unwrap().seen;
    let mut ran = false;
    for _ in 0..200 {
        let n: i64 =
            redis::from_redis_value(env.raw(redis::cmd("EXISTS").arg(&key)).await).unwrap();
        if n == 1 {
            ran = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(ran, "the lost request never ran");
    assert!(d
        .first_seen_as("e", Duration::from_secs(60), &token)
        .await
        .unwrap());
    assert!(!d.first_seen("e", Duration::from_secs(60)).await.unwrap());
}

/// Bad input is typed, nothing sent.
#[tokio::test]
async fn bad_input_is_typed() {
    let env = env(Mode::StandaloneEval, "dedup-bad", patient()).await;
    let d = dedup(&env);
    let ttl = Duration::from_secs(1);
    for r in [
        d.first_seen("", ttl).await,
        d.first_seen("a{b}", ttl).await,
        d.first_seen("e", Duration::ZERO).await,
        d.first_seen("e", Duration::from_secs(31 * 86400)).await,
    ] {
        assert!(matches!(r, Err(Error::BadArgument(_))), "{r:?}");
    }
    let many = vec!["e"; MAX_BATCH + 1];
    assert!(matches!(
        d.first_seen_many(&many, ttl).await,
        Err(Error::BadArgument(_))
    ));
    assert!(matches!(
        d.first_seen_many(&["ok", ""], ttl).await,
        Err(Error::BadArgument(_))
    ));
    assert!(
        d.first_seen("ok", ttl).await.unwrap(),
        "a refused batch recorded an id"
    );
}
