//! The queue under faults: a claim whose reply is lost, script-cache loss, a restart, OOM.
//! Each ends in a typed error or a transparent recovery, and never in a half-done move.

use crate::common::{
    assert_down, env_on, flush_env, impatient, own_env, patient, queue, recovering, standalone,
    Mode, CLUSTER_MODES, MODES,
};
use redis_atomic::lease::{Extend, Fence, OwnerToken};
use redis_atomic::queue::{Ack, Claim, Job, JobState, Nack, Queue, QueueConfig, QueueStats, RunAt};
use redis_atomic::script::registry;
use redis_atomic::{Client, ClientConfig, Delivery, Error, Keyspace, RetryPolicy};
use redis_atomic_testkit::{ClusterOptions, Fsync, RedisCluster, ServerOptions};
use std::time::{Duration, Instant};

/// Leases of these tests: long, so "still leased" can never be a slow machine's accident. A lease
/// that must end is ended on purpose, by an extension that shortens it to 1 ms.
const VIS: Duration = Duration::from_secs(60);

/// Timeout of the one call whose reply is lost (the default retries kept: safe scripts would be
/// retried, claim must not). Every other call goes through a patient client.
const LOSSY: Duration = Duration::from_millis(200);

/// Bound of the polling waits below: generous, they end as soon as their condition holds.
const WAIT: Duration = Duration::from_secs(10);

fn worker(name: &str) -> OwnerToken {
    OwnerToken::new(name).unwrap()
}

