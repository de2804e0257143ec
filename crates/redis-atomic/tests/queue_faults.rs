//! The queue under faults: a claim whose reply is lost, script-cache loss, a restart, OOM.
//! Each ends in a typed error or a transparent recovery, and never in a half-done move.
#![allow(clippy::unwrap_used)]

mod common;

use common::{env, standalone, Mode, MODES};
use redis_atomic::lock::Fence;
use redis_atomic::queue::{Ack, Claim, JobState, Nack, Queue, QueueConfig, QueueStats, RunAt};
use redis_atomic::{Client, ClientConfig, Delivery, Error, Keyspace, RetryPolicy};
use redis_atomic_testkit::{unique_prefix, ClusterOptions, RedisCluster, ServerOptions};
use std::time::Duration;

/// Long enough that the immediate re-claim below surely happens before the lease ends, even on
/// a loaded CI machine.
const VIS: Duration = Duration::from_millis(1500);

/// A short timeout with the default retry policy: safe scripts would be retried, claim must not.
fn impatient() -> ClientConfig {
    ClientConfig::default().timeout(Duration::from_millis(200))
}

/// Polls (bounded, 3 s) until `id` is leased; its fence.
async fn wait_running(q: &Queue, id: &str) -> Option<Fence> {
    for _ in 0..300 {
        if let JobState::Running { fence, .. } = q.inspect(id).await.unwrap() {
            return Some(fence);
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    None
}

/// Claims (bounded, 5 s) until something is leased.
async fn claim_eventually(q: &Queue) -> Vec<redis_atomic::queue::Job> {
    for _ in 0..500 {
        if let Claim::Claimed(jobs) = q.claim("w2", VIS, 10).await.unwrap() {
            return jobs;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("nothing became claimable within 5 s")
}

/// After a claim whose reply was lost (server stalled past the timeout): OutcomeUnknown after
/// one attempt (claim is never retried), the job stays leased to nobody, then comes back once
/// the visibility timeout passes, with a larger fence.
async fn lost_claim(q: &Queue, stall: impl Fn(), resume: impl Fn(), what: &str) {
    q.enqueue("j", b"payload", RunAt::Now).await.unwrap();
    stall();
    let r = q.claim("w1", VIS, 10).await;
    resume();
    assert!(
        matches!(r, Err(Error::OutcomeUnknown { attempts: 1, .. })),
        "{what}: {r:?}"
    );
    let lost = wait_running(q, "j")
        .await
        .unwrap_or_else(|| panic!("{what}: the lost claim never ran: nothing was lost"));
    assert!(
        matches!(
            q.claim("w2", VIS, 10).await.unwrap(),
            Claim::Empty { next_due: Some(_) }
        ),
        "{what}: a leased job was claimed again before its visibility timeout"
    );
    let jobs = claim_eventually(q).await;
    assert_eq!(jobs.len(), 1);
    assert_eq!(
        (jobs[0].id.as_str(), jobs[0].deliveries),
        ("j", 2),
        "{what}"
    );
    assert_eq!(jobs[0].payload, b"payload");
    assert!(jobs[0].fence > lost, "{what}: fence did not increase");
    assert_eq!(q.ack("j", lost).await.unwrap(), Ack::Lost);
    assert_eq!(q.ack("j", jobs[0].fence).await.unwrap(), Ack::Acked);
}

/// Lost reply on claim, standalone, both deliveries.
#[tokio::test]
async fn lost_claim_reply_job_returns_after_visibility() {
    for mode in [Mode::StandaloneEval, Mode::StandaloneFunctions] {
        let env = env(mode, "queue-lost", impatient()).await;
        env.client.load_all().await.unwrap(); // cached: the stalled call cannot NOSCRIPT
        let q = Queue::new(
            env.client.clone(),
            &env.keyspace,
            "q",
            QueueConfig::default(),
        )
        .unwrap();
        let server = env.server.as_ref().unwrap();
        lost_claim(
            &q,
            || server.pause(),
            || server.resume(),
            &format!("{mode:?}"),
        )
        .await;
    }
}

/// Lost reply on claim on a dedicated 3-primary cluster (stalling it disturbs no other test),
/// stalled well under its 1 s node timeout, both deliveries.
#[tokio::test]
async fn lost_claim_reply_on_cluster() {
    let cluster = RedisCluster::start(ClusterOptions {
        replicas_per_primary: 0,
        ..Default::default()
    })
    .unwrap();
    for delivery in [Delivery::Eval, Delivery::Functions] {
        let client = Client::connect_cluster(&cluster.urls(), impatient().delivery(delivery))
            .await
            .unwrap();
        client.load_all().await.unwrap();
        let ks = Keyspace::new(unique_prefix("queue-lost-cluster")).unwrap();
        let q = Queue::new(client, &ks, "q", QueueConfig::default()).unwrap();
        let stall = || cluster.nodes().iter().for_each(|n| n.pause());
        let resume = || cluster.nodes().iter().for_each(|n| n.resume());
        lost_claim(&q, stall, resume, &format!("cluster {delivery:?}")).await;
    }
}

/// `SCRIPT FLUSH` / `FUNCTION FLUSH` between calls is recovered transparently in every mode.
#[tokio::test]
async fn script_cache_loss_is_recovered() {
    for mode in MODES {
        let env = env(mode, "queue-flush", ClientConfig::default()).await;
        let q = Queue::new(
            env.client.clone(),
            &env.keyspace,
            "q",
            QueueConfig::default(),
        )
        .unwrap();
        let flush = match mode.delivery() {
            Delivery::Functions => redis::cmd("FUNCTION").arg("FLUSH").clone(),
            _ => redis::cmd("SCRIPT").arg("FLUSH").clone(),
        };
        q.enqueue("j", b"p", RunAt::Now).await.unwrap();
        env.raw(&flush).await;
        let Claim::Claimed(jobs) = q.claim("w", VIS, 1).await.unwrap() else {
            panic!("{mode:?}: not claimed after flush")
        };
        env.raw(&flush).await;
        assert_eq!(
            q.ack("j", jobs[0].fence).await.unwrap(),
            Ack::Acked,
            "{mode:?}"
        );
        assert_eq!(q.stats().await.unwrap().acked, 1);
    }
}

/// While the server is down calls fail with a typed transport error; after a restart (AOF on)
/// every acknowledged move is still there and the current lease can still ack.
#[tokio::test]
async fn restart_keeps_acknowledged_moves() {
    let opts = ServerOptions {
        appendonly: true,
        ..ServerOptions::default()
    };
    let config = impatient().retry(RetryPolicy::none());
    let mut env = standalone("queue-restart", opts, config).await;
    let q = Queue::new(
        env.client.clone(),
        &env.keyspace,
        "q",
        QueueConfig::default(),
    )
    .unwrap();
    for id in ["a", "b", "c"] {
        q.enqueue(id, id.as_bytes(), RunAt::Now).await.unwrap();
    }
    let Claim::Claimed(jobs) = q.claim("w", Duration::from_secs(60), 2).await.unwrap() else {
        panic!()
    };
    assert_eq!(q.ack(&jobs[0].id, jobs[0].fence).await.unwrap(), Ack::Acked);
    let before = q.stats().await.unwrap();
    let server = env.server.as_mut().unwrap();
    server.kill();
    let down = q.claim("w", VIS, 1).await;
    assert!(
        matches!(
            down,
            Err(Error::NotSent(_)) | Err(Error::OutcomeUnknown { .. })
        ),
        "{down:?}"
    );
    server.restart().unwrap();
    let patient = Queue::new(
        env.client.with_config(
            ClientConfig::default().retry(RetryPolicy::new(10, Duration::from_secs(5))),
        ),
        &env.keyspace,
        "q",
        QueueConfig::default(),
    )
    .unwrap();
    assert_eq!(patient.stats().await.unwrap(), before);
    assert_eq!(
        patient.ack(&jobs[1].id, jobs[1].fence).await.unwrap(),
        Ack::Acked
    );
}

/// Over `maxmemory` every write script (ack included) is refused with a typed `Rejected { OOM }`
/// in both deliveries, nothing moves, reads still work; below it, the lease still acks.
#[tokio::test]
async fn oom_refuses_writes_and_moves_nothing() {
    for mode in [Mode::StandaloneEval, Mode::StandaloneFunctions] {
        let env = env(mode, "queue-oom", ClientConfig::default()).await;
        env.client.load_all().await.unwrap();
        let q = Queue::new(
            env.client.clone(),
            &env.keyspace,
            "q",
            QueueConfig::default(),
        )
        .unwrap();
        for id in ["a", "b"] {
            q.enqueue(id, b"p", RunAt::Now).await.unwrap();
        }
        let Claim::Claimed(jobs) = q.claim("w", Duration::from_secs(60), 1).await.unwrap() else {
            panic!()
        };
        let before: QueueStats = q.stats().await.unwrap();
        env.raw(redis::cmd("CONFIG").arg("SET").arg("maxmemory").arg(1))
            .await;
        let oom = |r: Result<(), Error>| matches!(r, Err(Error::Rejected { ref code, .. }) if code == "OOM");
        assert!(
            oom(q.enqueue("c", b"p", RunAt::Now).await.map(drop)),
            "{mode:?}"
        );
        assert!(oom(q.claim("w", VIS, 5).await.map(drop)), "{mode:?}");
        assert!(oom(q.ack("a", jobs[0].fence).await.map(drop)), "{mode:?}");
        let nack = q.nack("a", jobs[0].fence, Duration::ZERO, "e").await;
        assert!(oom(nack.map(drop)), "{mode:?}");
        assert!(oom(q.reap(10).await.map(drop)), "{mode:?}");
        assert_eq!(
            q.stats().await.unwrap(),
            before,
            "{mode:?}: something moved"
        );
        env.raw(redis::cmd("CONFIG").arg("SET").arg("maxmemory").arg(0))
            .await;
        assert_eq!(q.ack("a", jobs[0].fence).await.unwrap(), Ack::Acked);
        let nack = q
            .nack("a", jobs[0].fence, Duration::ZERO, "e")
            .await
            .unwrap();
        assert_eq!(nack, Nack::Lost);
    }
}
