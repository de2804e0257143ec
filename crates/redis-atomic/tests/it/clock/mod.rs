//! The server's wall clock jumps ±2 min while the primitives run (the testkit's clock shim:
//! `ServerOptions::clock`, `RedisServer::set_clock_offset`). What must hold, and what a jump
//! does to lease lengths, as `docs/durability.md` states it:
//!
//! * backward: fences stay strictly increasing (`max(last + 1, now)`), no limiter admits more
//!   than its limit in the real window, delayed jobs are neither lost nor run twice; leases taken
//!   before the jump last longer by the jump;
//! * forward: every TTL and lease ends early by the jump (a second holder can take a lock, a job
//!   is delivered again — its first lease's ack is refused, fences still increase), delayed jobs
//!   become due early, windows and buckets refill early.

use redis_atomic::lease::{Fence, OwnerToken, Release};
use redis_atomic::lock::{Acquire, LockState, Locks};
use redis_atomic::queue::{Ack, Claim, JobState, Queue, QueueConfig, RunAt};
use redis_atomic::ratelimit::{Algorithm, Limit, RateLimiter};
use redis_atomic::semaphore::{self, Semaphore, SemaphoreConfig};
use redis_atomic::{Client, ClientConfig, Keyspace};
use redis_atomic_testkit::{unique_prefix, ClockShift, RedisServer, ServerOptions};
use std::time::Duration;

const JUMP: Duration = Duration::from_secs(120);
const LONG: Duration = Duration::from_secs(60);
/// The limiters' period: a jump (120 s) moves past whole windows.
const PERIOD: Duration = Duration::from_secs(30);

async fn jumpy(test: &str) -> (RedisServer, Client, Keyspace) {
    let server = RedisServer::start(ServerOptions {
        clock: true,
        ..Default::default()
    })
    .unwrap();
    let client = Client::connect(&server.url(), ClientConfig::default())
        .await
        .unwrap();
    (server, client, Keyspace::new(unique_prefix(test)).unwrap())
}

fn acquired(a: Acquire) -> redis_atomic::lock::LockGuard {
    match a {
        Acquire::Acquired(g) => g,
        other => panic!("not acquired: {other:?}"),
    }
}

fn permit(a: semaphore::Acquire) -> semaphore::Permit {
    match a {
        semaphore::Acquire::Acquired(p) => p,
        other => panic!("no permit: {other:?}"),
    }
}

fn claimed(c: Claim) -> redis_atomic::queue::Job {
    match c {
        Claim::Claimed(mut jobs) if jobs.len() == 1 => jobs.remove(0),
        other => panic!("expected one job: {other:?}"),
    }
}

/// Across a backward jump, lock, permit and job-lease fences keep increasing; a lease taken
/// before the jump now has the jump added to what it has left.
#[tokio::test]
async fn fences_stay_monotonic_across_a_backward_jump() {
    let (server, client, ks) = jumpy("clock-fences").await;
    let locks = Locks::new(client.clone(), ks.clone());
    let sem = Semaphore::new(client.clone(), &ks, "s", SemaphoreConfig::new(1)).unwrap();
    let queue = Queue::new(client.clone(), &ks, "q", QueueConfig::default()).unwrap();
    let w = OwnerToken::new("w").unwrap();
    let lock_before = acquired(locks.acquire("r", LONG).await.unwrap());
    let f_lock = lock_before.fence();
    lock_before.release().await.unwrap();
    let p = permit(sem.acquire(LONG).await.unwrap());
    let f_sem = p.fence();
    p.release().await.unwrap();
    queue.enqueue("j", b"", RunAt::Now).await.unwrap();
    let job = claimed(queue.claim(&w, LONG, 1).await.unwrap());
    let f_job = job.fence();
    let held = acquired(locks.acquire("held", Duration::from_secs(1)).await.unwrap());

    server.set_clock_offset(JUMP, ClockShift::Behind).unwrap();
    let g = acquired(locks.acquire("r", LONG).await.unwrap());
    assert!(g.fence() > f_lock, "{:?} after {f_lock:?}", g.fence());
    let p = permit(sem.acquire(LONG).await.unwrap());
    assert!(p.fence() > f_sem, "{:?} after {f_sem:?}", p.fence());
    job.nack(Duration::ZERO, "again").await.unwrap(); // due now: the server's (earlier) now
    let job = claimed(queue.claim(&w, LONG, 1).await.unwrap());
    assert!(job.fence() > f_job, "{:?} after {f_job:?}", job.fence());
    assert_eq!(job.ack().await.unwrap(), Ack::Acked);
    match locks.inspect("held").await.unwrap() {
        LockState::Locked { ttl, .. } => assert!(ttl > JUMP, "1 s lease now ends in {ttl:?}"),
        other => panic!("{other:?}"),
    }
    held.release().await.unwrap();
}

/// No algorithm admits more than its limit in the real window across a backward jump (state is
/// absolute server µs and a window never reopens); after a forward jump each admits again, since
/// its windows are the server's.
#[tokio::test]
async fn limiters_admit_no_more_across_a_backward_jump() {
    let (server, client, ks) = jumpy("clock-limits").await;
    let limiters: Vec<(Algorithm, RateLimiter)> = Algorithm::ALL
        .into_iter()
        .map(|a| {
            let limit = Limit::new(a, 5, PERIOD).unwrap();
            (a, RateLimiter::new(client.clone(), ks.clone(), limit))
        })
        .collect();
    clear_of_window_edge(&client).await;
    for (a, l) in &limiters {
        for i in 0..5 {
            assert!(l.consume("k", 1).await.unwrap().is_allowed(), "{a:?} #{i}");
        }
        assert!(!l.consume("k", 1).await.unwrap().is_allowed(), "{a:?}");
    }
    server.set_clock_offset(JUMP, ClockShift::Behind).unwrap();
    for (a, l) in &limiters {
        for _ in 0..5 {
            let d = l.consume("k", 1).await.unwrap();
            assert!(
                !d.is_allowed(),
                "{a:?} admitted after a backward jump: {d:?}"
            );
        }
    }
    server.set_clock_offset(JUMP, ClockShift::Ahead).unwrap();
    for (a, l) in &limiters {
        assert!(l.consume("k", 1).await.unwrap().is_allowed(), "{a:?}");
    }
}

