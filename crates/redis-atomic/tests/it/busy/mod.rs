//! A foreign long-running script (`BUSY`): another application's Lua loop holds the server past
//! `busy-reply-threshold` (50 ms here). Our calls get a typed `Rejected { code: "BUSY" }` (the
//! server ran nothing), the client retries them within its policy and no more, nothing runs
//! twice (side effects counted), and the client works again once the script ends.
//! On a cluster the busy node refuses alone: keys on the other primaries are served meanwhile.
//! Retries are counted by reason, in a metrics recorder of the test's own.

use crate::common::metrics::Recorded;
use redis_atomic::quota::{Bounded, Bounds, Quotas};
use redis_atomic::{Client, ClientConfig, Error, Keyspace, RetryPolicy};
use redis_atomic_testkit::{
    faults, unique_prefix, ClusterOptions, RedisCluster, RedisServer, ServerOptions,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn busy_retries(m: &Recorded) -> u64 {
    m.counter(redis_atomic::observe::RETRIES_TOTAL, &[("reason", "busy")])
}

fn is_busy<T: std::fmt::Debug>(r: &Result<T, Error>) -> bool {
    matches!(r, Err(Error::Rejected { code, .. }) if code == "BUSY")
}

/// Waits (bounded) until the server answers `BUSY`: the foreign script is past the threshold.
async fn until_busy(server: &RedisServer) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let mut conn = server
            .client()
            .get_multiplexed_async_connection()
            .await
            .unwrap();
        let reply: redis::RedisResult<String> = redis::cmd("PING").query_async(&mut conn).await;
        if matches!(&reply, Err(e) if e.code() == Some("BUSY")) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the server never became busy: {reply:?}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Under a foreign busy script: a call without retries fails with a typed BUSY at once; calls
/// with the default policy (4 attempts within 3 s) end in BUSY after their bounded retries, or
/// succeed; calls with a longer policy outlast the script and succeed. Every success ran exactly
/// once and no BUSY ran at all: the counter equals the successful adds, then the client works.
#[test]
fn foreign_busy_script_is_typed_bounded_and_never_doubles() {
    let m = Recorded::new();
    m.block_on(foreign_busy_script(&m));
}

async fn foreign_busy_script(m: &Recorded) {
    let server = Arc::new(
        RedisServer::start(ServerOptions {
            extra_config: vec!["busy-reply-threshold 50".into()],
            ..Default::default()
        })
        .unwrap(),
    );
    let patient = ClientConfig::default().timeout(Duration::from_secs(10));
    let client = Client::connect(&server.url(), patient.clone())
        .await
        .unwrap();
    let ks = Keyspace::new(unique_prefix("busy")).unwrap();
    let bounds = Bounds::new(0, 1_000_000).unwrap();
    let quotas = |retry: RetryPolicy| {
        Quotas::new(client.with_config(patient.clone().retry(retry)), ks.clone())
    };
    let (none, default, long) = (
        quotas(RetryPolicy::none()),
        quotas(RetryPolicy::default()),
        quotas(
            RetryPolicy::new(100, Duration::from_secs(8))
                .backoff(Duration::from_millis(10), Duration::from_millis(50)),
        ),
    );
    none.add("c", 0, bounds, None).await.unwrap(); // script cached before the server is busy
    let retries_before = busy_retries(m);

    let foreign = server.clone();
    let script = tokio::task::spawn_blocking(move || {
        faults::busy_script(&foreign, Duration::from_millis(1500))
    });
    until_busy(&server).await;
    let refused = none.add("c", 1, bounds, None).await;
    assert!(is_busy(&refused), "{refused:?}");
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..16 {
        let q = if i % 2 == 0 {
            default.clone()
        } else {
            long.clone()
        };
        tasks.spawn(async move { (i % 2 == 1, q.add("c", 1, bounds, None).await) });
    }
    let mut applied = 0;
    while let Some(joined) = tasks.join_next().await {
        match joined.unwrap() {
            (_, Ok(Bounded::Applied { .. })) => applied += 1,
            (false, r) if is_busy(&r) => {}
            (long, other) => panic!("long policy: {long}: {other:?}"),
        }
    }
    script.await.unwrap().unwrap();
    assert!(
        applied >= 8,
        "every long-policy call outlasts the script: {applied}"
    );
    assert!(busy_retries(m) > retries_before, "BUSY retries are counted");
    assert!(matches!(
        none.add("c", 1, bounds, None).await.unwrap(),
        Bounded::Applied { .. }
    ));
    assert_eq!(
        none.get("c").await.unwrap(),
        applied + 1,
        "a BUSY call ran, or one ran twice"
    );
}

/// On a 3-primary cluster, a foreign script makes one primary busy: a call for a key it serves
/// gets a typed BUSY (no retries here), calls for keys on the other primaries succeed while it
/// lasts, and afterwards every counter equals the calls that succeeded (nothing ran twice, the
/// refused call ran nowhere). The cluster client neither hides BUSY behind its own retries nor
/// lets one busy node stall the others.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_cluster_node_refuses_typed_and_the_others_serve() {
    let cluster = Arc::new(RedisCluster::start(ClusterOptions::primaries_only()).unwrap());
    for node in cluster.nodes() {
        let mut conn = node.client().get_connection().unwrap();
        let _: () = redis::cmd("CONFIG")
            .arg("SET")
            .arg("busy-reply-threshold")
            .arg(50)
            .query(&mut conn)
            .unwrap();
    }
    let client = Client::connect_cluster(&cluster.urls(), ClientConfig::default())
        .await
        .unwrap();
    let ks = Keyspace::new(unique_prefix("busy-cluster")).unwrap();
    let quotas = Quotas::new(
        client.with_config(ClientConfig::default().retry(RetryPolicy::none())),
        ks,
    );
    let bounds = Bounds::new(0, 1_000_000).unwrap();
    // One counter per primary, named by where its slot lives.
    let mut names: Vec<Option<String>> = vec![None; 3];
    for i in 0..1000 {
        let name = format!("c{i}");
        let slot = redis_atomic::keys::slot(quotas.keys(&name, None).unwrap().value.as_bytes());
        let owner = cluster.owner_of(slot).unwrap();
        names[owner].get_or_insert(name);
        if names.iter().all(Option::is_some) {
            break;
        }
    }
    let names: Vec<String> = names.into_iter().map(Option::unwrap).collect();
    for name in &names {
        quotas.add(name, 0, bounds, None).await.unwrap(); // scripts cached on every node
    }

    let foreign = cluster.clone();
    let script = tokio::task::spawn_blocking(move || {
        faults::busy_script(&foreign.nodes()[0], Duration::from_millis(1500))
    });
    until_busy(&cluster.nodes()[0]).await;
    let refused = quotas.add(&names[0], 1, bounds, None).await;
    assert!(is_busy(&refused), "{refused:?}");
    let mut served = [0i64; 3];
    for (i, name) in names.iter().enumerate().skip(1) {
        for _ in 0..10 {
            let r = quotas.add(name, 1, bounds, None).await;
            assert!(
                matches!(r, Ok(Bounded::Applied { .. })),
                "a key on a healthy primary, while another is busy: {r:?}"
            );
            served[i] += 1;
        }
    }
    let still_busy = quotas.add(&names[0], 1, bounds, None).await;
    script.await.unwrap().unwrap();
    if still_busy.is_ok() {
        served[0] += 1; // the script ended before this call: it ran once
    } else {
        assert!(is_busy(&still_busy), "{still_busy:?}");
    }
    for (name, expected) in names.iter().zip(served) {
        assert_eq!(quotas.get(name).await.unwrap(), expected, "{name}");
    }
}
