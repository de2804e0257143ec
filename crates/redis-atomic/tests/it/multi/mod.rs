//! Atomic multi-key writes (MULTI/EXEC builder), standalone and cluster: observers never see half
//! a batch, TTLs land with the data, cross-slot batches are refused before sending, and a batch
//! whose reply was lost is resent harmlessly.

use crate::common::{env, patient, standalone, Env, Mode};
use redis_atomic::multi::MultiWrite;
use redis_atomic::{ClientConfig, Error, RetryPolicy};
use redis_atomic_testkit::ServerOptions;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

const TOPOLOGIES: [Mode; 2] = [Mode::StandaloneEval, Mode::ClusterEval];

async fn int(env: &Env, cmd: &redis::Cmd) -> i64 {
    redis::from_redis_value(env.raw(cmd).await).unwrap()
}

/// Object + index + TTL: a writer flips a user between two statuses, moving it
/// between two index sets in each batch; an observer reading all three atomically (MULTI/EXEC
/// of reads) always finds the user in exactly the index of its status.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn object_and_index_never_seen_half_written() {
    for mode in TOPOLOGIES {
        let env = Arc::new(env(mode, "multi-index", patient()).await);
        let user = env.keyspace.key("user", 1, "tenant-1", &["123"]).unwrap();
        let idx = |s: &str| {
            env.keyspace
                .key("user", 1, "tenant-1", &["by-status", s])
                .unwrap()
        };
        let (active, inactive) = (idx("ACTIVE"), idx("INACTIVE"));
        let done = Arc::new(AtomicBool::new(false));
        let observed = Arc::new(AtomicU64::new(0));
        let observer = {
            let (env, user, active, inactive, done, observed) = (
                env.clone(),
                user.clone(),
                active.clone(),
                inactive.clone(),
                done.clone(),
                observed.clone(),
            );
            tokio::spawn(async move {
                while !done.load(Ordering::Relaxed) {
                    let mut conn = env.client.dedicated(&user).await.unwrap();
                    let mut pipe = redis::pipe();
                    pipe.cmd("MULTI");
                    pipe.cmd("HGET").arg(&user).arg("status");
                    pipe.cmd("SISMEMBER").arg(&active).arg("123");
                    pipe.cmd("SISMEMBER").arg(&inactive).arg("123");
                    pipe.cmd("EXEC");
                    let replies = conn.pipeline(&pipe).await.unwrap();
                    let (status, in_active, in_inactive): (Option<String>, bool, bool) =
                        redis::from_redis_value(replies.last().unwrap().clone()).unwrap();
                    match status.as_deref() {
                        None => assert!(!in_active && !in_inactive),
                        Some("ACTIVE") => assert!(in_active && !in_inactive, "half a batch seen"),
                        Some(_) => assert!(!in_active && in_inactive, "half a batch seen"),
                    }
                    observed.fetch_add(1, Ordering::Relaxed);
                }
            })
        };
        for i in 0..300 {
            let (status, from, to) = if i % 2 == 0 {
                ("ACTIVE", &inactive, &active)
            } else {
                ("INACTIVE", &active, &inactive)
            };
            MultiWrite::new()
                .hset(&user, [("name", "Ari"), ("status", status)])
                .srem(from, ["123"])
                .sadd(to, ["123"])
                .expire(&user, Duration::from_secs(3600))
                .execute(&env.client)
                .await
                .unwrap();
        }
        done.store(true, Ordering::Relaxed);
        observer.await.unwrap();
        assert!(
            observed.load(Ordering::Relaxed) > 0,
            "{mode:?}: observer never ran"
        );
        let ttl = int(&env, redis::cmd("PTTL").arg(&user)).await;
        assert!(ttl > 0 && ttl <= 3_600_000, "{mode:?}: ttl {ttl}");
    }
}

