//! A slot moves between cluster nodes (`SETSLOT MIGRATING/IMPORTING`, `MIGRATE` in batches,
//! `SETSLOT NODE`) while workers use it: scripts by `EVALSHA` and `FCALL`, scripts with `WAIT`,
//! plain commands and optimistic updates on dedicated `WATCH` connections. No call may fail (an
//! `ASK` is followed with `ASKING` on the importing node; `TRYAGAIN`, while a call's keys are
//! split between the nodes, is retried), and the invariants hold: one lock holder at a time,
//! every acknowledged increment counted once. No call is retried for `ASK` either (the metric
//! says so): a retry through the slot map would reach the migrating node again, and only the
//! end of the migration would let it through. Retries are counted in a recorder of the test's
//! own; the slot moves on a cluster of these tests' own.

use crate::common::metrics::Recorded;
use redis_atomic::cas::{Cas, CasOutcome, Decision, Read};
use redis_atomic::lease::Release;
use redis_atomic::lock::{Acquire, Locks};
use redis_atomic::ratelimit::{Limit, RateLimiter};
use redis_atomic::write::Write;
use redis_atomic::{Client, ClientConfig, Delivery, Keyspace, RetryPolicy};
use redis_atomic_testkit::history::check_leases;
use redis_atomic_testkit::{
    for_the_process, unique_prefix, ClusterOptions, LeaseSpan, RedisCluster,
};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The hash tag every key of the test carries: one slot, the one that moves.
const TAG: &str = "moving";

#[derive(Default)]
struct Record {
    errors: Mutex<Vec<String>>,
    spans: Mutex<Vec<LeaseSpan>>,
    increments: AtomicU64,
    commits: AtomicU64,
    decisions: AtomicU64,
}

impl Record {
    fn failed(&self, what: &str, e: impl std::fmt::Debug) {
        self.errors.lock().unwrap().push(format!("{what}: {e:?}"));
    }
}

struct Env {
    ks: Keyspace,
    start: Instant,
    stop: AtomicBool,
    rec: Record,
}

/// Takes the lock, increments a counter inside it with a plain command, releases.
async fn lock_worker(env: Arc<Env>, client: Client) {
    let locks = Locks::new(client.clone(), env.ks.clone());
    let counter = env.ks.key("test", 1, TAG, &["counter"]).unwrap();
    let lease = Duration::from_secs(10);
    while !env.stop.load(Ordering::SeqCst) {
        let invoked = env.start.elapsed();
        let guard = match locks.acquire(TAG, lease).await {
            Ok(Acquire::Acquired(g)) => g,
            Ok(_) => {
                tokio::task::yield_now().await;
                continue;
            }
            Err(e) => return env.rec.failed("acquire", e),
        };
        let acquired = env.start.elapsed();
        if let Err(e) = client.command(redis::cmd("INCR").arg(&counter)).await {
            return env.rec.failed("INCR", e);
        }
        env.rec.increments.fetch_add(1, Ordering::SeqCst);
        let released = env.start.elapsed();
        env.rec.spans.lock().unwrap().push(LeaseSpan {
            resource: TAG.into(),
            fence: guard.fence().0,
            acquire_invoked: invoked,
            acquire_completed: acquired,
            release_invoked: Some(released),
            lease,
        });
        if let Err(e) = guard.release().await {
            return env.rec.failed("release", e);
        }
    }
}

/// Increments a value by `WATCH`/`MULTI`/`EXEC` on a dedicated connection.
async fn cas_worker(env: Arc<Env>, client: Client) {
    let key = env.ks.key("test", 1, TAG, &["cas"]).unwrap();
    let cas = Cas::new(client);
    while !env.stop.load(Ordering::SeqCst) {
        let out = cas
            .update(&[Read::get(&key)], |s| {
                let v = s.get::<Option<u64>>(0)?.unwrap_or(0);
                Ok(Decision::commit(
                    vec![Write::set(&key, (v + 1).to_string())],
                    v,
                ))
            })
            .await;
        match out {
            Ok(CasOutcome::Committed(_)) => {
                env.rec.commits.fetch_add(1, Ordering::SeqCst);
            }
            other => return env.rec.failed("cas", other),
        }
    }
}

/// Charges a rate limit that never runs out.
async fn limit_worker(env: Arc<Env>, client: Client) {
    let limit = Limit::fixed_window(1_000_000_000, Duration::from_secs(3600)).unwrap();
    let limiter = RateLimiter::new(client, env.ks.clone(), limit);
    while !env.stop.load(Ordering::SeqCst) {
        if let Err(e) = limiter.consume(TAG, 1).await {
            return env.rec.failed("consume", e);
        }
        env.rec.decisions.fetch_add(1, Ordering::SeqCst);
    }
}

