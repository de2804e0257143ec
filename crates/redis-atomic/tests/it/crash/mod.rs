//! Crashes: the server is SIGKILLed (no shutdown, nothing flushed on the way out) while clients
//! write, then restarted from its data directory. Every acknowledged write of every kind —
//! a lock, a permit, an idempotency record, a rate-limit charge, a job, a dedup sighting, a
//! quota add — is then looked for. With `appendfsync always` none may be missing. With
//! `everysec` the loss is measured (and printed): it may only be writes acknowledged within the
//! last ~2 s before the crash. Without persistence everything is gone, yet fences still grow.

use redis_atomic::dedup::Dedup;
use redis_atomic::idempotency::{Begin, Fingerprint, Idempotency, Response, Stored};
use redis_atomic::lease::{Fence, OwnerToken};
use redis_atomic::lock::{Acquire, LockState, Locks};
use redis_atomic::queue::{Enqueue, JobState, Queue, QueueConfig, RunAt};
use redis_atomic::quota::{Bounded, Bounds, Quotas};
use redis_atomic::ratelimit::{Algorithm, Limit, RateLimiter};
use redis_atomic::semaphore::{self, Semaphore, SemaphoreConfig};
use redis_atomic::{Client, ClientConfig, Keyspace, RetryPolicy};
use redis_atomic_testkit::{unique_prefix, Fsync, RedisServer, ServerOptions};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const LEASE: Duration = Duration::from_secs(600);
const KINDS: usize = 7;

/// Every primitive, on one keyspace.
struct Kit {
    client: Client,
    ks: Keyspace,
    locks: Locks,
    idem: Idempotency,
    limiter: RateLimiter,
    queue: Queue,
    dedup: Dedup,
    quotas: Quotas,
}

impl Kit {
    fn new(client: Client, ks: &Keyspace) -> Kit {
        let hourly = Limit::new(Algorithm::FixedWindow, 1, Duration::from_secs(3600)).unwrap();
        Kit {
            locks: Locks::new(client.clone(), ks.clone()),
            idem: Idempotency::new(client.clone(), ks.clone()),
            limiter: RateLimiter::new(client.clone(), ks.clone(), hourly),
            queue: Queue::new(client.clone(), ks, "q", QueueConfig::default()).unwrap(),
            dedup: Dedup::new(client.clone(), ks.clone()),
            quotas: Quotas::new(client.clone(), ks.clone()),
            ks: ks.clone(),
            client,
        }
    }

    fn sem(&self, name: &str) -> Semaphore {
        Semaphore::new(self.client.clone(), &self.ks, name, SemaphoreConfig::new(1)).unwrap()
    }

    /// Write number `n` (kind `n % KINDS`): `Some(fence or 0)` when acknowledged.
    async fn write(&self, n: usize) -> Option<u64> {
        let name = format!("w{n}");
        let token = OwnerToken::new("holder").unwrap();
        let bounds = Bounds::new(0, i64::MAX >> 12).unwrap();
        match n % KINDS {
            0 => match self
                .locks
                .acquire_with_token(&name, &token, LEASE)
                .await
                .ok()?
            {
                Acquire::Acquired(g) => Some(g.fence().0),
                _ => None,
            },
            1 => match self
                .sem(&name)
                .acquire_with_token(&token, LEASE)
                .await
                .ok()?
            {
                semaphore::Acquire::Acquired(p) => Some(p.fence().0),
                _ => None,
            },
            2 => match self
                .idem
                .begin("t", name.as_bytes(), fp(&name))
                .await
                .ok()?
            {
                Begin::Claimed(c) => c
                    .complete(&Response::new(200, "done"))
                    .await
                    .ok()
                    .map(|_| 0),
                _ => None,
            },
            3 => self
                .limiter
                .consume(&name, 1)
                .await
                .ok()?
                .is_allowed()
                .then_some(0),
            4 => match self.queue.enqueue(&name, b"", RunAt::Now).await.ok()? {
                Enqueue::Enqueued { .. } => Some(0),
                _ => None,
            },
            5 => self.dedup.first_seen(&name, LEASE).await.ok()?.then_some(0),
            _ => match self.quotas.add("total", 1, bounds, None).await.ok()? {
                Bounded::Applied { .. } => Some(0),
                _ => None,
            },
        }
    }

    /// Whether acknowledged write `n` (with its fence) is still in place.
    async fn survived(&self, n: usize, fence: u64) -> bool {
        let name = format!("w{n}");
        match n % KINDS {
            0 => matches!(self.locks.inspect(&name).await.unwrap(),
                LockState::Locked { fence: f, .. } if f == Fence(fence)),
            1 => matches!(
                self.sem(&name).acquire(LEASE).await.unwrap(),
                semaphore::Acquire::Full { .. }
            ),
            2 => matches!(
                self.idem
                    .begin("t", name.as_bytes(), fp(&name))
                    .await
                    .unwrap(),
                Begin::Replay(Stored::Completed(_))
            ),
            3 => !self.limiter.consume(&name, 1).await.unwrap().is_allowed(),
            4 => matches!(
                self.queue.inspect(&name).await.unwrap(),
                JobState::Queued { .. }
            ),
            5 => !self.dedup.first_seen(&name, LEASE).await.unwrap(),
            _ => true, // the quota is counted as a whole (see `crash_under_load`)
        }
    }
}

