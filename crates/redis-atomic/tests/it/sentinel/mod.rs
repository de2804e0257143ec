//! Through Sentinel: the client finds the primary, follows it across failovers (asking Sentinel
//! again instead of reconnecting to the old address), and under load a failover that loses the
//! primary keeps every fence increasing. What each primitive keeps across the failover is
//! measured and printed (`--nocapture`); see `docs/failover.md`, Sentinel.

mod census;

use redis_atomic::cas::{Cas, CasOutcome, Decision, Read};
use redis_atomic::fenced::{Fenced, FencedWrites};
use redis_atomic::lock::{Acquire, Locks};
use redis_atomic::write::Write;
use redis_atomic::{Client, ClientConfig, Error, Keyspace, RetryPolicy, SentinelConfig};
use redis_atomic_testkit::history::{check_fenced_writes_lossy, check_leases};
use redis_atomic_testkit::{
    unique_prefix, Failover, FencedWrite, LeaseSpan, RedisServer, SentinelGroup, SentinelOptions,
};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The port of the node a command of `client` reaches.
async fn port_of(client: &Client) -> u16 {
    let info = client
        .command(redis::cmd("INFO").arg("server"))
        .await
        .unwrap();
    let info: String = redis::from_redis_value(info).unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix("tcp_port:"))
        .and_then(|p| p.trim().parse().ok())
        .unwrap()
}

/// A write on a plain connection to `server`: what a client that reconnected there would get.
fn plain_set(server: &RedisServer) -> redis::RedisResult<()> {
    let mut conn = server.client().get_connection()?;
    redis::cmd("SET").arg("probe").arg(1).query(&mut conn)
}

async fn increment(client: &Client, key: &str) -> Result<CasOutcome<u64>, Error> {
    Cas::new(client.clone())
        .update(&[Read::get(key)], |s| {
            let v = s.get::<Option<u64>>(0)?.unwrap_or(0);
            Ok(Decision::commit(
                vec![Write::set(key, (v + 1).to_string())],
                v + 1,
            ))
        })
        .await
}

/// After `SENTINEL FAILOVER` the old primary lives on as a replica; the client's pooled and
/// dedicated connections still point at it. The next calls must land on the new primary (asked
/// of Sentinel), and none may fail: a `READONLY` from the old primary is retried after asking
/// Sentinel again. An unknown service is a clear error.
#[tokio::test]
async fn follows_the_primary_across_a_failover() {
    let group = SentinelGroup::start(SentinelOptions::default()).unwrap();
    let client = Client::connect(&group.url(), ClientConfig::default())
        .await
        .unwrap();
    let ks = Keyspace::new(unique_prefix("sentinel-follow")).unwrap();
    let locks = Locks::new(client.clone(), ks.clone());
    let counter = ks.key("test", 1, "cas", &["n"]).unwrap();
    let old = group.primary().unwrap();
    assert_eq!(port_of(&client).await, group.nodes()[old].port().unwrap());
    assert!(matches!(
        locks.acquire("a", Duration::from_secs(60)).await.unwrap(),
        Acquire::Acquired(_)
    ));
    assert_eq!(
        increment(&client, &counter).await.unwrap(),
        CasOutcome::Committed(1)
    );

    let new = group.failover(Failover::Command).unwrap();
    assert_ne!(new, old);
    let refused = plain_set(&group.nodes()[old]).unwrap_err();
    assert_eq!(
        refused.code(),
        Some("READONLY"),
        "old primary still writable"
    );

    for i in 0..8 {
        let r = locks
            .acquire(&format!("b{i}"), Duration::from_secs(60))
            .await;
        assert!(
            matches!(r, Ok(Acquire::Acquired(_))),
            "after failover: {r:?}"
        );
    }
    for _ in 0..8 {
        assert_eq!(port_of(&client).await, group.nodes()[new].port().unwrap());
    }
    assert!(
        matches!(
            locks.acquire("a", Duration::from_secs(60)).await.unwrap(),
            Acquire::Held { .. }
        ),
        "a coordinated failover loses nothing: the lock is still held"
    );
    assert_eq!(
        increment(&client, &counter).await.unwrap(),
        CasOutcome::Committed(2)
    );

    let unknown = group.url().replace(group.service(), "nope");
    let r = Client::connect(&unknown, ClientConfig::default()).await;
    let Err(e) = r else {
        panic!("unknown service accepted")
    };
    assert!(e.to_string().contains("not found"), "{e}");
}

