//! What each primitive guarantees when a failover loses acknowledged writes, pinned by tests.
//!
//! Redis replication is asynchronous: a primary acknowledges a write before any replica has it,
//! so promoting a replica can lose it. These tests make that happen deterministically: the
//! replica is detached (`REPLICAOF NO ONE`; stopping it with SIGSTOP is not enough, the kernel
//! still buffers the replication stream for it), the primary acknowledges writes, dies
//! (SIGKILL), and clients move to the detached replica, which never saw them. See `docs/failover.md` for the statements pinned here.

use redis_atomic::idempotency::{Begin, Fingerprint, Idempotency, Response};
use redis_atomic::lock::{Acquire, Locks};
use redis_atomic::Error;
use redis_atomic::{Client, ClientConfig, Keyspace};
use redis_atomic_testkit::{faults, unique_prefix, RedisServer, ServerOptions};
use std::time::Duration;

/// A primary with one replica that has caught up, and a client on the primary.
struct Pair {
    primary: RedisServer,
    replica: RedisServer,
    keyspace: Keyspace,
}

impl Pair {
    async fn start(test: &str) -> (Pair, Client) {
        let primary = RedisServer::start(ServerOptions::default()).unwrap();
        let replica = RedisServer::start(ServerOptions::default()).unwrap();
        faults::replicate(&replica, &primary).unwrap();
        let client = Client::connect(&primary.url(), ClientConfig::default())
            .await
            .unwrap();
        let keyspace = Keyspace::new(unique_prefix(test)).unwrap();
        (
            Pair {
                primary,
                replica,
                keyspace,
            },
            client,
        )
    }

    /// Stops replication: from now on the primary's acknowledged writes do not reach the replica.
    fn cut(&self) {
        faults::promote(&self.replica).unwrap();
    }

    /// The primary dies; clients move to the replica, which missed everything since `cut`.
    /// Returns a client on the new primary.
    async fn fail_over(mut self) -> (Client, RedisServer) {
        self.primary.kill();
        let client = Client::connect(&self.replica.url(), ClientConfig::default())
            .await
            .unwrap();
        (client, self.replica)
    }
}

/// A lock can be lost on failover (a second holder acquires it), but its fence is still larger
/// than every fence issued before, so a fenced downstream rejects the first holder.
#[tokio::test]
async fn lock_can_be_lost_but_fences_never_repeat() {
    let (pair, client) = Pair::start("failover-lock").await;
    let locks = Locks::new(client.clone(), pair.keyspace.clone());
    let Acquire::Acquired(first) = locks.acquire("r", Duration::from_secs(60)).await.unwrap()
    else {
        panic!("free lock refused")
    };
    first.release().await.unwrap();
    pair.cut();
    let Acquire::Acquired(second) = locks.acquire("r", Duration::from_secs(60)).await.unwrap()
    else {
        panic!("free lock refused")
    };
    let last_fence = second.fence();
    let keyspace = pair.keyspace.clone();
    let (client, _server) = pair.fail_over().await;
    let locks = Locks::new(client, keyspace);
    let Acquire::Acquired(third) = locks.acquire("r", Duration::from_secs(60)).await.unwrap()
    else {
        panic!("the lock survived the failover: the test did not lose the write")
    };
    assert!(
        third.fence() > last_fence,
        "fence {} repeated or went back after failover (last issued {last_fence})",
        third.fence()
    );
}

/// What the time floor buys: a plain INCR counter, the usual fencing-token recipe, repeats a
/// token after the same failover.
#[tokio::test]
async fn plain_incr_tokens_repeat_after_failover() {
    let (pair, client) = Pair::start("failover-incr").await;
    let key = pair.keyspace.key("demo", 1, "t", &["counter"]).unwrap();
    let incr = redis::cmd("INCR").arg(&key).clone();
    // Token 1 reaches the replica: INCR and WAIT on one connection (WAIT counts what *its*
    // connection wrote).
    let mut conn = pair.primary.client().get_connection().unwrap();
    let (one, acked): (i64, i64) = redis::pipe()
        .cmd("INCR")
        .arg(&key)
        .cmd("WAIT")
        .arg(1)
        .arg(5000)
        .query(&mut conn)
        .unwrap();
    assert_eq!((one, acked), (1, 1));
    pair.cut();
    assert_eq!(client.command(&incr).await.unwrap(), redis::Value::Int(2));
    let (client, _server) = pair.fail_over().await;
    assert_eq!(
        client.command(&incr).await.unwrap(),
        redis::Value::Int(2),
        "token 2 issued twice"
    );
}