/// `redis_atomic_retries_total{reason}`, summed over the primitives `which` selects.
fn retries(m: &Recorded, reason: &str, which: impl Fn(&str) -> bool) -> u64 {
    let label = |labels: &[(String, String)], k: &str| {
        labels
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
    };
    m.counters()
        .into_iter()
        .filter(|(name, ..)| name == redis_atomic::observe::RETRIES_TOTAL)
        .filter(|(_, labels, _)| {
            label(labels, "reason").as_deref() == Some(reason)
                && label(labels, "primitive").is_some_and(|p| which(&p))
        })
        .map(|(.., n)| n)
        .sum()
}

/// Each primitive/op retried for `reason`, for a failure's message.
fn retried(m: &Recorded, reason: &str) -> String {
    let mut out = Vec::new();
    for (name, labels, n) in m.counters() {
        let labels: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        if name == redis_atomic::observe::RETRIES_TOTAL
            && labels.contains(&format!("reason={reason}"))
        {
            out.push(format!("{labels:?}: {n}"));
        }
    }
    out.join("; ")
}

/// The cluster whose slot these tests move: their own (moving a slot of the shared cluster would
/// redirect every other test's calls), started on first use.
pub(super) fn cluster() -> &'static RedisCluster {
    static CLUSTER: OnceLock<RedisCluster> = OnceLock::new();
    CLUSTER
        .get_or_init(|| for_the_process(|| RedisCluster::start(ClusterOptions::default()).unwrap()))
}

/// Holds [`cluster`] for one test at a time: each counts the `ASKING` calls its nodes serve.
pub(super) fn alone() -> std::sync::MutexGuard<'static, ()> {
    static ONE: Mutex<()> = Mutex::new(());
    ONE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `ASKING` calls a node has served.
pub(super) fn asking_calls(cluster: &RedisCluster, node: usize) -> u64 {
    let calls = redis_atomic_testkit::command_calls(&cluster.nodes()[node].client()).unwrap();
    calls.get("asking").copied().unwrap_or(0)
}

/// Half a migration, held still: the slot of `{held}` is MIGRATING on its owner and IMPORTING on
/// another node, and some keys have moved (a held lock, a value). Each path reaches the moved
/// keys through `ASK` at once, without a retry: a command, a script (`EVALSHA`, `FCALL`, with
/// `WAIT`), an optimistic update on a dedicated connection. (A script that would create keys
/// while others of its slot are still on the source gets `TRYAGAIN` from the importing node until
/// the migration ends: a multi-key request needs all its keys on one node.) Then the migration is
/// completed.
async fn half_migrated(
    m: &Recorded,
    cluster: &'static RedisCluster,
    clients: [&Client; 3],
    ks: &Keyspace,
) {
    let eval = clients[0];
    let tag = "held";
    let moved = ks.key("test", 1, tag, &["moved"]).unwrap();
    let stays = ks.key("test", 1, tag, &["stays"]).unwrap();
    for key in [&moved, &stays] {
        let set = redis::cmd("SET").arg(key).arg(1).clone();
        eval.command(&set).await.unwrap();
    }
    let locks = Locks::new(eval.clone(), ks.clone());
    let Acquire::Acquired(guard) = locks.acquire(tag, Duration::from_secs(60)).await.unwrap()
    else {
        panic!("free lock refused")
    };
    let lock = locks.keys(tag).unwrap();
    let slot = redis_atomic::keys::slot(tag.as_bytes());
    let from = cluster.owner_of(slot).unwrap();
    let to = (from + 1) % 3;
    let moving = [moved.as_str(), &lock.lock, &lock.fence];
    cluster.begin_migration(slot, to, &moving).unwrap();
    let asking = asking_calls(cluster, to);

    let one = redis::Value::BulkString(b"1".to_vec());
    for key in [&moved, &stays] {
        let get = redis::cmd("GET").arg(key).clone();
        assert_eq!(eval.command(&get).await.unwrap(), one);
    }
    for client in clients {
        let locks = Locks::new(client.clone(), ks.clone());
        let r = locks.acquire(tag, Duration::from_secs(60)).await;
        assert!(matches!(r, Ok(Acquire::Held { .. })), "{r:?}");
    }
    let released = guard.release().await;
    assert!(
        matches!(released, Ok(Release::Released { .. })),
        "{released:?}"
    );
    let out = Cas::new(eval.clone())
        .update(&[Read::get(&moved)], |s| {
            let v = s.get::<Option<u64>>(0)?.unwrap_or(0);
            Ok(Decision::commit(
                vec![Write::set(&moved, (v + 1).to_string())],
                v + 1,
            ))
        })
        .await
        .unwrap();
    assert_eq!(out, CasOutcome::Committed(2));
    assert!(
        asking_calls(cluster, to) > asking,
        "the moved keys were not reached by ASKING"
    );
    assert_eq!(
        retries(m, "ask", |_| true),
        0,
        "an ASK went back to the retry loop"
    );
    tokio::task::spawn_blocking(move || cluster.migrate_slot(slot, to, 10).unwrap())
        .await
        .unwrap();
}