/// Polls (bounded) until `id` is leased; its fence.
async fn wait_running(q: &Queue, id: &str) -> Option<Fence> {
    let deadline = Instant::now() + WAIT;
    while Instant::now() < deadline {
        if let JobState::Running { fence, .. } = q.inspect(id).await.unwrap() {
            return Some(fence);
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    None
}

/// Claims (bounded) until something is leased.
async fn claim_eventually(q: &Queue) -> Vec<Job> {
    let deadline = Instant::now() + WAIT;
    while Instant::now() < deadline {
        if let Claim::Claimed(jobs) = q.claim(&worker("w2"), VIS, 10).await.unwrap() {
            return jobs;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("nothing became claimable within {WAIT:?}")
}

/// After a claim whose reply was lost (server stalled past `lossy`'s timeout): OutcomeUnknown
/// after one attempt (claim is never retried), the job stays leased to nobody, then comes back
/// once its lease ends, with a larger fence. Load-independent: only the lost claim has a short
/// timeout (the others are patient), and the lease is long until an extension ends it.
async fn lost_claim(q: &Queue, lossy: &Queue, stall: impl Fn(), resume: impl Fn(), what: &str) {
    q.enqueue("j", b"payload", RunAt::Now).await.unwrap();
    stall();
    let r = lossy.claim(&worker("w1"), VIS, 10).await;
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
            q.claim(&worker("w2"), VIS, 10).await.unwrap(),
            Claim::Empty { .. }
        ),
        "{what}: a leased job was claimed again before its ttl"
    );
    // The lost lease's holder never heard of it; end it now (as if its timeout had passed).
    let holder = worker("w1");
    assert_eq!(
        q.extend("j", &holder, lost, Duration::from_millis(1))
            .await
            .unwrap(),
        Extend::Extended {
            fence: lost,
            ttl: Duration::from_millis(1)
        },
        "{what}"
    );
    let mut jobs = claim_eventually(q).await;
    assert_eq!(jobs.len(), 1);
    assert_eq!((jobs[0].id(), jobs[0].deliveries()), ("j", 2), "{what}");
    assert_eq!(jobs[0].payload(), b"payload");
    assert!(jobs[0].fence() > lost, "{what}: fence did not increase");
    assert_eq!(q.ack("j", &holder, lost).await.unwrap(), Ack::Lost);
    assert_eq!(jobs.remove(0).ack().await.unwrap(), Ack::Acked);
}

fn lossy(q_client: &Client, ks: &Keyspace) -> Queue {
    let client = impatient(q_client, LOSSY, RetryPolicy::default());
    Queue::new(client, ks, "q", QueueConfig::default()).unwrap()
}

/// Lost reply on claim, standalone, both deliveries.
#[tokio::test]
async fn lost_claim_reply_job_returns_after_visibility() {
    for mode in [Mode::StandaloneEval, Mode::StandaloneFunctions] {
        let env = own_env(mode, "queue-lost", patient()).await;
        env.client.load(registry::ALL).await.unwrap(); // cached: the stalled call cannot NOSCRIPT
        let q = queue(&env, "q", QueueConfig::default());
        let server = env.server.as_ref().unwrap();
        lost_claim(
            &q,
            &lossy(&env.client, &env.keyspace),
            || server.pause(),
            || server.resume(),
            &format!("{mode:?}"),
        )
        .await;
    }
}

/// Lost reply on claim on a dedicated 3-primary cluster (stalling it disturbs no other test),
/// stalled only while the lost claim waits (`LOSSY`, well under the 1 s node timeout), both
/// deliveries.
#[tokio::test]
async fn lost_claim_reply_on_cluster() {
    let cluster = RedisCluster::start(ClusterOptions::primaries_only()).unwrap();
    for mode in CLUSTER_MODES {
        let env = env_on(&cluster, mode, "queue-lost-cluster", patient()).await;
        let lossy = lossy(&env.client, &env.keyspace);
        let q = queue(&env, "q", QueueConfig::default());
        let stall = || cluster.nodes().iter().for_each(|n| n.pause());
        let resume = || cluster.nodes().iter().for_each(|n| n.resume());
        let what = format!("{mode:?}");
        lost_claim(&q, &lossy, stall, resume, &what).await;
    }
}

/// `SCRIPT FLUSH` / `FUNCTION FLUSH` between calls is recovered transparently in every mode.
#[tokio::test]
async fn script_cache_loss_is_recovered() {
    for mode in MODES {
        let env = flush_env(mode, "queue-flush", patient()).await;
        let q = queue(&env, "q", QueueConfig::default());
        let flush = match mode.delivery() {
            Delivery::Functions => redis::cmd("FUNCTION").arg("FLUSH").clone(),
            _ => redis::cmd("SCRIPT").arg("FLUSH").clone(),
        };
        q.enqueue("j", b"p", RunAt::Now).await.unwrap();
        env.raw(&flush).await;
        let Claim::Claimed(mut jobs) = q.claim(&worker("w"), VIS, 1).await.unwrap() else {
            panic!("{mode:?}: not claimed after flush")
        };
        env.raw(&flush).await;
        assert_eq!(jobs.remove(0).ack().await.unwrap(), Ack::Acked, "{mode:?}");
        assert_eq!(q.stats().await.unwrap().acked, 1);
    }
}

/// While the server is down calls fail with a typed transport error; after a restart (AOF with
/// `appendfsync always`) every acknowledged move is still there and the current lease can still
/// ack. Calls before the kill are patient (no retries, so nothing is sent twice), only the call
/// while down is short. (With `everysec` a SIGKILL can lose acknowledged moves: Redis postpones
/// the AOF write while a slow fsync runs — seen once under `make test` on a busy disk —, as
/// docs/durability.md says.)
#[tokio::test]
async fn restart_keeps_acknowledged_moves() {
    let opts = ServerOptions {
        appendonly: true,
        appendfsync: Some(Fsync::Always),
        ..ServerOptions::default()
    };
    let config = patient().retry(RetryPolicy::none());
    let mut env = standalone("queue-restart", opts, config).await;
    let q = queue(&env, "q", QueueConfig::default());
    for id in ["a", "b", "c"] {
        q.enqueue(id, id.as_bytes(), RunAt::Now).await.unwrap();
    }
    let w = worker("w");
    let Claim::Claimed(mut jobs) = q.claim(&w, Duration::from_secs(60), 2).await.unwrap() else {
        panic!()
    };
    assert_eq!(jobs.remove(0).ack().await.unwrap(), Ack::Acked);
    let before = q.stats().await.unwrap();
    let server = env.server.as_mut().unwrap();
    server.kill();
    let down = Queue::new(
        impatient(&env.client, LOSSY, RetryPolicy::none()),
        &env.keyspace,
        "q",
        QueueConfig::default(),
    )
    .unwrap()
    .claim(&w, VIS, 1)
    .await;
    assert_down(&down);
    server.restart().unwrap();
    let patient = Queue::new(
        recovering(&env.client),
        &env.keyspace,
        "q",
        QueueConfig::default(),
    )
    .unwrap();
    assert_eq!(patient.stats().await.unwrap(), before);
    assert_eq!(
        patient
            .ack(jobs[0].id(), &w, jobs[0].fence())
            .await
            .unwrap(),
        Ack::Acked
    );
}

/// Over `maxmemory` every write script (ack included) is refused with a typed `Rejected { OOM }`
/// in both deliveries, nothing moves, reads still work; below it, the lease still acks. On a
/// standalone server and on a dedicated 3-primary cluster (every primary over its limit).
#[tokio::test]
async fn oom_refuses_writes_and_moves_nothing() {
    for mode in [Mode::StandaloneEval, Mode::StandaloneFunctions] {
        let env = own_env(mode, "queue-oom", patient()).await;
        env.client.load(registry::ALL).await.unwrap();
        let q = queue(&env, "q", QueueConfig::default());
        let server = env.server.as_ref().unwrap();
        oom_case(
            &q,
            |bytes| set_maxmemory(server, bytes),
            &format!("{mode:?}"),
        )
        .await;
    }
    let cluster = RedisCluster::start(ClusterOptions::primaries_only()).unwrap();
    for mode in CLUSTER_MODES {
        let env = env_on(&cluster, mode, "queue-oom-cluster", ClientConfig::default()).await;
        let q = queue(&env, "q", QueueConfig::default());
        let set_all = |bytes| cluster.nodes().iter().for_each(|n| set_maxmemory(n, bytes));
        oom_case(&q, set_all, &format!("{mode:?}")).await;
    }
}

fn set_maxmemory(server: &redis_atomic_testkit::RedisServer, bytes: u64) {
    let mut conn = server.client().get_connection().unwrap();
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg(bytes)
        .query(&mut conn)
        .unwrap();
}

async fn oom_case(q: &Queue, set_maxmemory: impl Fn(u64), what: &str) {
    for id in ["a", "b"] {
        q.enqueue(id, b"p", RunAt::Now).await.unwrap();
    }
    let w = worker("w");
    let Claim::Claimed(mut jobs) = q.claim(&w, Duration::from_secs(60), 1).await.unwrap() else {
        panic!("{what}: nothing claimed")
    };
    let job = jobs.remove(0);
    let (id, fence) = (job.id().to_string(), job.fence());
    let before: QueueStats = q.stats().await.unwrap();
    set_maxmemory(1);
    let oom =
        |r: Result<(), Error>| matches!(r, Err(Error::Rejected { ref code, .. }) if code == "OOM");
    assert!(
        oom(q.enqueue("c", b"p", RunAt::Now).await.map(drop)),
        "{what}"
    );
    assert!(oom(q.claim(&w, VIS, 5).await.map(drop)), "{what}");
    // The refused ack consumed the handle: everything after it goes by parts.
    assert!(oom(job.ack().await.map(drop)), "{what}");
    let nack = q.nack(&id, &w, fence, Duration::ZERO, "e").await;
    assert!(oom(nack.map(drop)), "{what}");
    assert!(oom(q.reap(10).await.map(drop)), "{what}");
    assert_eq!(q.stats().await.unwrap(), before, "{what}: something moved");
    set_maxmemory(0);
    assert_eq!(q.ack(&id, &w, fence).await.unwrap(), Ack::Acked, "{what}");
    let nack = q.nack("a", &w, fence, Duration::ZERO, "e").await.unwrap();
    assert_eq!(nack, Nack::Lost, "{what}");
}
