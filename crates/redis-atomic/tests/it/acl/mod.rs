//! The least-privilege ACL (`script::acl_rules`, printed by `redis-atomic scripts acl`) is enough: the primitives run as a restricted user that can
//! only run scripts/functions on its own key pattern, and nothing else.

use redis_atomic::lease::Release;
use redis_atomic::lock::{Acquire, Locks};
use redis_atomic::{Client, ClientConfig, Delivery, Error, Keyspace};
use redis_atomic_testkit::{RedisServer, ServerOptions};
use std::time::Duration;

/// A server with user `app` (password `s3cret`) limited to `script::acl_rules("app")`: the server,
/// an admin client, and the URL that logs in as `app`.
async fn restricted_server() -> (RedisServer, Client, String) {
    let server = RedisServer::start(ServerOptions::default()).unwrap();
    let admin = Client::connect(&server.url(), ClientConfig::default())
        .await
        .unwrap();
    let mut setuser = redis::cmd("ACL");
    setuser
        .arg("SETUSER")
        .arg("app")
        .arg("on")
        .arg(">s3cret")
        .arg(redis_atomic::script::acl_rules("app"));
    admin.command(&setuser).await.unwrap();
    let url = server.url().replace("redis://", "redis://app:s3cret@");
    (server, admin, url)
}

/// Locks work in both deliveries as the restricted user; keys outside its pattern are refused.
#[tokio::test]
async fn primitives_run_as_restricted_user() {
    let (_server, admin, url) = restricted_server().await;
    // The platform team deploys the Function library; the runtime user cannot.
    admin
        .with_config(ClientConfig::default().delivery(Delivery::Functions))
        .load(redis_atomic::script::registry::ALL)
        .await
        .unwrap();
    for delivery in [Delivery::Eval, Delivery::Functions] {
        let client = Client::connect(&url, ClientConfig::default().delivery(delivery))
            .await
            .unwrap();
        let locks = Locks::new(client.clone(), Keyspace::new("app").unwrap());
        let Acquire::Acquired(mut g) = locks.acquire("r", Duration::from_secs(5)).await.unwrap()
        else {
            panic!("{delivery:?}: not acquired")
        };
        g.extend(Duration::from_secs(5)).await.unwrap();
        locks.inspect("r").await.unwrap();
        assert!(matches!(
            g.release().await.unwrap(),
            Release::Released { .. }
        ));
        let other = Locks::new(client.clone(), Keyspace::new("other").unwrap());
        let denied = other.acquire("r", Duration::from_secs(5)).await;
        assert!(matches!(denied, Err(Error::Server { .. })), "{denied:?}");
        let flush = client.command(redis::cmd("FLUSHALL").arg("SYNC")).await;
        assert!(
            matches!(flush, Err(Error::Server { ref code, .. }) if code == "NOPERM"),
            "{flush:?}"
        );
    }
}

/// The primitives that send commands themselves — CAS (every kind of read, every kind of
/// write), multi-key writes, dedup, quota's plain commands, with `WAIT` from the replicas option
/// — run as the restricted user too, and its refusals stay in force.
#[tokio::test]
async fn direct_command_primitives_run_as_restricted_user() {
    use redis_atomic::cas::{Cas, CasOutcome, Decision, Read};
    use redis_atomic::dedup::Dedup;
    use redis_atomic::multi::MultiWrite;
    use redis_atomic::quota::Quotas;
    use redis_atomic::write::Write;
    let (_server, _admin, url) = restricted_server().await;
    // No replica here: WAIT 0 answers at once, but it is sent (and must be allowed).
    let config = ClientConfig::default().replicas(0, Duration::from_millis(10));
    let client = Client::connect(&url, config).await.unwrap();
    let ks = Keyspace::new("app").unwrap();
    let key = |part: &str| ks.key("t", 1, "tag", &[part]).unwrap();

    let writes = vec![
        Write::set(key("s"), "1"),
        Write::hset(key("h"), [("f", "v")]),
        Write::hdel(key("h2"), ["f"]),
        Write::sadd(key("set"), ["a", "b"]),
        Write::srem(key("set"), ["b"]),
        Write::del(key("gone")),
        Write::expire(key("s"), Duration::from_secs(60)),
    ];
    MultiWrite::new()
        .write(Write::set(key("m"), "x"))
        .execute(&client)
        .await
        .unwrap();
    let reads = [
        Read::get(key("s")),
        Read::hget(key("h"), "f"),
        Read::hgetall(key("h")),
        Read::smembers(key("set")),
        Read::exists(key("m")),
        Read::pttl(key("s")),
    ];
    let out = Cas::new(client.clone())
        .update(&reads, |_| Ok(Decision::commit(writes.clone(), ())))
        .await
        .unwrap();
    assert_eq!(out, CasOutcome::Committed(()));
    let aborted = Cas::new(client.clone())
        .update(&reads, |_| Ok(Decision::abort(())))
        .await
        .unwrap();
    assert_eq!(aborted, CasOutcome::Aborted(()));

    let dedup = Dedup::new(client.clone(), ks.clone());
    assert!(dedup
        .first_seen("e", Duration::from_secs(60))
        .await
        .unwrap());
    let quotas = Quotas::new(client.clone(), ks.clone());
    quotas.get("q").await.unwrap();
    quotas
        .extend_ttl("q", Duration::from_secs(60))
        .await
        .unwrap();
    let added = quotas
        .add_unless_smaller("best", &[(5, b"a".as_slice())])
        .await
        .unwrap();
    assert_eq!(added, 1);

    let outside = Keyspace::new("other").unwrap();
    let denied = Dedup::new(client.clone(), outside)
        .first_seen("e", Duration::from_secs(60))
        .await;
    assert!(
        matches!(denied, Err(Error::Server { ref code, .. }) if code == "NOPERM"),
        "{denied:?}"
    );
}
