//! Request ids under lost replies: quota adds (`Quotas::add_with_id`) and queue claims
//! (`Queue::claim_with_id`) sent many times while replies are dropped at random, on a standalone
//! server (the fault proxy swallows replies) and on a cluster (every node stalled past the
//! call's timeout). Each call whose reply was lost is resent with the same id; the server's
//! state then shows one effect per id: the counter equals the sum of the admitted ids' amounts,
//! and every job is delivered once and acked once.

use crate::common::{impatient, patient, stalled_for};
use redis_atomic::lease::OwnerToken;
use redis_atomic::queue::{Ack, Claim, Queue, QueueConfig, RunAt};
use redis_atomic::quota::{Bounded, Bounds, Quotas};
use redis_atomic::{Client, ClientConfig, Delivery, Keyspace, RetryPolicy};
use redis_atomic_testkit::{
    unique_prefix, ClusterOptions, Fault, FaultProxy, RedisCluster, RedisServer, ServerOptions,
};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const TASKS: usize = 4;
const ADDS_PER_TASK: usize = 50;
const CAP: i64 = 250;
const JOBS: usize = 60;
const LOSSY_TIMEOUT: Duration = Duration::from_millis(100);

/// Clients for one run: `lossy` (short timeout, no retries: a lost reply is an error the test
/// resolves) and `patient` (direct, for resends and inspection).
struct Run {
    lossy: Client,
    patient: Client,
    keyspace: Keyspace,
    /// Calls whose first attempt failed (a lost reply, mostly) and were resent with their id.
    resent: AtomicU64,
}

/// Drops replies at random until `stop`: `fault(true)` starts losing them for a time drawn from
/// `on` (ms), `fault(false)` ends it for 5..40 ms.
async fn chaos(stop: Arc<AtomicBool>, on: std::ops::Range<u64>, fault: impl Fn(bool)) {
    while !stop.load(Ordering::SeqCst) {
        let (on, off) = (rand::random_range(on.clone()), rand::random_range(5..40));
        fault(true);
        tokio::time::sleep(Duration::from_millis(on)).await;
        fault(false);
        tokio::time::sleep(Duration::from_millis(off)).await;
    }
}

/// A random pause of 0..5 ms between a task's calls: the calls spread over many fault windows.
async fn pace() {
    tokio::time::sleep(Duration::from_millis(rand::random_range(0..5))).await;
}

/// Many adds with distinct ids (amounts 1..=5, capped at [`CAP`], so some are refused); a failed
/// call is resent with its id. Returns each id's final answer.
async fn quota_adds(run: &Run) -> HashMap<String, (i64, Bounded)> {
    let lossy = Quotas::new(run.lossy.clone(), run.keyspace.clone());
    let patient = Quotas::new(run.patient.clone(), run.keyspace.clone());
    let bounds = Bounds::up_to(CAP).unwrap();
    let tasks = (0..TASKS).map(|t| {
        let (lossy, patient) = (lossy.clone(), patient.clone());
        async move {
            let mut answers = Vec::new();
            for i in 0..ADDS_PER_TASK {
                let (id, amount) = (format!("req-{t}-{i}"), 1 + (i % 5) as i64);
                let answer = match lossy.add_with_id("q", amount, bounds, None, &id).await {
                    Ok(a) => a,
                    Err(_) => {
                        run.resent.fetch_add(1, Ordering::SeqCst);
                        patient
                            .add_with_id("q", amount, bounds, None, &id)
                            .await
                            .unwrap()
                    }
                };
                answers.push((id, (amount, answer)));
                pace().await;
            }
            answers
        }
    });
    futures::future::join_all(tasks)
        .await
        .into_iter()
        .flatten()
        .collect()
}

/// The counter holds exactly the sum of the admitted ids' amounts (one charge per id), and a
/// repeat of every id returns its answer again.
async fn assert_one_charge_per_id(run: &Run, answers: &HashMap<String, (i64, Bounded)>) {
    let patient = Quotas::new(run.patient.clone(), run.keyspace.clone());
    let admitted: i64 = answers
        .values()
        .filter_map(|(amount, a)| matches!(a, Bounded::Applied { .. }).then_some(*amount))
        .sum();
    assert_eq!(answers.len(), TASKS * ADDS_PER_TASK);
    assert_eq!(patient.get("q").await.unwrap(), admitted, "charged twice");
    assert!(
        admitted <= CAP
            && answers
                .values()
                .any(|(_, a)| matches!(a, Bounded::Refused { .. }))
    );
    let bounds = Bounds::up_to(CAP).unwrap();
    for (id, (amount, answer)) in answers {
        let again = patient.add_with_id("q", *amount, bounds, None, id).await;
        assert_eq!(&again.unwrap(), answer, "{id}: a repeat changed the answer");
    }
    assert_eq!(patient.get("q").await.unwrap(), admitted);
}

