//! RESP3 (`?protocol=resp3` in the URL): every primitive's representative operations, and the
//! audit, on a RESP3 connection — standalone in both deliveries, and the cluster. Replies come
//! back as RESP3 types (maps, verbatim strings, `Okay`); the typed bindings, the dedicated
//! connections (CAS, multi-key writes) and the doctor's parsers must read them alike.

use redis_atomic::cas::{Cas, CasOutcome, Decision as CasDecision, Read};
use redis_atomic::dedup::Dedup;
use redis_atomic::doctor::{DoctorOptions, Status};
use redis_atomic::fenced::{Fenced, FencedWrites};
use redis_atomic::idempotency::{Begin, Fingerprint, Idempotency, Outcome, Response, Stored};
use redis_atomic::lease::{OwnerToken, Release};
use redis_atomic::lock::{Acquire, LockState, Locks};
use redis_atomic::multi::MultiWrite;
use redis_atomic::queue::{Ack, Claim, Queue, QueueConfig, RunAt};
use redis_atomic::quota::{Bounded, Bounds, Quotas};
use redis_atomic::ratelimit::{Algorithm, Limit, RateLimiter};
use redis_atomic::semaphore::{self, Semaphore, SemaphoreConfig};
use redis_atomic::write::Write;
use redis_atomic::{Client, ClientConfig, Delivery, Keyspace};
use redis_atomic_testkit::{unique_prefix, RedisCluster, RedisServer, ServerOptions};
use std::time::Duration;

const TTL: Duration = Duration::from_secs(30);

fn resp3(url: &str) -> String {
    format!("{url}/?protocol=resp3")
}

/// One pass over every primitive: each operation's reply decoded and checked.
async fn every_primitive(client: &Client, what: &str) {
    let ks = Keyspace::new(unique_prefix("resp3")).unwrap();
    let locks = Locks::new(client.clone(), ks.clone());
    let Acquire::Acquired(g) = locks.acquire("r", TTL).await.unwrap() else {
        panic!("{what}: lock")
    };
    assert!(
        matches!(locks.inspect("r").await.unwrap(), LockState::Locked { .. }),
        "{what}"
    );
    assert!(
        matches!(g.release().await.unwrap(), Release::Released { .. }),
        "{what}"
    );

    let sem = Semaphore::new(client.clone(), &ks, "s", SemaphoreConfig::new(2)).unwrap();
    let semaphore::Acquire::Acquired(p) = sem.acquire(TTL).await.unwrap() else {
        panic!("{what}: permit")
    };
    assert!(
        matches!(p.release().await.unwrap(), Release::Released { .. }),
        "{what}"
    );

    let idem = Idempotency::new(client.clone(), ks.clone());
    let fp = Fingerprint::of(&[b"body"]);
    let Begin::Claimed(c) = idem.begin("t", b"k", fp).await.unwrap() else {
        panic!("{what}: claim")
    };
    let response = Response::new(201, "made");
    assert_eq!(
        c.complete(&response).await.unwrap(),
        Outcome::Stored,
        "{what}"
    );
    assert!(
        matches!(idem.begin("t", b"k", fp).await.unwrap(), Begin::Replay(Stored::Completed(r)) if r == response),
        "{what}"
    );

    for algorithm in Algorithm::ALL {
        let limit = Limit::new(algorithm, 1, Duration::from_secs(60)).unwrap();
        let rl = RateLimiter::new(client.clone(), ks.clone(), limit);
        assert!(
            rl.consume("u", 1).await.unwrap().is_allowed(),
            "{what} {algorithm:?}"
        );
        assert!(
            !rl.consume("u", 1).await.unwrap().is_allowed(),
            "{what} {algorithm:?}"
        );
    }

    let quotas = Quotas::new(client.clone(), ks.clone());
    let b = Bounds::new(0, 3).unwrap();
    assert_eq!(
        quotas.add("q", 3, b, None).await.unwrap(),
        Bounded::Applied { value: 3 }
    );
    assert_eq!(
        quotas.add("q", 1, b, None).await.unwrap(),
        Bounded::Refused { value: 3 }
    );
    assert_eq!(quotas.get("q").await.unwrap(), 3, "{what}");

    let q = Queue::new(client.clone(), &ks, "q", QueueConfig::default()).unwrap();
    q.enqueue("j", b"payload", RunAt::Now).await.unwrap();
    let Claim::Claimed(mut jobs) = q
        .claim(&OwnerToken::new("w").unwrap(), TTL, 5)
        .await
        .unwrap()
    else {
        panic!("{what}: claim")
    };
    assert_eq!(jobs[0].payload(), b"payload", "{what}");
    assert_eq!(jobs.remove(0).ack().await.unwrap(), Ack::Acked, "{what}");
    assert_eq!(q.stats().await.unwrap().acked, 1, "{what}");

    let key = |part: &str| ks.key("t", 1, "tag", &[part]).unwrap();
    let fenced = FencedWrites::new(client.clone(), ks.clone());
    let written = fenced
        .fenced_write(
            "f",
            redis_atomic::Fence(7),
            &[Write::set(fenced.key("f", "data").unwrap(), "v")],
        )
        .await
        .unwrap();
    assert!(matches!(written, Fenced::Applied { .. }), "{what}");
    assert_eq!(
        fenced.highest("f").await.unwrap(),
        redis_atomic::Fence(7),
        "{what}"
    );

    let multi = MultiWrite::new().write(Write::set(key("n"), "1"));
    multi.execute(client).await.unwrap();
    let cas = Cas::new(client.clone());
    let n = key("n");
    let out = cas
        .update(&[Read::get(n.clone())], |s| {
            let v: u64 = s.get::<Option<u64>>(0)?.unwrap_or(0);
            Ok(CasDecision::Commit {
                writes: vec![Write::set(n.clone(), (v + 1).to_string())],
                value: v + 1,
            })
        })
        .await
        .unwrap();
    assert!(matches!(out, CasOutcome::Committed(2)), "{what}: {out:?}");

    let dedup = Dedup::new(client.clone(), ks.clone());
    assert!(dedup.first_seen("e", TTL).await.unwrap(), "{what}");
    assert!(!dedup.first_seen("e", TTL).await.unwrap(), "{what}");

    let report = client
        .server_report(&DoctorOptions::default())
        .await
        .unwrap();
    let row = |c: &str| report.rows.iter().find(|r| r.check == c).unwrap().status;
    assert_eq!(row("version"), Status::Ok, "{what}: {report:#?}");
    assert_eq!(row("maxmemory-policy"), Status::Ok, "{what}");
    assert_eq!(row("acl lock"), Status::Ok, "{what}");
    assert_eq!(client.memory_check().unwrap().status, Status::Ok, "{what}");
}

/// Standalone, EVALSHA and FCALL, over RESP3.
#[tokio::test]
async fn every_primitive_over_resp3_standalone() {
    let server = RedisServer::start(ServerOptions::default()).unwrap();
    for delivery in [Delivery::Eval, Delivery::Functions] {
        let config = ClientConfig::default().delivery(delivery);
        let client = Client::connect(&resp3(&server.url()), config)
            .await
            .unwrap();
        every_primitive(&client, &format!("{delivery:?}")).await;
    }
}

/// The cluster over RESP3 (every node audited, redirects and per-node connections included).
#[tokio::test]
async fn every_primitive_over_resp3_cluster() {
    let urls: Vec<String> = RedisCluster::shared()
        .urls()
        .iter()
        .map(|u| resp3(u))
        .collect();
    let client = Client::connect_cluster(&urls, ClientConfig::default())
        .await
        .unwrap();
    every_primitive(&client, "cluster").await;
}