/// The slot moves to another primary and back while every kind of call runs on it: none fails,
/// `ASKING` was used, no script or command was retried for `ASK` (an optimistic update whose
/// watched key moved between `WATCH` and `EXEC` starts over: its watch is void), and the
/// invariants hold.
#[test]
fn calls_follow_ask_while_a_slot_moves() {
    let _alone = alone();
    let m = Recorded::new();
    m.block_on(slot_moves(&m));
}

async fn slot_moves(m: &Recorded) {
    let cluster = cluster();
    // TRYAGAIN (a call's keys split between the nodes: the lock and its fence record) clears
    // within a migration batch or two; give it the attempts.
    let config = ClientConfig::default().retry(RetryPolicy::new(20, Duration::from_secs(10)));
    let urls = cluster.urls();
    let connect = |config: ClientConfig| Client::connect_cluster(&urls, config);
    let eval = connect(config.clone()).await.unwrap();
    let fcall = connect(config.clone().delivery(Delivery::Functions))
        .await
        .unwrap();
    let durable = connect(config.replicas(1, Duration::from_secs(2)))
        .await
        .unwrap();
    let env = Arc::new(Env {
        ks: Keyspace::new(unique_prefix("ask")).unwrap(),
        start: Instant::now(),
        stop: AtomicBool::new(false),
        rec: Record::default(),
    });
    // Keys to move in batches, so the migration takes a while.
    for i in 0..60 {
        let key = env
            .ks
            .key("test", 1, TAG, &["filler", &i.to_string()])
            .unwrap();
        eval.command(redis::cmd("SET").arg(&key).arg(i))
            .await
            .unwrap();
    }
    half_migrated(m, cluster, [&eval, &fcall, &durable], &env.ks).await;
    let slot = redis_atomic::keys::slot(TAG.as_bytes());
    let from = cluster.owner_of(slot).unwrap();
    let to = (from + 1) % 3;
    let before = [asking_calls(cluster, from), asking_calls(cluster, to)];

    let mut tasks = Vec::new();
    for client in [&eval, &eval, &fcall, &durable] {
        tasks.push(tokio::spawn(lock_worker(env.clone(), client.clone())));
    }
    tasks.push(tokio::spawn(cas_worker(env.clone(), eval.clone())));
    tasks.push(tokio::spawn(limit_worker(env.clone(), fcall.clone())));
    tokio::time::sleep(Duration::from_millis(100)).await;
    let moving = Instant::now();
    tokio::task::spawn_blocking(move || {
        cluster.migrate_slot(slot, to, 4).unwrap();
        cluster.migrate_slot(slot, from, 4).unwrap();
    })
    .await
    .unwrap();
    let moving = moving.elapsed();
    tokio::time::sleep(Duration::from_millis(100)).await;
    env.stop.store(true, Ordering::SeqCst);
    for t in tasks {
        t.await.unwrap();
    }

    let errors = env.rec.errors.lock().unwrap().clone();
    assert!(
        errors.is_empty(),
        "calls failed while the slot moved: {errors:?}"
    );
    let asked = [
        asking_calls(cluster, from) - before[0],
        asking_calls(cluster, to) - before[1],
    ];
    assert!(asked.iter().sum::<u64>() > 0, "no ASK followed: {asked:?}");
    // `Client::command` follows a chain of up to three redirects (a MOVED to the node the slot
    // is leaving again, then its ASK, as the slot moves back): only a longer one returns to the
    // retry loop, which resends (a redirect means nothing ran), and never an error above.
    let looped = retries(m, "ask", |p| p != "cas");
    assert!(
        looped * 10 <= asked.iter().sum::<u64>(),
        "{looped} ASKs went back to the retry loop, {asked:?} followed: {}",
        retried(m, "ask")
    );
    let spans = env.rec.spans.lock().unwrap().clone();
    let leases = check_leases(&spans, 1);
    assert!(leases.ok(), "{:?}", leases.violations);
    let get = |part: &str| {
        let key = env.ks.key("test", 1, TAG, &[part]).unwrap();
        let eval = eval.clone();
        async move {
            let v = eval.command(redis::cmd("GET").arg(&key)).await.unwrap();
            redis::from_redis_value::<Option<u64>>(v)
                .unwrap()
                .unwrap_or(0)
        }
    };
    assert_eq!(
        get("counter").await,
        env.rec.increments.load(Ordering::SeqCst)
    );
    assert_eq!(get("cas").await, env.rec.commits.load(Ordering::SeqCst));
    eprintln!(
        "slot {slot} moved {from}→{to}→{from} in {:?}: {} critical sections, {} CAS commits, \
         {} rate-limit decisions, ASKING on the importing nodes: {asked:?}; retries: TRYAGAIN {}, \
         MOVED {}, CAS restarted by ASK (watched key moved) {}",
        moving,
        spans.len(),
        env.rec.commits.load(Ordering::SeqCst),
        env.rec.decisions.load(Ordering::SeqCst),
        retries(m, "tryagain", |_| true),
        retries(m, "moved", |_| true),
        retries(m, "ask", |p| p == "cas"),
    );
}