/// What the workers recorded.
#[derive(Default)]
struct Record {
    spans: Mutex<Vec<LeaseSpan>>,
    writes: Mutex<Vec<FencedWrite>>,
    failed: Mutex<u64>,
}

/// One worker: take a lock, write its fence through `fenced_write`, release; until `stop`.
async fn worker(
    client: Client,
    ks: Keyspace,
    id: usize,
    start: Instant,
    stop: Arc<AtomicBool>,
    rec: Arc<Record>,
) {
    let locks = Locks::new(client.clone(), ks.clone());
    let fenced = FencedWrites::new(client, ks);
    let resource = format!("r{}", id % 2);
    let lease = Duration::from_millis(500);
    while !stop.load(Ordering::SeqCst) {
        let invoked = start.elapsed();
        let guard = match locks.acquire(&resource, lease).await {
            Ok(Acquire::Acquired(g)) => g,
            Ok(_) => {
                tokio::task::yield_now().await;
                continue;
            }
            Err(_) => {
                *rec.failed.lock().unwrap() += 1;
                continue;
            }
        };
        let mut span = LeaseSpan {
            resource: resource.clone(),
            fence: guard.fence().0,
            acquire_invoked: invoked,
            acquire_completed: start.elapsed(),
            release_invoked: None,
            lease,
        };
        let data = fenced.key(&resource, "value").unwrap();
        let write = [Write::set(&data, guard.fence().0.to_string())];
        let w_invoked = start.elapsed();
        let applied = match fenced.fenced_write(&resource, guard.fence(), &write).await {
            Ok(Fenced::Applied { .. }) => Some(true),
            Ok(_) => Some(false),
            Err(e) if e.nothing_ran() => Some(false),
            Err(_) => None,
        };
        rec.writes.lock().unwrap().push(FencedWrite {
            resource: resource.clone(),
            fence: guard.fence().0,
            invoked: w_invoked,
            completed: start.elapsed(),
            applied,
        });
        if applied.is_some() {
            span.release_invoked = Some(start.elapsed());
            let _ = guard.release().await;
        }
        rec.spans.lock().unwrap().push(span);
    }
}

