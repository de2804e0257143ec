//! A full memory, both ways. With an evicting policy (`allkeys-lru` here) Redis deletes the
//! primitives' keys by itself, and this pins what each primitive then loses (docs/durability.md
//! lists it; `redis-atomic doctor` fails such a server). With `noeviction` a full server
//! refuses every write of every primitive with a typed `Rejected { code: "OOM" }` and nothing
//! acknowledged changes — on a standalone server and on a cluster (each primary full).

use crate::common::patient;
use redis_atomic::cas::{Cas, Decision as CasDecision, Read};
use redis_atomic::dedup::Dedup;
use redis_atomic::fenced::FencedWrites;
use redis_atomic::idempotency::{Begin, Fingerprint, Idempotency, Response};
use redis_atomic::lease::{Fence, OwnerToken};
use redis_atomic::lock::{Acquire, LockState, Locks};
use redis_atomic::multi::MultiWrite;
use redis_atomic::queue::{Claim, JobState, Queue, QueueConfig, RunAt};
use redis_atomic::quota::{Bounds, Quotas};
use redis_atomic::ratelimit::{Algorithm, Limit, RateLimiter};
use redis_atomic::semaphore::{self, Semaphore, SemaphoreConfig};
use redis_atomic::write::Write;
use redis_atomic::{Client, ClientConfig, Error, Keyspace};
use redis_atomic_testkit::{
    faults, unique_prefix, ClusterOptions, RedisCluster, RedisServer, ServerOptions,
};
use std::time::Duration;

const LONG: Duration = Duration::from_secs(600);

/// Every primitive on one keyspace (capacity-1 semaphore, 1 request per hour).
struct Kit {
    locks: Locks,
    sem: Semaphore,
    idem: Idempotency,
    limiter: RateLimiter,
    queue: Queue,
    dedup: Dedup,
    quotas: Quotas,
    fenced: FencedWrites,
}

fn kit(client: &Client, ks: &Keyspace) -> Kit {
    let hourly = Limit::new(Algorithm::SlidingWindow, 1, Duration::from_secs(3600)).unwrap();
    Kit {
        locks: Locks::new(client.clone(), ks.clone()),
        sem: Semaphore::new(client.clone(), ks, "s", SemaphoreConfig::new(1)).unwrap(),
        idem: Idempotency::new(client.clone(), ks.clone()),
        limiter: RateLimiter::new(client.clone(), ks.clone(), hourly),
        queue: Queue::new(client.clone(), ks, "q", QueueConfig::default()).unwrap(),
        dedup: Dedup::new(client.clone(), ks.clone()),
        quotas: Quotas::new(client.clone(), ks.clone()),
        fenced: FencedWrites::new(client.clone(), ks.clone()),
    }
}

fn fp() -> Fingerprint {
    Fingerprint::of(&[b"req"])
}

fn bounds() -> Bounds {
    Bounds::new(0, 10).unwrap()
}

/// State every primitive acknowledged: a held lock and permit, a completed request, a charged
/// limit, a queued job, a sighting, a quota of 5. Returns the lock's and permit's fences.
async fn acknowledge(k: &Kit, a: &OwnerToken) -> (Fence, Fence) {
    let Acquire::Acquired(lock) = k.locks.acquire_with_token("r", a, LONG).await.unwrap() else {
        panic!("lock")
    };
    let semaphore::Acquire::Acquired(permit) = k.sem.acquire_with_token(a, LONG).await.unwrap()
    else {
        panic!("permit")
    };
    let Begin::Claimed(claim) = k.idem.begin("t", b"req", fp()).await.unwrap() else {
        panic!("claim")
    };
    claim.complete(&Response::new(200, "paid")).await.unwrap();
    assert!(k.limiter.consume("user", 1).await.unwrap().is_allowed());
    k.queue.enqueue("job", b"p", RunAt::Now).await.unwrap();
    assert!(k.dedup.first_seen("event", LONG).await.unwrap());
    k.quotas.add("q", 5, bounds(), None).await.unwrap();
    (lock.fence(), permit.fence())
}