/// An idempotency record can be lost on failover: the duplicate then gets `Claimed` and runs
/// again. Its fence is larger than the lost claim's, so a downstream fenced by it
/// can still tell the two executions apart and reject the older.
#[tokio::test]
async fn idempotency_record_can_be_lost_and_the_request_runs_again() {
    let (pair, client) = Pair::start("failover-idem").await;
    let store = Idempotency::new(client, pair.keyspace.clone());
    let fp = Fingerprint::of(&[b"req"]);
    pair.cut();
    let Begin::Claimed(claim) = store.begin("t", b"k", fp).await.unwrap() else {
        panic!("fresh key not claimed")
    };
    let lost_fence = claim.fence();
    claim
        .complete(&Response::new(201, b"done".to_vec()))
        .await
        .unwrap();
    let keyspace = pair.keyspace.clone();
    let (client, _server) = pair.fail_over().await;
    let store = Idempotency::new(client, keyspace);
    let Begin::Claimed(again) = store.begin("t", b"k", fp).await.unwrap() else {
        panic!("the record survived the failover: the test did not lose the write")
    };
    assert!(again.fence() > lost_fence);
}

/// With `replicas(1, ..)` an acknowledged acquisition is on the replica too: the same failover
/// keeps the lock (the next client finds it held).
#[tokio::test]
async fn waited_for_lock_survives_the_failover() {
    let (pair, client) = Pair::start("failover-wait").await;
    let durable = client.with_config(ClientConfig::default().replicas(1, Duration::from_secs(2)));
    let locks = Locks::new(durable, pair.keyspace.clone());
    let Acquire::Acquired(_held) = locks.acquire("r", Duration::from_secs(60)).await.unwrap()
    else {
        panic!("free lock refused")
    };
    pair.cut();
    let keyspace = pair.keyspace.clone();
    let (client, _server) = pair.fail_over().await;
    let locks = Locks::new(client, keyspace);
    assert!(matches!(
        locks.acquire("r", Duration::from_secs(60)).await.unwrap(),
        Acquire::Held { .. }
    ));
}

/// When the replica does not acknowledge in time, acquire reports `NotReplicated` with the
/// count, and gives the lock back rather than holding one a failover could lose.
#[tokio::test]
async fn unreplicated_acquire_is_reported_and_released() {
    let (pair, client) = Pair::start("failover-unreplicated").await;
    let durable =
        client.with_config(ClientConfig::default().replicas(1, Duration::from_millis(100)));
    let locks = Locks::new(durable, pair.keyspace.clone());
    pair.replica.pause();
    let r = locks.acquire("r", Duration::from_secs(60)).await;
    pair.replica.resume();
    assert!(
        matches!(
            r,
            Err(Error::NotReplicated {
                acked: 0,
                wanted: 1
            })
        ),
        "{r:?}"
    );
    let plain = Locks::new(client, pair.keyspace.clone());
    assert!(matches!(
        plain.acquire("r", Duration::from_secs(60)).await.unwrap(),
        Acquire::Acquired(_)
    ));
}

/// On a cluster the script and its `WAIT` go to the key's node: acquisitions on keys all over
/// the slot space are acknowledged by their shard's replica.
#[tokio::test]
async fn waiting_for_replicas_on_a_cluster() {
    let cluster = redis_atomic_testkit::RedisCluster::shared();
    let config = ClientConfig::default().replicas(1, Duration::from_secs(2));
    let client = Client::connect_cluster(&cluster.urls(), config)
        .await
        .unwrap();
    let locks = Locks::new(
        client,
        Keyspace::new(unique_prefix("wait-cluster")).unwrap(),
    );
    for i in 0..30 {
        let r = locks
            .acquire(&format!("r{i}"), Duration::from_secs(60))
            .await;
        assert!(matches!(r, Ok(Acquire::Acquired(_))), "r{i}: {r:?}");
    }
}