/// The primary is killed while workers take locks and write fenced values through Sentinel;
/// Sentinel promotes the replica and the client follows. Fences never repeat or go back across
/// the failover, the fenced register ends on a value some write carried, work resumes on the new
/// primary, and every write acknowledged by the replica (`WAIT`) survives; what the other writes
/// keep is measured (printed).
#[tokio::test]
async fn failover_under_load_keeps_fences_increasing() {
    let group = Arc::new(SentinelGroup::start(SentinelOptions::default()).unwrap());
    let config = ClientConfig::default()
        .timeout(Duration::from_millis(500))
        .retry(RetryPolicy::new(4, Duration::from_secs(2)));
    let client = Client::connect(&group.url(), config.clone()).await.unwrap();
    let durable = Client::connect(&group.url(), config.replicas(1, Duration::from_secs(2)))
        .await
        .unwrap();
    let ks = Keyspace::new(unique_prefix("sentinel-load")).unwrap();
    let start = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let rec = Arc::new(Record::default());
    let tasks: Vec<_> = (0..6)
        .map(|id| {
            let (c, k, s, r) = (client.clone(), ks.clone(), stop.clone(), rec.clone());
            tokio::spawn(worker(c, k, id, start, s, r))
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(400)).await;
    let plain_census = census::write(&client, "plain").await;
    let durable_census = census::write(&durable, "durable").await;

    let killed = start.elapsed();
    let g = group.clone();
    tokio::task::spawn_blocking(move || g.failover(Failover::KillPrimary))
        .await
        .unwrap()
        .unwrap();
    let promoted = start.elapsed();
    tokio::time::sleep(Duration::from_millis(800)).await;
    stop.store(true, Ordering::SeqCst);
    for t in tasks {
        t.await.unwrap();
    }

    let spans = rec.spans.lock().unwrap().clone();
    let writes = rec.writes.lock().unwrap().clone();
    let after = spans
        .iter()
        .filter(|s| s.acquire_invoked > promoted)
        .count();
    assert!(
        after > 0,
        "no lock acquired through Sentinel after the failover"
    );
    let fences = check_leases(&spans, usize::MAX);
    assert!(
        fences.ok(),
        "fences repeated or went back: {:?}",
        fences.violations
    );
    let fenced = FencedWrites::new(client.clone(), ks.clone());
    let mut finals = HashMap::new();
    for r in ["r0", "r1"] {
        let key = fenced.key(r, "value").unwrap();
        let v = client.command(redis::cmd("GET").arg(&key)).await.unwrap();
        if let Some(v) = redis::from_redis_value::<Option<u64>>(v).unwrap() {
            finals.insert(r.to_string(), v);
        }
    }
    let register = check_fenced_writes_lossy(&writes, &finals);
    assert!(register.ok(), "{:?}", register.violations);

    let kept = census::count(&client, &durable_census).await;
    assert_eq!(
        kept,
        durable_census.written(),
        "a write the replica acknowledged was lost"
    );
    let plain_kept = census::count(&client, &plain_census).await;
    let exclusion = check_leases(&spans, 1).violations.len();
    // The outage: the longest time without a completed acquisition.
    let mut done: Vec<Duration> = spans.iter().map(|s| s.acquire_completed).collect();
    done.sort();
    let outage = done.windows(2).map(|w| w[1] - w[0]).max();
    eprintln!(
        "sentinel failover: promoted {:?} after the kill, no lock acquired for {:?}; \
         {} leases ({after} after), {} fenced writes, {} failed acquires, {exclusion} overlapping \
         leases; kept without WAIT: {plain_kept}; with WAIT: {kept}",
        promoted - killed,
        outage.unwrap_or_default(),
        spans.len(),
        writes.len(),
        rec.failed.lock().unwrap(),
    );
}

/// Passwords everywhere, as in production: data nodes with `requirepass` (the URL's userinfo),
/// Sentinels with their own (`SentinelConfig::sentinel_auth`). The client finds the primary,
/// takes a lock and follows a failover; a wrong data password or a missing Sentinel password is
/// a typed error that names the problem and never shows a password.
#[tokio::test]
async fn passwords_for_data_nodes_and_sentinels() {
    let group = SentinelGroup::start(SentinelOptions {
        password: Some("data-secret-1".into()),
        sentinel_password: Some("sentinel-secret-2".into()),
        ..SentinelOptions::default()
    })
    .unwrap();
    assert!(group.url().contains(":data-secret-1@"), "{}", group.url());
    let sentinel = SentinelConfig::parse(&group.url())
        .unwrap()
        .sentinel_auth(None, "sentinel-secret-2");
    let client = Client::connect_sentinel(&sentinel, ClientConfig::default())
        .await
        .unwrap();
    let locks = Locks::new(
        client.clone(),
        Keyspace::new(unique_prefix("sentinel-auth")).unwrap(),
    );
    let old = group.primary().unwrap();
    assert_eq!(port_of(&client).await, group.nodes()[old].port().unwrap());
    assert!(matches!(
        locks.acquire("a", Duration::from_secs(60)).await.unwrap(),
        Acquire::Acquired(_)
    ));
    let new = group.failover(Failover::Command).unwrap();
    assert_ne!(new, old);
    assert!(matches!(
        locks.acquire("b", Duration::from_secs(60)).await.unwrap(),
        Acquire::Acquired(_)
    ));
    assert_eq!(port_of(&client).await, group.nodes()[new].port().unwrap());

    let wrong_data = SentinelConfig::parse(&group.url().replace("data-secret-1", "nope-nope"))
        .unwrap()
        .sentinel_auth(None, "sentinel-secret-2");
    let no_sentinel_pass = SentinelConfig::parse(&group.url()).unwrap();
    for (what, config) in [("data", wrong_data), ("sentinel", no_sentinel_pass)] {
        let err = match Client::connect_sentinel(&config, ClientConfig::default()).await {
            Ok(_) => panic!("{what}: connected without the right password"),
            Err(e) => e.to_string(),
        };
        eprintln!("{what}: {err}");
        let lower = err.to_lowercase();
        assert!(
            lower.contains("auth") || lower.contains("password") || lower.contains("noperm"),
            "{what}: {err}"
        );
        assert!(
            !err.contains("secret") && !err.contains("nope-nope"),
            "{what}: {err}"
        );
    }
}
