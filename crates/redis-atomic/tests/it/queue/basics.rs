//! The queue's behaviour in every mode (standalone and cluster × EVALSHA and FCALL): idempotent
//! enqueue, due-time order, fences, the job handle as a lease, dead letters, reaping, bad input.

use crate::common::{env, patient, queue, Env, MODES};
use redis_atomic::lease::{Fence, OwnerToken};
use redis_atomic::queue::{
    Ack, Claim, Enqueue, Job, JobState, JobStatus, Nack, Queue, QueueConfig, Requeue, RunAt,
};
use redis_atomic::script::registry::{QUEUE_CLAIM, QUEUE_ENQUEUE};
use redis_atomic::Error;
use std::num::NonZeroU32;
use std::time::{Duration, SystemTime};

pub(super) fn worker(name: &str) -> OwnerToken {
    OwnerToken::new(name).unwrap()
}

pub(super) async fn claim(q: &Queue, name: &str, vis: Duration, n: usize) -> Vec<Job> {
    match q.claim(&worker(name), vis, n).await.unwrap() {
        Claim::Claimed(jobs) => jobs,
        Claim::Empty { .. } | Claim::Idle => Vec::new(),
        other => panic!("{other:?}"),
    }
}

/// Re-enqueueing an id never duplicates it (queued, running or acked); payloads are binary-safe;
/// a repeated ack of the same lease answers Acked again.
#[tokio::test]
async fn enqueue_is_idempotent_and_binary_safe() {
    for mode in MODES {
        let env = env(mode, "queue-idem", patient()).await;
        let q = queue(&env, "jobs", QueueConfig::default());
        let payload: Vec<u8> = (0..=255u8).chain([0, b'\n', b':']).collect();
        assert!(matches!(
            q.enqueue("j1", &payload, RunAt::Now).await.unwrap(),
            Enqueue::Enqueued { .. }
        ));
        let again = q.enqueue("j1", b"other", RunAt::Now).await.unwrap();
        assert_eq!(
            again,
            Enqueue::Exists {
                status: JobStatus::Queued
            }
        );
        let mut jobs = claim(&q, "w", Duration::from_secs(30), 10).await;
        assert_eq!(jobs.len(), 1, "{mode:?}: duplicate enqueued");
        assert_eq!(jobs[0].payload(), payload, "{mode:?}: payload changed");
        assert_eq!(jobs[0].deliveries(), 1);
        assert_eq!(
            q.enqueue("j1", b"x", RunAt::Now).await.unwrap(),
            Enqueue::Exists {
                status: JobStatus::Running
            }
        );
        let job = jobs.remove(0);
        let (token, fence) = (job.token().clone(), job.fence());
        assert_eq!(job.ack().await.unwrap(), Ack::Acked);
        // The handle is consumed: the repeat goes by parts, with what was read before.
        assert_eq!(q.ack("j1", &token, fence).await.unwrap(), Ack::Acked);
        assert_eq!(
            q.enqueue("j1", b"x", RunAt::Now).await.unwrap(),
            Enqueue::Exists {
                status: JobStatus::Acked
            }
        );
        assert!(claim(&q, "w", Duration::from_secs(30), 10).await.is_empty());
        let stats = q.stats().await.unwrap();
        assert_eq!((stats.ready, stats.running, stats.acked), (0, 0, 1));
        assert!(
            matches!(q.inspect("j1").await.unwrap(), JobState::Acked { fence: f } if f == fence)
        );
    }
}

