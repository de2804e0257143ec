//! The least-privilege ACL (`script::acl_rules`, printed by `redis-atomic scripts acl`) is enough: the primitives run as a restricted user that can
//! only run scripts/functions on its own key pattern, and nothing else.
#![allow(clippy::unwrap_used)]

use redis_atomic::lock::{Acquire, Locks, Release};
use redis_atomic::{Client, ClientConfig, Delivery, Error, Keyspace};
use redis_atomic_testkit::{RedisServer, ServerOptions};
use std::time::Duration;

/// Locks work in both deliveries as the restricted user; keys outside its pattern are refused.
#[tokio::test]
async fn primitives_run_as_restricted_user() {
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
    // The platform team deploys the Function library; the runtime user cannot.
    admin
        .with_config(ClientConfig::default().delivery(Delivery::Functions))
        .load_library()
        .await
        .unwrap();
    let url = server.url().replace("redis://", "redis://app:s3cret@");
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
