//! The queue's invariant under real concurrency and faults: 8 workers drain thousands of jobs
//! while workers die at random (task aborted mid-request, connections dropped) and pause past
//! their visibility timeout. Every job is acked exactly once, no two leases of a job are ever live
//! at the same time, nothing is lost, and poison jobs end in the dead letters.
//!
//! 10 000 jobs in each mode: standalone and the shared cluster, EVALSHA and FCALL.

use crate::common::{env, patient, Env, Mode, MODES};
use redis_atomic::lease::OwnerToken;
use redis_atomic::queue::{Ack, Claim, Job, JobState, Nack, Queue, QueueConfig, RunAt};
use redis_atomic::{Client, Error};
use redis_atomic_testkit::{RedisCluster, RedisServer};
use std::collections::{HashMap, HashSet};
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const WORKERS: usize = 8;
const VIS: Duration = Duration::from_millis(250);
const MAX_DELIVERIES: u32 = 8;
const POISON_EVERY: usize = 200;

/// What the workers saw of one job.
#[derive(Default)]
struct JobLog {
    /// (fence, server ms at claim) of every claim whose reply arrived.
    claims: Vec<(u64, u64)>,
    /// Fences whose ack was accepted.
    acked: Vec<u64>,
    /// Fences whose ack was sent but whose reply never arrived (worker died, timeout).
    ack_unknown: HashSet<u64>,
    /// Fences a nack was sent for (accepted or not): such a lease may end before its deadline.
    nacked: HashSet<u64>,
}

type Ledger = Arc<Mutex<HashMap<String, JobLog>>>;

fn poison(id: &str) -> bool {
    id.trim_start_matches('j').parse::<usize>().unwrap() % POISON_EVERY == 0
}

async fn connect(env: &Env) -> Client {
    let config = crate::common::patient()
        .pool_size(1)
        .delivery(env.mode.delivery());
    match (&env.server, env.mode.cluster()) {
        (Some(server), _) => Client::connect(&server.url(), config).await.unwrap(),
        (None, false) => Client::connect(&RedisServer::shared().url(), config)
            .await
            .unwrap(),
        (None, true) => Client::connect_cluster(&RedisCluster::shared().urls(), config)
            .await
            .unwrap(),
    }
}

fn with_log(ledger: &Ledger, id: &str, f: impl FnOnce(&mut JobLog)) {
    f(ledger.lock().unwrap().entry(id.to_string()).or_default());
}

/// One life of a worker: its own connection, claiming until the queue is drained or it is
/// aborted (its connection then drops with the task).
async fn life(env: Arc<Env>, config: QueueConfig, name: String, ledger: Ledger) {
    let q = Queue::new(connect(&env).await, &env.keyspace, "stress", config).unwrap();
    let name = OwnerToken::new(name).unwrap();
    loop {
        let batch = rand::random_range(1..=16);
        let jobs = match q.claim(&name, VIS, batch).await {
            Ok(Claim::Claimed(jobs)) => jobs,
            Ok(_) => {
                tokio::time::sleep(Duration::from_millis(5)).await;
                continue;
            }
            Err(Error::OutcomeUnknown { .. }) => continue, // leased to nobody until VIS passes
            Err(e) => panic!("claim: {e}"),
        };
        for j in &jobs {
            with_log(&ledger, j.id(), |l| {
                l.claims.push((j.fence().0, j.claimed_at_ms()))
            });
        }
        if rand::random_range(0..50) == 0 {
            tokio::time::sleep(VIS * 2).await; // paused past the lease
        }
        for j in jobs {
            finish(&ledger, j).await;
        }
    }
}

async fn finish(ledger: &Ledger, job: Job) {
    let (id, fence) = (job.id().to_string(), job.fence());
    let id = id.as_str();
    if poison(id) {
        with_log(ledger, id, |l| {
            l.nacked.insert(fence.0);
        });
        match job.nack(Duration::ZERO, "poison").await {
            Ok(Nack::Retrying { .. } | Nack::Dead | Nack::Lost)
            | Err(Error::OutcomeUnknown { .. }) => {}
            other => panic!("nack: {other:?}"),
        }
        return;
    }
    with_log(ledger, id, |l| {
        l.ack_unknown.insert(fence.0);
    });
    match job.ack().await {
        Ok(Ack::Acked) => with_log(ledger, id, |l| {
            l.ack_unknown.remove(&fence.0);
            l.acked.push(fence.0);
        }),
        Ok(Ack::Lost) => with_log(ledger, id, |l| {
            l.ack_unknown.remove(&fence.0);
        }),
        Err(Error::OutcomeUnknown { .. }) => {}
        other => panic!("ack: {other:?}"),
    }
}

/// Keeps a worker slot staffed: each life is aborted after a random 100..1500 ms (dropping its
/// connection, possibly mid-request) and replaced.
async fn slot(env: Arc<Env>, config: QueueConfig, n: usize, ledger: Ledger, done: Arc<AtomicBool>) {
    let mut generation = 0;
    while !done.load(Ordering::SeqCst) {
        let name = format!("w{n}-{generation}");
        let task = tokio::spawn(life(env.clone(), config.clone(), name, ledger.clone()));
        let lifetime = Duration::from_millis(rand::random_range(100..1500));
        let deadline = Instant::now() + lifetime;
        while Instant::now() < deadline && !done.load(Ordering::SeqCst) && !task.is_finished() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        task.abort();
        if let Err(e) = task.await {
            assert!(e.is_cancelled(), "worker panicked: {e}");
        }
        generation += 1;
    }
}