/// Keys under the test's prefix (a test server of its own: KEYS is fine here).
async fn our_keys(client: &Client, ks: &Keyspace) -> usize {
    let reply = client
        .command(redis::cmd("KEYS").arg(format!("{}:*", ks.namespace())))
        .await
        .unwrap();
    redis::from_redis_value::<Vec<String>>(reply).unwrap().len()
}

/// `allkeys-lru` at its limit: unrelated writes evict every key the primitives wrote. Then a
/// second owner takes the live lock (with a larger fence: the time floor) and a second permit
/// of a capacity-1 semaphore, a completed request runs again, a spent limit admits again, the
/// queued job is gone, a seen event is "first seen" again, the quota is back to 0.
#[tokio::test]
async fn evicting_policy_loses_every_primitives_state() {
    let server = RedisServer::start(ServerOptions {
        maxmemory: Some(64 << 20),
        maxmemory_policy: Some("allkeys-lru".into()),
        ..Default::default()
    })
    .unwrap();
    let client = Client::connect(&server.url(), ClientConfig::default())
        .await
        .unwrap();
    let ks = Keyspace::new(unique_prefix("evict")).unwrap();
    let k = kit(&client, &ks);
    let (a, b) = (OwnerToken::new("a").unwrap(), OwnerToken::new("b").unwrap());
    let (lock_fence, permit_fence) = acknowledge(&k, &a).await;
    let ours = our_keys(&client, &ks).await;
    assert!(ours > 8, "{ours}");
    faults::fill_memory(&server, 1 << 20).unwrap();
    let mut config = redis::cmd("CONFIG");
    config.arg("SET").arg("maxmemory-policy").arg("allkeys-lru");
    client.command(&config).await.unwrap();
    let ballast = vec![b'x'; 16 << 10];
    for i in 0..20_000 {
        if i % 64 == 0 && our_keys(&client, &ks).await == 0 {
            break;
        }
        let mut set = redis::cmd("SET");
        set.arg(format!("ballast:{i}")).arg(&ballast);
        client.command(&set).await.unwrap();
    }
    assert_eq!(
        our_keys(&client, &ks).await,
        0,
        "LRU never evicted all {ours} keys"
    );

    let Acquire::Acquired(second) = k.locks.acquire_with_token("r", &b, LONG).await.unwrap() else {
        panic!("the evicted lock is still held")
    };
    assert!(second.fence() > lock_fence);
    let semaphore::Acquire::Acquired(p2) = k.sem.acquire_with_token(&b, LONG).await.unwrap() else {
        panic!("the evicted permit still counts")
    };
    assert!(p2.fence() > permit_fence);
    assert!(matches!(
        k.idem.begin("t", b"req", fp()).await.unwrap(),
        Begin::Claimed(_)
    ));
    assert!(k.limiter.consume("user", 1).await.unwrap().is_allowed());
    assert_eq!(k.queue.inspect("job").await.unwrap(), JobState::Unknown);
    let w = OwnerToken::new("w").unwrap();
    assert!(matches!(
        k.queue.claim(&w, LONG, 10).await.unwrap(),
        Claim::Idle
    ));
    assert!(k.dedup.first_seen("event", LONG).await.unwrap());
    assert_eq!(k.quotas.get("q").await.unwrap(), 0);
}

fn oom<T: std::fmt::Debug>(r: Result<T, Error>) -> bool {
    matches!(r, Err(Error::Rejected { ref code, .. }) if code == "OOM")
}

/// `noeviction` at its limit: every primitive's every write is refused with a typed OOM (nothing
/// ran), reads still answer, and once memory is free everything acknowledged is as it was.
#[tokio::test]
async fn noeviction_refuses_every_write_typed_and_keeps_everything() {
    let server = RedisServer::start(ServerOptions::default()).unwrap();
    let client = Client::connect(&server.url(), ClientConfig::default())
        .await
        .unwrap();
    refuses_typed_and_keeps(&client, &|bytes| {
        faults::set_maxmemory(&server, bytes).unwrap()
    })
    .await;
}