/// Windows are epoch-aligned: waits (at most 2 s) until the server's time is more than 2 s from
/// the next multiple of [`PERIOD`], so the first phase's calls share one window.
async fn clear_of_window_edge(client: &Client) {
    let time: Vec<u64> =
        redis::from_redis_value(client.command(&redis::cmd("TIME")).await.unwrap()).unwrap();
    let into = Duration::from_secs(time[0] % PERIOD.as_secs()) + Duration::from_micros(time[1]);
    let left = PERIOD - into;
    if left < Duration::from_secs(2) {
        tokio::time::sleep(left + Duration::from_millis(50)).await;
    }
}

/// A delayed job across jumps: back, it is still there (due later by the jump), then claimed
/// and acked once; forward, a job due in a minute is due now, claimed once, acked once, and not
/// delivered again when the clock comes back.
#[tokio::test]
async fn delayed_jobs_are_neither_lost_nor_run_twice() {
    let (server, client, ks) = jumpy("clock-jobs").await;
    let q = Queue::new(client, &ks, "q", QueueConfig::default()).unwrap();
    let w = OwnerToken::new("w").unwrap();
    q.enqueue("soon", b"", RunAt::After(Duration::from_millis(300)))
        .await
        .unwrap();
    q.enqueue("later", b"", RunAt::After(LONG)).await.unwrap();
    server.set_clock_offset(JUMP, ClockShift::Behind).unwrap();
    assert!(matches!(
        q.claim(&w, LONG, 10).await.unwrap(),
        Claim::Empty { .. }
    ));
    assert!(
        matches!(q.inspect("soon").await.unwrap(), JobState::Queued { due_in, .. } if due_in > JUMP)
    );
    server
        .set_clock_offset(Duration::ZERO, ClockShift::Ahead)
        .unwrap();
    let soon = claim_within(&q, &w, Duration::from_secs(10)).await;
    assert_eq!(soon.id(), "soon");
    assert_eq!(soon.ack().await.unwrap(), Ack::Acked);
    server.set_clock_offset(JUMP, ClockShift::Ahead).unwrap();
    let later = claimed(q.claim(&w, LONG, 10).await.unwrap());
    assert_eq!(later.id(), "later");
    assert_eq!(later.ack().await.unwrap(), Ack::Acked);
    server
        .set_clock_offset(Duration::ZERO, ClockShift::Ahead)
        .unwrap();
    assert!(matches!(q.claim(&w, LONG, 10).await.unwrap(), Claim::Idle));
    let stats = q.stats().await.unwrap();
    assert_eq!(
        (stats.ready, stats.scheduled, stats.running, stats.acked),
        (0, 0, 0, 2)
    );
}

/// Polls `claim` (bounded) until one job is handed out.
async fn claim_within(q: &Queue, w: &OwnerToken, limit: Duration) -> redis_atomic::queue::Job {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if let Claim::Claimed(mut jobs) = q.claim(w, LONG, 1).await.unwrap() {
            return jobs.remove(0);
        }
        assert!(tokio::time::Instant::now() < deadline, "never due");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A forward jump ends every lease early by the jump: a second owner takes a 60 s lock and a
/// 60 s permit, a 60 s job lease is delivered again; the first holders' releases and acks are
/// refused and every new fence is larger. This is what the docs warn about.
#[tokio::test]
async fn forward_jump_ends_leases_early() {
    let (server, client, ks) = jumpy("clock-forward").await;
    let locks = Locks::new(client.clone(), ks.clone());
    let sem = Semaphore::new(client.clone(), &ks, "s", SemaphoreConfig::new(1)).unwrap();
    let q = Queue::new(client, &ks, "q", QueueConfig::default()).unwrap();
    let (a, b) = (OwnerToken::new("a").unwrap(), OwnerToken::new("b").unwrap());
    let first = acquired(locks.acquire_with_token("r", &a, LONG).await.unwrap());
    let p1 = permit(sem.acquire_with_token(&a, LONG).await.unwrap());
    q.enqueue("j", b"", RunAt::Now).await.unwrap();
    let j1 = claimed(q.claim(&a, LONG, 1).await.unwrap());

    server.set_clock_offset(JUMP, ClockShift::Ahead).unwrap();
    let second = acquired(locks.acquire_with_token("r", &b, LONG).await.unwrap());
    assert!(second.fence() > first.fence());
    assert_eq!(first.release().await.unwrap(), Release::Lost);
    let p2 = permit(sem.acquire_with_token(&b, LONG).await.unwrap());
    assert!(p2.fence() > p1.fence());
    assert_eq!(p1.release().await.unwrap(), Release::Lost);
    let j2 = claimed(q.claim(&b, LONG, 1).await.unwrap());
    assert!(j2.fence() > j1.fence() && j2.deliveries() == 2);
    assert_eq!(j1.ack().await.unwrap(), Ack::Lost);
    assert_eq!(j2.ack().await.unwrap(), Ack::Acked);
    let _: Fence = second.fence();
}