/// Workers claim (fresh claim id per claim, resent on failure) and ack until every job is
/// acked: each job is delivered exactly once (deliveries 1, one claim id), none is lost.
async fn claims_and_acks(run: &Run) {
    let config = QueueConfig::default();
    let lossy = Queue::new(run.lossy.clone(), &run.keyspace, "jobs", config.clone()).unwrap();
    let patient = Queue::new(run.patient.clone(), &run.keyspace, "jobs", config).unwrap();
    for j in 0..JOBS {
        patient
            .enqueue(&format!("job-{j}"), b"p", RunAt::Now)
            .await
            .unwrap();
    }
    let acked = AtomicU64::new(0);
    let deadline = Instant::now() + Duration::from_secs(20);
    let workers = (0..TASKS).map(|w| {
        let (lossy, patient, acked) = (&lossy, &patient, &acked);
        async move {
            let worker = OwnerToken::new(format!("w{w}")).unwrap();
            let mut seen = Vec::new();
            for c in 0.. {
                if acked.load(Ordering::SeqCst) == JOBS as u64 {
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "jobs lost: {acked:?} of {JOBS} acked"
                );
                let id = format!("claim-{w}-{c}");
                let vis = Duration::from_secs(30);
                let claim = match lossy.claim_with_id(&worker, vis, 3, &id).await {
                    Ok(claim) => claim,
                    Err(_) => {
                        run.resent.fetch_add(1, Ordering::SeqCst);
                        patient.claim_with_id(&worker, vis, 3, &id).await.unwrap()
                    }
                };
                let Claim::Claimed(jobs) = claim else {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                };
                for job in jobs {
                    assert_eq!(job.deliveries(), 1, "{}: delivered twice", job.id());
                    let ack = match lossy.ack(job.id(), &worker, job.fence()).await {
                        Ok(a) => a,
                        Err(_) => patient.ack(job.id(), &worker, job.fence()).await.unwrap(),
                    };
                    assert_eq!(ack, Ack::Acked, "{}", job.id());
                    acked.fetch_add(1, Ordering::SeqCst);
                    seen.push(job.id().to_string());
                }
                pace().await;
            }
            seen
        }
    });
    let mut all: Vec<String> = futures::future::join_all(workers)
        .await
        .into_iter()
        .flatten()
        .collect();
    all.sort();
    let mut expected: Vec<String> = (0..JOBS).map(|j| format!("job-{j}")).collect();
    expected.sort();
    assert_eq!(all, expected, "each job acked exactly once");
    let k = patient.keys();
    for key in [&k.due, &k.inflight] {
        let n = run.patient.command(redis::cmd("ZCARD").arg(key)).await;
        assert_eq!(redis::from_redis_value::<i64>(n.unwrap()).unwrap(), 0);
    }
}

/// Runs the quota and queue workloads while `fault` loses replies (windows of `on` ms), then
/// checks that enough calls were resent and that each id had one effect.
async fn one_effect_per_id(run: &Run, on: std::ops::Range<u64>, fault: impl Fn(bool)) {
    let stop = Arc::new(AtomicBool::new(false));
    let work = async {
        let answers = quota_adds(run).await;
        claims_and_acks(run).await;
        stop.store(true, Ordering::SeqCst);
        answers
    };
    let (answers, ()) = tokio::join!(work, chaos(stop.clone(), on, &fault));
    fault(false);
    let resent = run.resent.load(Ordering::SeqCst);
    assert!(resent >= 10, "too few replies lost: {resent}");
    assert_one_charge_per_id(run, &answers).await;
}