/// A queue after a failover: an acked job can come back (its ack was lost) and is delivered
/// again, at least once, with a larger fence than its lost lease had.
#[tokio::test]
async fn queue_ack_can_be_lost_and_the_job_delivered_again() {
    use redis_atomic::lease::OwnerToken;
    use redis_atomic::queue::{Ack, Claim, Queue, QueueConfig, RunAt};
    let (pair, client) = Pair::start("failover-queue").await;
    // The enqueue reaches the replica (WAIT, pipelined on the same connection); the rest not.
    let durable = client.with_config(ClientConfig::default().replicas(1, Duration::from_secs(5)));
    Queue::new(durable, &pair.keyspace, "q", QueueConfig::default())
        .unwrap()
        .enqueue("job", b"x", RunAt::Now)
        .await
        .unwrap();
    let queue = Queue::new(client, &pair.keyspace, "q", QueueConfig::default()).unwrap();
    pair.cut();
    let Claim::Claimed(mut jobs) = queue
        .claim(
            &OwnerToken::new("w1").unwrap(),
            Duration::from_millis(200),
            1,
        )
        .await
        .unwrap()
    else {
        panic!("due job not claimed")
    };
    let lost_fence = jobs[0].fence();
    assert_eq!(jobs.remove(0).ack().await.unwrap(), Ack::Acked);
    let keyspace = pair.keyspace.clone();
    let (client, _server) = pair.fail_over().await;
    let queue = Queue::new(client, &keyspace, "q", QueueConfig::default()).unwrap();
    let w2 = OwnerToken::new("w2").unwrap();
    let Claim::Claimed(again) = queue.claim(&w2, Duration::from_secs(5), 1).await.unwrap() else {
        panic!("the enqueue was replicated, so the job must come back")
    };
    assert_eq!(again[0].id(), "job");
    assert!(
        again[0].fence() > lost_fence,
        "fence repeated after failover"
    );
}

/// A rate limit after a failover: the count of the current window can be lost, so more than
/// the limit can be admitted in that window (over-admission is bounded by what was lost).
#[tokio::test]
async fn rate_limit_counts_can_be_lost() {
    use redis_atomic::ratelimit::{Decision, Limit, RateLimiter};
    let (pair, client) = Pair::start("failover-rl").await;
    let limit = Limit::fixed_window(3, Duration::from_secs(3600)).unwrap();
    let limiter = RateLimiter::new(client, pair.keyspace.clone(), limit.clone());
    pair.cut();
    for _ in 0..3 {
        assert!(matches!(
            limiter.consume("user", 1).await.unwrap(),
            Decision::Allowed { .. }
        ));
    }
    assert!(matches!(
        limiter.consume("user", 1).await.unwrap(),
        Decision::Limited { .. }
    ));
    let keyspace = pair.keyspace.clone();
    let (client, _server) = pair.fail_over().await;
    let limiter = RateLimiter::new(client, keyspace, limit);
    assert!(
        matches!(
            limiter.consume("user", 1).await.unwrap(),
            Decision::Allowed { .. }
        ),
        "the window's count survived: the test did not lose the writes"
    );
}

/// A bounded counter after a failover goes back to its last replicated value; the bounds still
/// hold for every later operation.
#[tokio::test]
async fn quota_adds_can_be_lost_but_bounds_hold() {
    use redis_atomic::quota::{Bounded, Bounds, Quotas};
    let (pair, client) = Pair::start("failover-quota").await;
    let quotas = Quotas::new(client, pair.keyspace.clone());
    let bounds = Bounds::up_to(10).unwrap();
    pair.cut();
    assert!(matches!(
        quotas.add("q", 10, bounds, None).await.unwrap(),
        Bounded::Applied { value: 10 }
    ));
    let keyspace = pair.keyspace.clone();
    let (client, _server) = pair.fail_over().await;
    let quotas = Quotas::new(client, keyspace);
    assert_eq!(quotas.get("q").await.unwrap(), 0, "the add survived");
    assert!(matches!(
        quotas.add("q", 11, bounds, None).await.unwrap(),
        Bounded::Refused { .. }
    ));
}
