//! `Client::close`: for every clone, a later call is refused without sending anything, and the
//! connections the client owns end at once (not when the last clone is dropped).

use redis_atomic::lock::Locks;
use redis_atomic::{Client, ClientConfig, Error, Keyspace};
use redis_atomic_testkit::{unique_prefix, RedisServer, ServerOptions};
use std::time::{Duration, Instant};

/// Connections the server has open, as `CLIENT LIST` shows them.
async fn connections(admin: &mut redis::aio::MultiplexedConnection) -> usize {
    let list: String = redis::cmd("CLIENT")
        .arg("LIST")
        .query_async(admin)
        .await
        .unwrap();
    list.lines().count()
}

#[tokio::test]
async fn close_refuses_later_calls_and_ends_the_pool() {
    let server = RedisServer::start(ServerOptions::default()).unwrap();
    let mut admin = redis::Client::open(server.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let alone = connections(&mut admin).await;
    let client = Client::connect(&server.url(), ClientConfig::default().pool_size(3))
        .await
        .unwrap();
    let clone = client.clone();
    let locks = Locks::new(
        client.clone(),
        Keyspace::new(unique_prefix("close")).unwrap(),
    );
    assert!(locks.inspect("r").await.is_ok());
    assert_eq!(connections(&mut admin).await, alone + 3, "the pool's three");

    client.close();
    assert!(clone.is_closed(), "a clone sees the close");
    let err = locks
        .acquire("r", Duration::from_secs(5))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Client(_)), "{err:?}");
    assert!(err.nothing_ran() && err.code() == "client", "{err:?}");
    // The clone in `locks` is alive, yet the pool's connections end. The server learns of a
    // closed socket on its own schedule: ask until it has (bounded), never guess a pause.
    let until = Instant::now() + Duration::from_secs(10);
    while connections(&mut admin).await > alone {
        assert!(
            Instant::now() < until,
            "the pool's connections outlived close()"
        );
        tokio::task::yield_now().await;
    }
    client.close(); // twice: a no-op
}
