//! Request ids of quota adds and claim ids of queue claims, in every mode: a repeated id returns
//! the first answer (the same leases) and has no second effect; different ids act independently;
//! records are bounded by their TTL. (Under lost replies: `reqid_faults.rs`.)

use crate::common::{env, patient, queue, Env, Mode, MODES};
use redis_atomic::lease::{Fence, OwnerToken};
use redis_atomic::queue::{Ack, Claim, Job, Nack, Queue, QueueConfig, RunAt};
use redis_atomic::quota::{Bounded, Bounds, Quotas};
use redis_atomic::Error;
use std::time::Duration;

async fn int(env: &Env, cmd: &mut redis::Cmd) -> i64 {
    redis::from_redis_value(env.raw(cmd).await).unwrap()
}

/// Polls `done` (every 20 ms, at most 5 s): the condition the test waits for.
async fn eventually<F: std::future::Future<Output = bool>>(
    what: &str,
    mut done: impl FnMut() -> F,
) {
    for _ in 0..250 {
        if done().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("never: {what}");
}

/// Same id → the first answer (applied or refused, with the value then), charged once; other ids
/// are charged; the record lives in the counter's slot with the request TTL.
#[tokio::test]
async fn quota_repeat_returns_first_answer_and_charges_once() {
    for mode in MODES {
        let env = env(mode, "reqid-quota", patient()).await;
        let q = Quotas::new(env.client.clone(), env.keyspace.clone());
        let b = Bounds::up_to(12).unwrap();
        let applied = |value| Bounded::Applied { value };
        assert_eq!(
            q.add_with_id("c", 5, b, None, "r1").await.unwrap(),
            applied(5)
        );
        assert_eq!(
            q.add_with_id("c", 5, b, None, "r1").await.unwrap(),
            applied(5)
        );
        assert_eq!(q.get("c").await.unwrap(), 5, "{mode:?}: charged twice");
        assert_eq!(
            q.add_with_id("c", 5, b, None, "r2").await.unwrap(),
            applied(10)
        );
        let refused = Bounded::Refused { value: 10 };
        assert_eq!(q.add_with_id("c", 5, b, None, "r3").await.unwrap(), refused);
        q.add("c", -8, b, None).await.unwrap();
        // Room now, but r3 was refused: a repeat answers what the first run did.
        assert_eq!(q.add_with_id("c", 5, b, None, "r3").await.unwrap(), refused);
        assert_eq!(
            q.add_with_id("c", 5, b, None, "r4").await.unwrap(),
            applied(7)
        );
        assert_eq!(
            q.add_clamped_with_id("c", -20, b, None, "r5")
                .await
                .unwrap(),
            applied(0)
        );
        assert_eq!(
            q.add_clamped_with_id("c", -20, b, None, "r5")
                .await
                .unwrap(),
            applied(0)
        );
        assert_eq!(q.get("c").await.unwrap(), 0);
        let keys = q.keys("c", Some("r1")).unwrap();
        let record = keys.request.unwrap();
        assert_eq!(
            redis_atomic::keys::slot(record.as_bytes()),
            redis_atomic::keys::slot(keys.value.as_bytes())
        );
        let ttl = int(&env, redis::cmd("PTTL").arg(&record)).await;
        assert!(ttl > 0 && ttl <= 3_600_000, "{mode:?}: {ttl}");
        let raw = env.raw(redis::cmd("GET").arg(&record)).await;
        assert_eq!(redis::from_redis_value::<String>(raw).unwrap(), "a:5");
    }
}

/// After the request TTL the id is forgotten: a repeat is a new request. Bad TTLs and ids are
/// typed errors; a foreign value under the record key is WRONGTYPE, nothing charged.
#[tokio::test]
async fn quota_record_expires_and_bad_input_is_typed() {
    let env = env(Mode::StandaloneEval, "reqid-quota-ttl", patient()).await;
    let q = Quotas::new(env.client.clone(), env.keyspace.clone());
    assert!(q
        .clone()
        .with_request_ttl(Duration::from_millis(999))
        .is_err());
    assert!(q
        .clone()
        .with_request_ttl(Duration::from_secs(86401))
        .is_err());
    let q = q.with_request_ttl(Duration::from_secs(1)).unwrap();
    let b = Bounds::up_to(100).unwrap();
    assert_eq!(
        q.add_with_id("c", 1, b, None, "r").await.unwrap(),
        Bounded::Applied { value: 1 }
    );
    let record = q.keys("c", Some("r")).unwrap().request.unwrap();
    assert!(int(&env, redis::cmd("PTTL").arg(&record)).await <= 1000);
    eventually("the record expires", || async {
        int(&env, redis::cmd("EXISTS").arg(&record)).await == 0
    })
    .await;
    assert_eq!(
        q.add_with_id("c", 1, b, None, "r").await.unwrap(),
        Bounded::Applied { value: 2 }
    );
    let long = "x".repeat(257);
    for id in ["", long.as_str()] {
        let r = q.add_with_id("c", 1, b, None, id).await;
        assert!(matches!(r, Err(Error::BadArgument(_))), "{r:?}");
    }
    let foreign = q.keys("c", Some("foreign")).unwrap().request.unwrap();
    env.raw(redis::cmd("SET").arg(&foreign).arg("nonsense"))
        .await;
    let r = q.add_with_id("c", 1, b, None, "foreign").await;
    assert!(matches!(r, Err(Error::WrongType(_))), "{r:?}");
    assert_eq!(q.get("c").await.unwrap(), 2);
}

fn ids(jobs: &[Job]) -> Vec<(String, Fence, u32)> {
    jobs.iter()
        .map(|j| (j.id().to_string(), j.fence(), j.deliveries()))
        .collect()
}

async fn claimed(q: &Queue, w: &OwnerToken, n: usize, id: &str) -> Vec<Job> {
    match q
        .claim_with_id(w, Duration::from_secs(30), n, id)
        .await
        .unwrap()
    {
        Claim::Claimed(jobs) => jobs,
        other => panic!("{id}: {other:?}"),
    }
}

/// A repeated claim id returns the same jobs with the same fences and delivery counts (nothing
/// re-leased, no delivery counted twice) while the leases are live; acked or nacked jobs drop out
/// (all gone: `Claimed` with no jobs, never new ones); another worker gets none; another id
/// leases other jobs; a claim that found nothing (the queue idle) records nothing.
#[tokio::test]
async fn claim_repeat_returns_same_leases() {
    for mode in MODES {
        let env = env(mode, "reqid-claim", patient()).await;
        let q = queue(&env, "q", QueueConfig::default());
        for id in ["a", "b", "c"] {
            q.enqueue(id, id.as_bytes(), RunAt::Now).await.unwrap();
        }
        let w = OwnerToken::new("w1").unwrap();
        let mut first = claimed(&q, &w, 2, "c1").await;
        assert_eq!(first.len(), 2);
        let meta_before = env.raw(redis::cmd("HGETALL").arg(&q.keys().meta)).await;
        let again = claimed(&q, &w, 2, "c1").await;
        assert_eq!(ids(&again), ids(&first), "{mode:?}");
        assert_eq!(again[0].payload(), first[0].payload());
        assert!(again.iter().all(|j| j.deliveries() == 1));
        let meta_after = env.raw(redis::cmd("HGETALL").arg(&q.keys().meta)).await;
        assert_eq!(
            meta_before, meta_after,
            "{mode:?}: a repeat changed the jobs"
        );
        let mut other = claimed(&q, &w, 2, "c2").await;
        assert_eq!(other.len(), 1);
        assert_eq!(other[0].id(), "c");
        let stranger = OwnerToken::new("w2").unwrap();
        assert!(claimed(&q, &stranger, 2, "c1").await.is_empty());
        assert_eq!(first.remove(0).ack().await.unwrap(), Ack::Acked);
        assert_eq!(ids(&claimed(&q, &w, 2, "c1").await), ids(&first));
        let nacked = first.remove(0);
        let nacked_id = nacked.id().to_string();
        let nack = nacked.nack(Duration::ZERO, "again").await.unwrap();
        assert!(matches!(nack, Nack::Retrying { .. }), "{nack:?}");
        assert!(claimed(&q, &w, 2, "c1").await.is_empty(), "{mode:?}");
        // The nacked job is due again, for a new claim id, as its second delivery.
        let mut retried = claimed(&q, &w, 2, "c3").await;
        assert_eq!(ids(&retried)[0].0, nacked_id);
        assert_eq!(retried[0].deliveries(), 2);
        retried.remove(0).ack().await.unwrap();
        other.remove(0).ack().await.unwrap();
        // Nothing queued or running: an idle claim records nothing, so its id claims what comes
        // later.
        let idle = q
            .claim_with_id(&w, Duration::from_secs(30), 2, "c4")
            .await
            .unwrap();
        assert!(matches!(idle, Claim::Idle), "{idle:?}");
        assert_eq!(
            int(
                &env,
                redis::cmd("EXISTS").arg(q.keys().claim("c4").unwrap())
            )
            .await,
            0
        );
        q.enqueue("d", b"d", RunAt::Now).await.unwrap();
        assert_eq!(ids(&claimed(&q, &w, 2, "c4").await)[0].0, "d");
    }
}

/// A lease from a claim id whose deadline passed is not returned by a repeat (and the repeat does
/// not re-lease it: its delivery count stays); the next claim reaps it. The record lives
/// max(claim-id TTL, the claim's ttl).
#[tokio::test]
async fn claim_repeat_after_expiry_returns_nothing() {
    let env = env(Mode::StandaloneEval, "reqid-claim-exp", patient()).await;
    let config = QueueConfig::default().claim_id_ttl(Duration::from_secs(1));
    assert!(Queue::new(
        env.client.clone(),
        &env.keyspace,
        "bad",
        QueueConfig::default().claim_id_ttl(Duration::from_millis(10))
    )
    .is_err());
    let q = Queue::new(env.client.clone(), &env.keyspace, "q", config).unwrap();
    q.enqueue("a", b"a", RunAt::Now).await.unwrap();
    let w = OwnerToken::new("w").unwrap();
    let vis = Duration::from_millis(300);
    let Claim::Claimed(first) = q.claim_with_id(&w, vis, 1, "e1").await.unwrap() else {
        panic!("nothing claimed")
    };
    let record = q.keys().claim("e1").unwrap();
    let ttl = int(&env, redis::cmd("PTTL").arg(&record)).await;
    assert!(ttl > 300 && ttl <= 1000, "{ttl}");
    eventually("the repeat stops returning the expired lease", || async {
        match q.claim_with_id(&w, vis, 1, "e1").await.unwrap() {
            Claim::Claimed(jobs) => jobs.is_empty(),
            other => panic!("{other:?}"),
        }
    })
    .await;
    let meta = env
        .raw(redis::cmd("HGET").arg(&q.keys().meta).arg("a"))
        .await;
    let meta: String = redis::from_redis_value(meta).unwrap();
    assert_eq!(
        meta,
        format!("r:{}:1:w", first[0].fence()),
        "a repeat re-leased it"
    );
    let Claim::Claimed(second) = q.claim(&w, vis, 1).await.unwrap() else {
        panic!("the expired lease was not reaped")
    };
    assert_eq!((second[0].id(), second[0].deliveries()), ("a", 2));
    assert!(second[0].fence() > first[0].fence());
}