/// Jobs come out in due-time order, never before their `run_at` (server clock), and a job due
/// in a minute is not claimable now; `Empty` tells when the next one is due.
#[tokio::test]
async fn delayed_jobs_wait_and_come_in_due_order() {
    for mode in MODES {
        let env = env(mode, "queue-delay", patient()).await;
        let q = queue(&env, "jobs", QueueConfig::default());
        let now = SystemTime::now();
        let ago = |ms: u64| RunAt::At(now - Duration::from_millis(ms));
        for (id, at) in [
            ("c", ago(100)),
            ("a", ago(300)),
            ("d", RunAt::Now),
            ("b", ago(200)),
        ] {
            q.enqueue(id, id.as_bytes(), at).await.unwrap();
        }
        q.enqueue("later", b"", RunAt::After(Duration::from_secs(60)))
            .await
            .unwrap();
        let ids: Vec<String> = claim(&q, "w", Duration::from_secs(30), 100)
            .await
            .into_iter()
            .map(|j| j.id().to_string())
            .collect();
        assert_eq!(ids, ["a", "b", "c", "d"], "{mode:?}: not in due order");
        let due_at = SystemTime::now() + Duration::from_millis(300);
        let due_ms = due_at.duration_since(SystemTime::UNIX_EPOCH).unwrap();
        q.enqueue("soon", b"", RunAt::At(due_at)).await.unwrap();
        let mut soon = None;
        for _ in 0..500 {
            match q
                .claim(&worker("w"), Duration::from_secs(30), 100)
                .await
                .unwrap()
            {
                Claim::Claimed(jobs) => {
                    soon = Some(jobs);
                    break;
                }
                // Not idle: "later" is queued, so the queue says when to claim again.
                Claim::Empty { retry_after } => {
                    assert!(retry_after <= Duration::from_secs(60), "{retry_after:?}");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                other => panic!("{other:?}"),
            }
        }
        let soon = soon.unwrap();
        assert_eq!(
            soon.len(),
            1,
            "{mode:?}: the job due in a minute was claimed"
        );
        assert_eq!(soon[0].id(), "soon");
        assert!(
            u128::from(soon[0].claimed_at_ms()) >= due_ms.as_millis(),
            "{mode:?}: claimed before run_at"
        );
        assert!(matches!(
            q.inspect("later").await.unwrap(),
            JobState::Queued { due_in, .. } if due_in > Duration::from_secs(30)
        ));
    }
}

/// A job nacked `max_deliveries` times goes to the dead letters with its last error; a lease
/// that expires on the last delivery does too (via reap); requeueing resets its deliveries and
/// keeps fences increasing.
#[tokio::test]
async fn dead_letters_after_max_deliveries() {
    for mode in MODES {
        let env = env(mode, "queue-dlq", patient()).await;
        let config = QueueConfig::default().max_deliveries(NonZeroU32::new(3).unwrap());
        let q = queue(&env, "jobs", config);
        q.enqueue("poison", b"p", RunAt::Now).await.unwrap();
        q.enqueue("sleepy", b"s", RunAt::After(Duration::from_secs(3600)))
            .await
            .unwrap();
        let mut last = Fence(0);
        for n in 1..=3 {
            let job = claim(&q, "w", Duration::from_secs(30), 5).await.remove(0);
            assert!(job.fence() > last);
            last = job.fence();
            assert_eq!(job.deliveries(), n);
            let error = format!("boom {n}");
            let out = job.nack(Duration::ZERO, &error);
            let want = if n < 3 {
                Nack::Retrying {
                    retry_after: Duration::ZERO,
                }
            } else {
                Nack::Dead
            };
            assert_eq!(out.await.unwrap(), want, "{mode:?}");
        }
        assert!(claim(&q, "w", Duration::from_secs(30), 5).await.is_empty());
        let page = q.dead_letters(0, 10).await.unwrap();
        assert_eq!(page.total, 1);
        assert_eq!(page.letters[0].id, "poison");
        assert_eq!(page.letters[0].deliveries, 3);
        assert_eq!(page.letters[0].error, "boom 3");
        assert_eq!(
            q.requeue_dead("poison", Duration::ZERO).await.unwrap(),
            Requeue::Requeued
        );
        assert_eq!(
            q.requeue_dead("poison", Duration::ZERO).await.unwrap(),
            Requeue::NotDead
        );
        let job = claim(&q, "w", Duration::from_millis(50), 5).await.remove(0);
        assert_eq!(job.deliveries(), 1);
        assert!(
            job.fence() > last,
            "{mode:?}: fence went back after requeue"
        );
        // Expiry path: two more deliveries that time out, then reap buries it.
        for _ in 0..2 {
            tokio::time::sleep(Duration::from_millis(120)).await;
            let r = q.reap(10).await.unwrap();
            assert_eq!((r.requeued, r.dead), (1, 0));
            assert_eq!(claim(&q, "w", Duration::from_millis(50), 5).await.len(), 1);
        }
        tokio::time::sleep(Duration::from_millis(120)).await;
        let r = q.reap(10).await.unwrap();
        assert_eq!((r.requeued, r.dead), (0, 1), "{mode:?}");
        match q.inspect("poison").await.unwrap() {
            JobState::Dead { deliveries, error } => {
                assert_eq!(deliveries, 3);
                assert!(error.contains("lease expired"), "{error}");
            }
            other => panic!("{mode:?}: {other:?}"),
        }
        let stats = q.stats().await.unwrap();
        assert_eq!((stats.dead, stats.scheduled, stats.running), (1, 1, 0));
    }
}

/// Reap returns at most `limit` expired leases per call, and claim returns expired leases by
/// itself (bounded by max_jobs).
#[tokio::test]
async fn expired_leases_return_bounded() {
    for mode in MODES {
        let env = env(mode, "queue-reap", patient()).await;
        let q = queue(&env, "jobs", QueueConfig::default());
        for i in 0..5 {
            q.enqueue(&format!("j{i}"), b"", RunAt::Now).await.unwrap();
        }
        assert_eq!(claim(&q, "a", Duration::from_millis(50), 10).await.len(), 5);
        tokio::time::sleep(Duration::from_millis(150)).await;
        assert_eq!(q.stats().await.unwrap().expired, 5);
        assert_eq!(q.reap(2).await.unwrap().requeued, 2, "{mode:?}");
        let stats = q.stats().await.unwrap();
        assert_eq!((stats.ready, stats.running), (2, 3));
        // A claim of 1 reaps at most 1 more and claims the earliest due.
        let got = claim(&q, "b", Duration::from_secs(30), 1).await;
        assert_eq!(got.len(), 1);
        let stats = q.stats().await.unwrap();
        assert_eq!((stats.ready, stats.running, stats.expired), (2, 3, 2));
        assert_eq!(claim(&q, "b", Duration::from_secs(30), 10).await.len(), 4);
    }
}

/// Bad input is a typed error, never a panic, and moves nothing; the scripts check too.
#[tokio::test]
async fn bad_input_is_typed_and_harmless() {
    for mode in MODES {
        bad_input(env(mode, "queue-bad", patient()).await).await;
    }
}

async fn bad_input(env: Env) {
    let q = queue(&env, "jobs", QueueConfig::default().max_payload_bytes(16));
    let vis = Duration::from_secs(1);
    let bad = |r: Result<_, Error>| matches!(r, Err(Error::BadArgument(_)));
    assert!(bad(q.enqueue("", b"", RunAt::Now).await.map(drop)));
    assert!(bad(q
        .enqueue(&"x".repeat(257), b"", RunAt::Now)
        .await
        .map(drop)));
    assert!(bad(q.enqueue("j", &[0; 17], RunAt::Now).await.map(drop)));
    let year = Duration::from_secs(366 * 24 * 3600);
    assert!(bad(q.enqueue("j", b"", RunAt::After(year)).await.map(drop)));
    let w = worker("w");
    assert!(bad(q.claim(&w, Duration::ZERO, 1).await.map(drop)));
    assert!(bad(q
        .claim(&w, Duration::from_micros(10), 1)
        .await
        .map(drop)));
    assert!(bad(q.claim(&w, Duration::MAX, 1).await.map(drop)));
    assert!(bad(q.claim(&w, vis, 0).await.map(drop)));
    assert!(bad(q.claim(&w, vis, 1001).await.map(drop)));
    assert!(bad(q.claim(&w, vis, usize::MAX).await.map(drop)));
    assert!(bad(OwnerToken::new("").map(drop)));
    let long = worker(&"w".repeat(redis_atomic::queue::MAX_WORKER_LEN + 1));
    assert!(bad(q.claim(&long, vis, 1).await.map(drop)));
    let f = Fence(1);
    assert!(bad(q.extend("j", &w, f, Duration::ZERO).await.map(drop)));
    assert!(bad(q
        .extend("j", &w, f, Duration::from_secs(86_401))
        .await
        .map(drop)));
    assert!(bad(q.nack("j", &w, f, year, "e").await.map(drop)));
    assert!(bad(q.reap(0).await.map(drop)));
    assert!(bad(q.dead_letters(0, 0).await.map(drop)));
    assert!(bad(q.ack("", &w, f).await.map(drop)));
    let big = QueueConfig::default().max_payload_bytes(2 << 20);
    assert!(bad(
        Queue::new(env.client.clone(), &env.keyspace, "q", big).map(drop)
    ));
    assert!(bad(Queue::new(
        env.client.clone(),
        &env.keyspace,
        "a{b",
        QueueConfig::default()
    )
    .map(drop)));

    // The scripts validate too (for callers that bypass the binding).
    let raw = queue(&env, "raw", QueueConfig::default());
    let k = raw.keys();
    let (due, inf, dead, meta, pay, err) =
        (&k.due, &k.inflight, &k.dead, &k.meta, &k.payload, &k.errors);
    for (vis, n) in [
        ("0", "1"),
        ("1.5", "1"),
        ("100", "0"),
        ("100", "1001"),
        ("x", "1"),
    ] {
        let r = env
            .client
            .call(
                &QUEUE_CLAIM,
                [due, inf, dead, meta, pay, err],
                [
                    "w".into(),
                    vis.into(),
                    n.into(),
                    "5".into(),
                    "10000".into(),
                    "1000".into(),
                ],
            )
            .await;
        assert!(matches!(r, Err(Error::BadArgument(_))), "{vis} {n}: {r:?}");
    }
    let huge = vec![0u8; (1 << 20) + 1];
    let r = env
        .client
        .call(
            &QUEUE_ENQUEUE,
            [due, meta, pay],
            ["j".into(), huge.as_slice().into(), "0".into(), "0".into()],
        )
        .await;
    assert!(matches!(r, Err(Error::BadArgument(_))), "{r:?}");

    // Someone else's value at a queue key: typed error, nothing moved.
    let q = queue(&env, "jobs", QueueConfig::default());
    q.enqueue("j", b"p", RunAt::Now).await.unwrap();
    let inflight = q.keys().inflight.clone();
    env.raw(redis::cmd("SET").arg(&inflight).arg("foreign"))
        .await;
    let r = q.claim(&w, vis, 10).await;
    assert!(matches!(r, Err(Error::WrongType(_))), "{r:?}");
    let r = q.enqueue("k", b"p", RunAt::Now).await;
    assert!(matches!(r, Ok(Enqueue::Enqueued { .. })), "{r:?}");
    assert!(matches!(
        q.inspect("j").await.unwrap(),
        JobState::Queued { .. }
    ));
    let v = env.raw(redis::cmd("GET").arg(&inflight)).await;
    assert_eq!(redis::from_redis_value::<String>(v).unwrap(), "foreign");
}
