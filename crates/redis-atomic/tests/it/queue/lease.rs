//! A job as a lease: a stale lease (another worker's now) is refused through its handle and by
//! parts, by fence and by worker; the job through the `Lease` trait; the by-parts ack.

use super::basics::{claim, worker};
use crate::common::{env, patient, queue, MODES};
use redis_atomic::lease::{Extend, Fence, Lease, OwnerToken};
use redis_atomic::queue::{Ack, JobState, Nack, QueueConfig, RunAt};
use std::time::Duration;

/// Once a lease expires and another worker claims the job, the first worker's extend, ack and
/// nack are refused (Lost) and change nothing, through its handle and by parts; the new lease has
/// a larger fence. By parts, a wrong fence or another worker's token is refused too.
#[tokio::test]
async fn stale_fence_is_rejected() {
    for mode in MODES {
        let env = env(mode, "queue-stale", patient()).await;
        let q = queue(&env, "jobs", QueueConfig::default());
        q.enqueue("j", b"p", RunAt::Now).await.unwrap();
        q.enqueue("k", b"p", RunAt::Now).await.unwrap();
        // Two stale handles of worker a: each end verb consumes its handle.
        let mut stale = claim(&q, "a", Duration::from_millis(100), 2).await;
        let (mut a, a_k) = (stale.remove(0), stale.remove(0));
        assert_eq!((a.id(), a_k.id()), ("j", "k"));
        let wrong = Fence(a.fence().0 + 1);
        assert_eq!(q.ack("j", a.token(), wrong).await.unwrap(), Ack::Lost);
        let intruder = worker("intruder");
        assert_eq!(q.ack("j", &intruder, a.fence()).await.unwrap(), Ack::Lost);
        let ext = a.extend(Duration::from_millis(100)).await;
        assert_eq!(
            ext.unwrap(),
            Extend::Extended {
                fence: a.fence(),
                ttl: Duration::from_millis(100)
            }
        );
        tokio::time::sleep(Duration::from_millis(250)).await; // a "pauses" past its lease
        let mut fresh = claim(&q, "b", Duration::from_secs(30), 2).await;
        let (b, b_k) = (fresh.remove(0), fresh.remove(0));
        assert!(b.fence() > a.fence(), "{mode:?}: fence did not increase");
        assert_eq!(b.deliveries(), 2);
        let ext = Duration::from_secs(60);
        let expires_by = a.expires_by();
        assert_eq!(a.extend(ext).await.unwrap(), Extend::Lost);
        assert_eq!(
            a.expires_by(),
            expires_by,
            "a lost extend moved the deadline"
        );
        let (token, fence) = (a.token().clone(), a.fence());
        assert_eq!(
            q.extend("j", &token, fence, ext).await.unwrap(),
            Extend::Lost
        );
        assert_eq!(a.ack().await.unwrap(), Ack::Lost);
        assert_eq!(q.ack("j", &token, fence).await.unwrap(), Ack::Lost);
        let nack = a_k.nack(Duration::ZERO, "x").await.unwrap();
        assert_eq!(nack, Nack::Lost);
        let nack = q
            .nack("j", &token, fence, Duration::ZERO, "x")
            .await
            .unwrap();
        assert_eq!(nack, Nack::Lost);
        let b_token = b.token().clone();
        assert_eq!(
            q.nack("j", &intruder, b.fence(), Duration::ZERO, "x")
                .await
                .unwrap(),
            Nack::Lost
        );
        assert_eq!(
            q.extend("j", &intruder, b.fence(), ext).await.unwrap(),
            Extend::Lost
        );
        assert_eq!(b_token, worker("b"));
        match q.inspect("j").await.unwrap() {
            JobState::Running {
                fence, worker, ttl, ..
            } => {
                assert_eq!((fence, worker.as_str()), (b.fence(), "b"));
                assert!(ttl <= Duration::from_secs(30), "stale extend extended");
            }
            other => panic!("{mode:?}: {other:?}"),
        }
        assert_eq!(b.ack().await.unwrap(), Ack::Acked);
        assert_eq!(b_k.ack().await.unwrap(), Ack::Acked);
    }
}

/// Extends any lease through the `Lease` trait alone: its fence, token and the outcome.
async fn renew(lease: &mut impl Lease, ttl: Duration) -> (Fence, OwnerToken, Extend) {
    let outcome = lease.extend(ttl).await.unwrap();
    (lease.fence(), lease.token().clone(), outcome)
}

/// A job is a `Lease`: through the trait its fence and token (the worker) are the claim's, an
/// extension answers `Extended` with that fence and moves `expires_by` forward, and after the ack
/// the same call answers `Lost`.
#[tokio::test]
async fn job_works_through_the_lease_trait() {
    for mode in MODES {
        let env = env(mode, "queue-lease", patient()).await;
        let q = queue(&env, "jobs", QueueConfig::default());
        q.enqueue("j", b"p", RunAt::Now).await.unwrap();
        let mut job = claim(&q, "w-7", Duration::from_secs(30), 1).await.remove(0);
        let (claimed, before) = (job.fence(), job.expires_by());
        let ttl = Duration::from_secs(60);
        let (fence, token, outcome) = renew(&mut job, ttl).await;
        assert_eq!((fence, token), (claimed, worker("w-7")), "{mode:?}");
        assert_eq!(outcome, Extend::Extended { fence, ttl }, "{mode:?}");
        assert!(job.expires_by() > before, "{mode:?}: expires_by not moved");
        assert!(matches!(
            q.inspect("j").await.unwrap(),
            JobState::Running { ttl, .. } if ttl > Duration::from_secs(30)
        ));
        let by_parts = q.ack("j", job.token(), job.fence()).await.unwrap();
        assert_eq!(by_parts, Ack::Acked);
        let (fence, _, outcome) = renew(&mut job, ttl).await;
        assert_eq!((fence, outcome), (claimed, Extend::Lost), "{mode:?}");
        assert_eq!(job.ack().await.unwrap(), Ack::Acked, "{mode:?}: repeat");
    }
}

/// A caller without the handle (another process) acks by parts with the job's id, worker and
/// fence; the handle then sees the job acked (a repeat answers `Acked` within the dedup window),
/// and the job is complete.
#[tokio::test]
async fn by_parts_ack_with_a_jobs_id_and_fence_acks_it() {
    for mode in MODES {
        let env = env(mode, "queue-parts", patient()).await;
        let q = queue(&env, "jobs", QueueConfig::default());
        q.enqueue("j", b"p", RunAt::Now).await.unwrap();
        let job = claim(&q, "w", Duration::from_secs(30), 1).await.remove(0);
        let (id, fence) = (job.id().to_string(), job.fence());
        let elsewhere = queue(&env, "jobs", QueueConfig::default());
        assert_eq!(
            elsewhere.ack(&id, &worker("w"), fence).await.unwrap(),
            Ack::Acked,
            "{mode:?}"
        );
        assert_eq!(job.ack().await.unwrap(), Ack::Acked, "{mode:?}");
        assert!(
            matches!(q.inspect("j").await.unwrap(), JobState::Acked { fence: f } if f == fence)
        );
        let stats = q.stats().await.unwrap();
        assert_eq!((stats.ready, stats.running, stats.acked), (0, 0, 1));
    }
}
