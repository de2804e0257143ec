//! The client's retry layer through the fault proxy: what a call reports when its attempts end
//! in different ways.

use redis_atomic::lease::OwnerToken;
use redis_atomic::lock::{Acquire, Locks};
use redis_atomic::{Client, ClientConfig, Error, Keyspace, RetryPolicy};
use redis_atomic_testkit::{unique_prefix, Fault, FaultProxy, RedisServer, ServerOptions};
use std::time::Duration;

/// An attempt whose reply was lost, then a retry whose reconnect is refused: the call may have
/// run, so it is `OutcomeUnknown`, never the last attempt's "nothing ran" (`NotSent`). (Found by
/// `verify --faults`: a queue ack that ran before a restart was reported as not sent.)
#[tokio::test]
async fn unknown_then_refused_is_unknown() {
    let server = RedisServer::start(ServerOptions::default()).unwrap();
    let proxy = FaultProxy::start(server.addr().unwrap()).unwrap();
    let mut retry = RetryPolicy::default();
    retry.max_attempts = 2;
    let config = ClientConfig::default()
        .timeout(Duration::from_millis(200))
        .retry(retry)
        .pool_size(1);
    let client = Client::connect(&proxy.url(), config).await.unwrap();
    client
        .load(redis_atomic::script::registry::ALL)
        .await
        .unwrap();
    let keyspace = Keyspace::new(unique_prefix("retry-unknown")).unwrap();
    let locks = Locks::new(client, keyspace.clone());
    let token = OwnerToken::random();
    proxy.set(Fault::DropReplies);
    let refuse_later = async {
        // After the first attempt was forwarded, before its 200 ms timeout ends.
        tokio::time::sleep(Duration::from_millis(100)).await;
        proxy.set(Fault::Refuse);
    };
    let (r, ()) = tokio::join!(
        locks.acquire_with_token("r", &token, Duration::from_secs(30)),
        refuse_later
    );
    assert!(
        matches!(r, Err(Error::OutcomeUnknown { attempts: 2, .. })),
        "{r:?}"
    );
    assert!(
        proxy.stats().replies_dropped >= 1,
        "the first attempt was not sent"
    );
    // It did run: the same token gets the lock back.
    proxy.set(Fault::None);
    let direct = Client::connect(&server.url(), ClientConfig::default())
        .await
        .unwrap();
    let locks = Locks::new(direct, keyspace);
    assert!(matches!(
        locks
            .acquire_with_token("r", &token, Duration::from_secs(30))
            .await
            .unwrap(),
        Acquire::Acquired(_)
    ));
}