fn fp(s: &str) -> Fingerprint {
    Fingerprint::of(&[s.as_bytes()])
}

/// What a crash under load did: acknowledged writes (number, fence, when), those missing after
/// the restart (with how long before the kill they were acknowledged), the quota's shortfall.
struct Crash {
    acked: usize,
    lost: Vec<(usize, Duration)>,
    quota_lost: i64,
}

/// Four tasks write (no retries: the first error ends a task) for `load`, the server is
/// SIGKILLed and restarted, and every acknowledged write is looked for.
async fn crash_under_load(opts: ServerOptions, load: Duration, test: &str) -> Crash {
    let mut server = RedisServer::start(opts).unwrap();
    let ks = Keyspace::new(unique_prefix(test)).unwrap();
    let config = ClientConfig::default()
        .timeout(Duration::from_secs(10))
        .retry(RetryPolicy::none());
    let kit = Arc::new(Kit::new(
        Client::connect(&server.url(), config).await.unwrap(),
        &ks,
    ));
    let acked: Arc<Mutex<Vec<(usize, u64, Instant)>>> = Arc::default();
    let mut tasks = tokio::task::JoinSet::new();
    for t in 0..4 {
        let (kit, acked) = (kit.clone(), acked.clone());
        tasks.spawn(async move {
            for i in 0.. {
                let n = i * 4 + t;
                let Some(fence) = kit.write(n).await else {
                    return;
                };
                acked.lock().unwrap().push((n, fence, Instant::now()));
            }
        });
    }
    tokio::time::sleep(load).await;
    let killed = Instant::now();
    server = tokio::task::spawn_blocking(move || {
        server.crash_restart().unwrap();
        server
    })
    .await
    .unwrap();
    while tasks.join_next().await.is_some() {}
    let kit = Kit::new(
        Client::connect(&server.url(), ClientConfig::default())
            .await
            .unwrap(),
        &ks,
    );
    let acked = acked.lock().unwrap().clone();
    let mut lost = Vec::new();
    for &(n, fence, at) in &acked {
        if !kit.survived(n, fence).await {
            lost.push((n, killed.saturating_duration_since(at)));
        }
    }
    let adds = acked
        .iter()
        .filter(|(n, ..)| n % KINDS == KINDS - 1)
        .count();
    let total = kit.quotas.get("total").await.unwrap();
    Crash {
        acked: acked.len(),
        lost,
        quota_lost: (adds as i64 - total).max(0),
    }
}

/// SIGKILL under load on `appendfsync always`: not one acknowledged write of any primitive is
/// missing after the restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_with_fsync_always_loses_nothing_acknowledged() {
    let opts = ServerOptions {
        appendonly: true,
        appendfsync: Some(Fsync::Always),
        ..Default::default()
    };
    let crash = crash_under_load(opts, Duration::from_millis(800), "crash-always").await;
    assert!(crash.acked > 2 * KINDS, "too little load: {}", crash.acked);
    assert_eq!(crash.lost, [], "lost after a crash on fsync always");
    assert_eq!(crash.quota_lost, 0);
}

/// SIGKILL under load on `appendfsync everysec`: the loss is measured; whatever is missing was
/// acknowledged within the last 3 s before the kill (Redis postpones an AOF write by at most
/// 2 s while an fsync is slow, and replies meanwhile).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_with_fsync_everysec_loses_at_most_the_last_seconds() {
    let opts = ServerOptions {
        appendonly: true,
        appendfsync: Some(Fsync::Everysec),
        ..Default::default()
    };
    let crash = crash_under_load(opts, Duration::from_millis(3500), "crash-everysec").await;
    eprintln!(
        "everysec, process crash: {} of {} acknowledged writes lost, quota short by {}",
        crash.lost.len(),
        crash.acked,
        crash.quota_lost
    );
    for (n, before) in &crash.lost {
        assert!(
            *before < Duration::from_secs(3),
            "write {n} acknowledged {before:?} before the kill was lost"
        );
    }
}

/// Without persistence a crash empties the server: a second owner takes a lock whose 10 min
/// lease the first still holds — but its fence is larger (fences are floored at server µs).
#[tokio::test]
async fn crash_without_persistence_loses_locks_but_fences_grow() {
    let mut server = RedisServer::start(ServerOptions::default()).unwrap();
    let ks = Keyspace::new(unique_prefix("crash-none")).unwrap();
    let client = Client::connect(&server.url(), ClientConfig::default())
        .await
        .unwrap();
    let locks = Locks::new(client, ks.clone());
    let Acquire::Acquired(first) = locks.acquire("r", LEASE).await.unwrap() else {
        panic!("free lock not acquired")
    };
    server.crash_restart().unwrap();
    let client = Client::connect(&server.url(), ClientConfig::default())
        .await
        .unwrap();
    let locks = Locks::new(client, ks);
    let Acquire::Acquired(second) = locks.acquire("r", LEASE).await.unwrap() else {
        panic!("the lock survived a restart without persistence")
    };
    assert!(second.fence() > first.fence());
}
