//! What survives a failover, per primitive: records written (and acknowledged) just before it,
//! counted again after it.

use redis_atomic::idempotency::{Begin, Fingerprint, Idempotency, Response};
use redis_atomic::lease::OwnerToken;
use redis_atomic::lock::{Acquire, Locks};
use redis_atomic::queue::{Claim, Queue, QueueConfig, RunAt};
use redis_atomic::quota::{Bounded, Bounds, Quotas};
use redis_atomic::ratelimit::{Decision, Limit, RateLimiter};
use redis_atomic::{Client, Keyspace};
use redis_atomic_testkit::unique_prefix;
use std::time::Duration;

/// Records of each primitive.
const N: usize = 10;
const LEASE: Duration = Duration::from_secs(60);

/// Where one census was written.
pub struct Census {
    ks: Keyspace,
}

/// Per primitive, how many records are there.
#[derive(Debug, PartialEq, Eq)]
pub struct Kept {
    locks: usize,
    idempotency: usize,
    queue: usize,
    ratelimit: usize,
    quota: usize,
}

impl std::fmt::Display for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "locks {}/{N}, idempotency records {}/{N}, queued jobs {}/{N}, rate-limit charges \
             {}/{N}, quota adds {}/{N}",
            self.locks, self.idempotency, self.queue, self.ratelimit, self.quota
        )
    }
}

impl Census {
    /// Everything written.
    pub fn written(&self) -> Kept {
        Kept {
            locks: N,
            idempotency: N,
            queue: N,
            ratelimit: N,
            quota: N,
        }
    }
}

/// A sliding log: its charges count for an hour from each admission. (An epoch-aligned fixed
/// window reset at the top of the hour, and a run straddling it counted every charge lost.)
fn limit() -> Limit {
    Limit::sliding_log(N as u64, Duration::from_secs(3600)).unwrap()
}

fn fingerprint() -> Fingerprint {
    Fingerprint::of(&[b"census"])
}

/// Writes `N` records of each primitive; every one must be acknowledged.
pub async fn write(client: &Client, label: &str) -> Census {
    let ks = Keyspace::new(unique_prefix(label)).unwrap();
    let locks = Locks::new(client.clone(), ks.clone());
    let idem = Idempotency::new(client.clone(), ks.clone());
    let queue = Queue::new(client.clone(), &ks, "q", QueueConfig::default()).unwrap();
    let limiter = RateLimiter::new(client.clone(), ks.clone(), limit());
    let quotas = Quotas::new(client.clone(), ks.clone());
    for i in 0..N {
        let r = locks.acquire(&format!("l{i}"), LEASE).await.unwrap();
        assert!(matches!(r, Acquire::Acquired(_)), "{r:?}");
        let Begin::Claimed(claim) = idem
            .begin("t", format!("k{i}").as_bytes(), fingerprint())
            .await
            .unwrap()
        else {
            panic!("fresh idempotency key not claimed")
        };
        claim
            .complete(&Response::new(200, b"ok".to_vec()))
            .await
            .unwrap();
        queue
            .enqueue(&format!("j{i}"), b"x", RunAt::Now)
            .await
            .unwrap();
        let d = limiter.consume("u", 1).await.unwrap();
        assert!(matches!(d, Decision::Allowed { .. }), "{d:?}");
        let q = quotas
            .add("q", 1, Bounds::up_to(1000).unwrap(), None)
            .await
            .unwrap();
        assert!(matches!(q, Bounded::Applied { .. }), "{q:?}");
    }
    Census { ks }
}

/// Counts what of `census` is still there (through `client`, on whatever primary it finds).
pub async fn count(client: &Client, census: &Census) -> Kept {
    let ks = census.ks.clone();
    let locks = Locks::new(client.clone(), ks.clone());
    let idem = Idempotency::new(client.clone(), ks.clone());
    let queue = Queue::new(client.clone(), &ks, "q", QueueConfig::default()).unwrap();
    let limiter = RateLimiter::new(client.clone(), ks.clone(), limit());
    let quotas = Quotas::new(client.clone(), ks.clone());
    let mut kept = Kept {
        locks: 0,
        idempotency: 0,
        queue: 0,
        ratelimit: N,
        quota: 0,
    };
    for i in 0..N {
        let held = locks.acquire(&format!("l{i}"), LEASE).await.unwrap();
        kept.locks += usize::from(matches!(held, Acquire::Held { .. }));
        let begun = idem
            .begin("t", format!("k{i}").as_bytes(), fingerprint())
            .await
            .unwrap();
        kept.idempotency += usize::from(matches!(begun, Begin::Replay(_)));
    }
    let owner = OwnerToken::new("census").unwrap();
    if let Claim::Claimed(jobs) = queue.claim(&owner, LEASE, N).await.unwrap() {
        kept.queue = jobs.len();
    }
    // A charge that was lost leaves room: every further admission is one lost charge.
    for _ in 0..=N {
        match limiter.consume("u", 1).await.unwrap() {
            Decision::Allowed { .. } => kept.ratelimit -= 1,
            _ => break,
        }
    }
    kept.quota = usize::try_from(quotas.get("q").await.unwrap()).unwrap_or(0);
    kept
}