/// 8 workers × many jobs with deaths and pauses: each job acked exactly once with its last fence,
/// leases of one job never overlap (server clock), poison jobs dead after MAX_DELIVERIES.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_die_and_pause_yet_each_job_acked_once() {
    for mode in MODES {
        let jobs = 10_000;
        let started = Instant::now();
        let env = Arc::new(env(mode, "queue-stress", patient()).await);
        let config =
            QueueConfig::default().max_deliveries(NonZeroU32::new(MAX_DELIVERIES).unwrap());
        let q = Queue::new(env.client.clone(), &env.keyspace, "stress", config.clone()).unwrap();
        let ledger: Ledger = Arc::default();
        let done = Arc::new(AtomicBool::new(false));
        let slots: Vec<_> = (0..WORKERS)
            .map(|n| {
                tokio::spawn(slot(
                    env.clone(),
                    config.clone(),
                    n,
                    ledger.clone(),
                    done.clone(),
                ))
            })
            .collect();
        produce(&q, jobs).await;
        drain(&q, Duration::from_secs(90)).await;
        done.store(true, Ordering::SeqCst);
        for s in slots {
            s.await.unwrap();
        }
        let ledger = std::mem::take(&mut *ledger.lock().unwrap());
        check(&q, mode, jobs, &ledger).await;
        eprintln!("{mode:?}: {jobs} jobs in {:?}", started.elapsed());
    }
}

/// Enqueues every job twice (the second enqueue must be a no-op), 32 at a time, at most 200
/// jobs per 40 ms: the queue stays short, so expired leases are claimed again promptly and a
/// paused worker wakes up to find its job taken (the race a stale ack must lose).
async fn produce(q: &Queue, jobs: usize) {
    use futures::StreamExt;
    for chunk in (0..jobs).collect::<Vec<_>>().chunks(200) {
        let tick = tokio::time::sleep(Duration::from_millis(40));
        futures::stream::iter(chunk.iter().flat_map(|&i| [i, i]))
            .map(|i| {
                let id = format!("j{i}");
                async move { q.enqueue(&id, id.as_bytes(), RunAt::Now).await.unwrap() }
            })
            .buffer_unordered(32)
            .collect::<Vec<_>>()
            .await;
        tick.await;
    }
}

/// Waits (bounded) until no job is queued or running.
async fn drain(q: &Queue, limit: Duration) {
    let deadline = Instant::now() + limit;
    loop {
        let s = q.stats().await.unwrap();
        if s.ready + s.scheduled + s.running == 0 {
            return;
        }
        assert!(Instant::now() < deadline, "not drained in {limit:?}: {s:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn check(q: &Queue, mode: Mode, jobs: usize, ledger: &HashMap<String, JobLog>) {
    let poisoned = (0..jobs).filter(|i| i % POISON_EVERY == 0).count();
    let stats = q.stats().await.unwrap();
    assert_eq!(stats.acked as usize, jobs - poisoned, "{mode:?}: {stats:?}");
    assert_eq!(stats.dead as usize, poisoned, "{mode:?}: {stats:?}");
    let mut unknown_resolved = 0;
    for i in 0..jobs {
        let id = format!("j{i}");
        let log = &ledger[&id];
        let mut claims = log.claims.clone();
        claims.sort_unstable();
        for w in claims.windows(2) {
            let ((f1, t1), (f2, t2)) = (w[0], w[1]);
            assert!(f2 > f1, "{mode:?} {id}: fence repeated");
            assert!(
                log.nacked.contains(&f1) || t2 >= t1 + VIS.as_millis() as u64,
                "{mode:?} {id}: lease {f2} began at {t2} while lease {f1} (from {t1}) was live"
            );
        }
        let last = claims.last().map_or(0, |c| c.0);
        if poison(&id) {
            assert!(log.acked.is_empty(), "{mode:?} {id}: poison acked");
            let JobState::Dead { deliveries, error } = q.inspect(&id).await.unwrap() else {
                panic!("{mode:?} {id}: poison job not dead")
            };
            assert_eq!(deliveries, MAX_DELIVERIES, "{mode:?} {id}");
            assert!(
                error == "poison" || error.contains("lease expired"),
                "{error}"
            );
            continue;
        }
        assert!(log.acked.len() <= 1, "{mode:?} {id}: acked {:?}", log.acked);
        if let Some(&fence) = log.acked.first() {
            assert!(fence >= last, "{mode:?} {id}: ack of a superseded lease");
        } else {
            // No ack reply seen: the job must have been acked by a request whose reply was lost.
            let JobState::Acked { fence } = q.inspect(&id).await.unwrap() else {
                panic!("{mode:?} {id}: lost")
            };
            assert!(
                log.ack_unknown.contains(&fence.0),
                "{mode:?} {id}: acked by nobody"
            );
            unknown_resolved += 1;
        }
    }
    let redelivered: usize = ledger
        .values()
        .map(|l| l.claims.len().saturating_sub(1))
        .sum();
    eprintln!(
        "{mode:?}: {redelivered} redeliveries (poison included), {unknown_resolved} acks whose reply was lost to a worker's death"
    );
}