/// The same on a 3-primary cluster, every primary full: the primitives' keys live on different
/// nodes, and each node's OOM reaches the caller typed through the cluster routing.
#[tokio::test]
async fn noeviction_on_a_cluster_refuses_every_write_typed_and_keeps_everything() {
    let cluster = RedisCluster::start(ClusterOptions::primaries_only()).unwrap();
    let client = Client::connect_cluster(&cluster.urls(), ClientConfig::default())
        .await
        .unwrap();
    refuses_typed_and_keeps(&client, &|bytes| {
        for node in cluster.nodes() {
            faults::set_maxmemory(node, bytes).unwrap();
        }
    })
    .await;
}

/// Acknowledges state in every primitive, sets the memory limit to 1 byte with `set_max`,
/// checks every write is refused with OOM and nothing changed, frees the memory (0) and checks
/// everything acknowledged is as it was.
async fn refuses_typed_and_keeps(client: &Client, set_max: &dyn Fn(u64)) {
    client
        .load(redis_atomic::script::registry::ALL)
        .await
        .unwrap();
    let ks = Keyspace::new(unique_prefix("oom")).unwrap();
    let k = kit(client, &ks);
    let (a, b) = (OwnerToken::new("a").unwrap(), OwnerToken::new("b").unwrap());
    let (lock_fence, _) = acknowledge(&k, &a).await;
    let cas = Cas::new(client.clone());
    let key = ks.key("t", 1, "tag", &["n"]).unwrap();
    set_max(1);
    assert!(oom(k.locks.acquire_with_token("other", &b, LONG).await));
    // The release script is refused like every write (the native `DELIFEQ` a Valkey 9 would
    // take is a delete, which a server at its limit still runs: it frees memory).
    let scripted = Locks::new(client.with_config(patient().force_lua(true)), ks.clone());
    assert!(oom(scripted.release("r", &a, lock_fence).await));
    assert!(oom(k.sem.acquire_with_token(&b, LONG).await));
    assert!(oom(k.idem.begin("t", b"new", fp()).await));
    assert!(oom(k.limiter.consume("other", 1).await));
    assert!(oom(k.queue.enqueue("job2", b"p", RunAt::Now).await));
    assert!(oom(k.dedup.first_seen("event2", LONG).await));
    assert!(oom(k.quotas.add("q", 1, bounds(), None).await));
    let write = [Write::set(k.fenced.key("f", "data").unwrap(), "1")];
    assert!(oom(k.fenced.fenced_write("f", Fence(1), &write).await));
    let multi = MultiWrite::new().write(Write::set(key.clone(), "1"));
    assert!(oom(multi.execute(client).await));
    let updated = cas
        .update(&[Read::get(key.clone())], |_| {
            Ok(CasDecision::Commit {
                writes: vec![Write::set(key.clone(), "2")],
                value: (),
            })
        })
        .await;
    assert!(oom(updated), "cas");
    assert!(
        matches!(k.locks.inspect("r").await.unwrap(), LockState::Locked { fence, .. } if fence == lock_fence)
    );
    assert_eq!(k.quotas.get("q").await.unwrap(), 5);
    set_max(0);
    assert!(matches!(
        k.locks.acquire_with_token("r", &b, LONG).await.unwrap(),
        Acquire::Held { .. }
    ));
    assert!(matches!(
        k.sem.acquire_with_token(&b, LONG).await.unwrap(),
        semaphore::Acquire::Full { .. }
    ));
    assert!(matches!(
        k.idem.begin("t", b"req", fp()).await.unwrap(),
        Begin::Replay(_)
    ));
    assert!(!k.limiter.consume("user", 1).await.unwrap().is_allowed());
    assert!(matches!(
        k.queue.inspect("job").await.unwrap(),
        JobState::Queued { .. }
    ));
    assert!(!k.dedup.first_seen("event", LONG).await.unwrap());
    assert_eq!(k.quotas.get("q").await.unwrap(), 5);
}