/// Standalone: the fault proxy forwards requests and swallows replies at random.
#[tokio::test]
async fn lost_replies_standalone_one_effect_per_id() {
    let server = RedisServer::start(ServerOptions::default()).unwrap();
    let proxy = FaultProxy::start(server.addr().unwrap()).unwrap();
    let patient = Client::connect(&server.url(), patient()).await.unwrap();
    patient
        .load(redis_atomic::script::registry::ALL)
        .await
        .unwrap();
    let lossy_config = ClientConfig::default()
        .timeout(LOSSY_TIMEOUT)
        .retry(RetryPolicy::none());
    let lossy = Client::connect(&proxy.url(), lossy_config).await.unwrap();
    let run = Run {
        lossy,
        patient,
        keyspace: Keyspace::new(unique_prefix("reqid-standalone")).unwrap(),
        resent: AtomicU64::new(0),
    };
    let fault = |on: bool| proxy.set(if on { Fault::DropReplies } else { Fault::None });
    // Any request sent while replies are dropped loses its reply, however short the window.
    one_effect_per_id(&run, 10..60, fault).await;
    assert!(proxy.stats().replies_dropped > 0, "no reply was lost");
}

/// Cluster (FCALL): every node stalled (SIGSTOP) past the lossy call's timeout, at random; the
/// stalled requests run when the nodes resume, their replies unread.
#[tokio::test]
async fn lost_replies_cluster_one_effect_per_id() {
    let cluster = RedisCluster::start(ClusterOptions {
        node_timeout_ms: 5000, // stalls never look like failures: no failover
        ..ClusterOptions::primaries_only()
    })
    .unwrap();
    let config = patient().delivery(Delivery::Functions);
    let patient = Client::connect_cluster(&cluster.urls(), config)
        .await
        .unwrap();
    patient
        .load(redis_atomic::script::registry::ALL)
        .await
        .unwrap();
    let run = Run {
        lossy: impatient(&patient, LOSSY_TIMEOUT, RetryPolicy::none()),
        patient,
        keyspace: Keyspace::new(unique_prefix("reqid-cluster")).unwrap(),
        resent: AtomicU64::new(0),
    };
    let fault = |on: bool| {
        for node in cluster.nodes() {
            if on {
                node.pause()
            } else {
                node.resume()
            }
        }
    };
    // A stall must outlast the lossy timeout for the call to give up on its reply.
    one_effect_per_id(&run, 150..250, fault).await;
}

/// With retries on, the binding itself resends an add with an id and a claim with an id after a
/// timeout (both `retry: safe`): one Ok each, one charge, one delivery.
#[tokio::test]
async fn ids_are_resent_by_the_binding() {
    let server = RedisServer::start(ServerOptions::default()).unwrap();
    let client = Client::connect(&server.url(), patient()).await.unwrap();
    client
        .load(redis_atomic::script::registry::ALL)
        .await
        .unwrap();
    let ks = Keyspace::new(unique_prefix("reqid-resend")).unwrap();
    let retry = RetryPolicy::new(20, Duration::from_secs(10));
    let retrying = impatient(&client, LOSSY_TIMEOUT, retry);
    let quotas = Quotas::new(retrying.clone(), ks.clone());
    let bounds = Bounds::up_to(100).unwrap();
    let add = quotas.add_with_id("q", 7, bounds, None, "r1");
    let got = stalled_for(&server, Duration::from_millis(250), add).await;
    assert_eq!(got.unwrap(), Bounded::Applied { value: 7 });
    let direct = Quotas::new(client.clone(), ks.clone());
    assert_eq!(direct.get("q").await.unwrap(), 7, "charged twice");

    let queue = Queue::new(retrying, &ks, "jobs", QueueConfig::default()).unwrap();
    queue.enqueue("a", b"x", RunAt::Now).await.unwrap();
    queue.enqueue("b", b"y", RunAt::Now).await.unwrap();
    let worker = OwnerToken::new("w").unwrap();
    let claim = queue.claim_with_id(&worker, Duration::from_secs(30), 1, "c1");
    let Claim::Claimed(jobs) = stalled_for(&server, Duration::from_millis(250), claim)
        .await
        .unwrap()
    else {
        panic!("nothing claimed")
    };
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].deliveries(), 1);
    let direct = Queue::new(client, &ks, "jobs", QueueConfig::default()).unwrap();
    let Claim::Claimed(rest) = direct
        .claim(&worker, Duration::from_secs(30), 10)
        .await
        .unwrap()
    else {
        panic!("the other job is gone")
    };
    assert_eq!(rest.len(), 1, "the resend leased a second job");
    assert_ne!(rest[0].id(), jobs[0].id());
}