/// A session hash + the user's session set, each with its TTL, in one batch.
#[tokio::test]
async fn session_and_reverse_index_with_ttls() {
    for mode in TOPOLOGIES {
        let env = env(mode, "multi-session", patient()).await;
        let session = env
            .keyspace
            .key("session", 1, "user-42", &["sess-abc"])
            .unwrap();
        let sessions = env.keyspace.key("session", 1, "user-42", &["all"]).unwrap();
        let ttl = Duration::from_secs(1800);
        let replies = MultiWrite::new()
            .hset(
                &session,
                [
                    ("sessionId", "sess-abc"),
                    ("userId", "user-42"),
                    ("lastSeenAt", "1700000000000"),
                ],
            )
            .expire(&session, ttl)
            .sadd(&sessions, ["sess-abc"])
            .expire(&sessions, ttl + Duration::from_secs(60))
            .execute(&env.client)
            .await
            .unwrap();
        assert_eq!(replies.len(), 4);
        assert_eq!(int(&env, redis::cmd("HLEN").arg(&session)).await, 3);
        assert_eq!(
            int(&env, redis::cmd("SISMEMBER").arg(&sessions).arg("sess-abc")).await,
            1
        );
        let a = int(&env, redis::cmd("PTTL").arg(&session)).await;
        let b = int(&env, redis::cmd("PTTL").arg(&sessions)).await;
        assert!(
            a > 0 && a <= 1_800_000 && b > a && b <= 1_860_000,
            "{mode:?}: {a} {b}"
        );
    }
}

/// Bad batches are typed errors with nothing sent; a runtime type error inside EXEC is reported
/// as `WrongType` (the other writes applied: no rollback, as documented).
#[tokio::test]
async fn bad_batches_are_typed() {
    for mode in TOPOLOGIES {
        let env = env(mode, "multi-bad", patient()).await;
        let a = env.keyspace.key("m", 1, "a", &["1"]).unwrap();
        let b = env.keyspace.key("m", 1, "b", &["1"]).unwrap();
        let client = &env.client;
        assert!(matches!(
            MultiWrite::new().execute(client).await,
            Err(Error::BadArgument(_))
        ));
        let cross = MultiWrite::new()
            .set(&a, "1", None)
            .set(&b, "1", None)
            .execute(client)
            .await;
        assert!(matches!(cross, Err(Error::CrossSlot { .. })), "{cross:?}");
        assert_eq!(
            int(&env, redis::cmd("EXISTS").arg(&a)).await,
            0,
            "{mode:?}: sent anyway"
        );
        let zero = MultiWrite::new()
            .set(&a, "1", Some(Duration::ZERO))
            .execute(client)
            .await;
        assert!(matches!(zero, Err(Error::BadArgument(_))));
        let mut big = MultiWrite::new();
        for _ in 0..=redis_atomic::write::MAX_WRITES {
            big = big.del(&a);
        }
        assert!(matches!(
            big.execute(client).await,
            Err(Error::BadArgument(_))
        ));
        let empty_set = MultiWrite::new()
            .sadd(&a, Vec::<String>::new())
            .execute(client)
            .await;
        assert!(matches!(empty_set, Err(Error::BadArgument(_))));
        assert_eq!(int(&env, redis::cmd("EXISTS").arg(&a)).await, 0);

        let hash = env.keyspace.key("m", 1, "a", &["hash"]).unwrap();
        env.raw(redis::cmd("HSET").arg(&hash).arg("f").arg("v"))
            .await;
        let partial = MultiWrite::new()
            .set(&a, "1", None)
            .sadd(&hash, ["x"])
            .execute(client)
            .await;
        assert!(matches!(partial, Err(Error::WrongType(_))), "{partial:?}");
        assert_eq!(
            int(&env, redis::cmd("EXISTS").arg(&a)).await,
            1,
            "no rollback, as documented"
        );
    }
}

/// A batch whose reply is lost (server stalled past the client timeout) is sent again and
/// applied; the state is what one application leaves.
#[tokio::test]
async fn lost_reply_is_resent_harmlessly() {
    let config = ClientConfig::default()
        .timeout(Duration::from_millis(100))
        .retry(RetryPolicy::new(30, Duration::from_secs(10)));
    let env = standalone("multi-lost", ServerOptions::default(), config).await;
    let set = env.keyspace.key("m", 1, "s", &["members"]).unwrap();
    let obj = env.keyspace.key("m", 1, "s", &["obj"]).unwrap();
    env.client.dedicated(&set).await.unwrap(); // warm the dedicated pool
    let server = env.server.as_ref().unwrap();
    server.pause();
    let pid = server.pid();
    let resume = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        std::process::Command::new("kill")
            .arg("-CONT")
            .arg(pid.to_string())
            .status()
            .unwrap();
    });
    let out = MultiWrite::new()
        .sadd(&set, ["a", "b"])
        .hset(&obj, [("v", "1")])
        .execute(&env.client)
        .await;
    resume.await.unwrap();
    out.unwrap();
    assert_eq!(int(&env, redis::cmd("SCARD").arg(&set)).await, 2);
    assert_eq!(int(&env, redis::cmd("HLEN").arg(&obj)).await, 1);
}
