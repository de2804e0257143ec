//! A reply that does not parse, through a real server: the request was sent, so it may have run
//! (`OutcomeUnknown`, and it did run); the connection that carried it is out of step with its
//! server and is replaced, so the next call on the same `Client` succeeds — on the owned pool
//! and on a cluster client. A well-formed reply of the wrong shape is `BadReply` and keeps its
//! connection (its stream is in step).

use redis_atomic::quota::{Bounded, Bounds, Quotas};
use redis_atomic::{Client, ClientConfig, Error, Keyspace, RetryPolicy};
use redis_atomic_testkit::proxy::ProxiedCluster;
use redis_atomic_testkit::{
    unique_prefix, ClusterOptions, Fault, FaultProxy, RedisServer, ServerOptions,
};
use std::time::Duration;

/// `quota_add`'s reply, `*2 $7 applied :<value>`, with its status word's type byte replaced by
/// one RESP does not have: the `redis` crate's parser fails on it.
const UNPARSABLE: Fault = Fault::RewriteReplies {
    find: b"$7\r\napplied\r\n",
    replace: b"?7\r\napplied\r\n",
};

/// The same reply well-formed, with a status word no script sends.
const WRONG_SHAPE: Fault = Fault::RewriteReplies {
    find: b"$7\r\napplied\r\n",
    replace: b"$7\r\nxpplied\r\n",
};

fn config() -> ClientConfig {
    ClientConfig::default()
        .timeout(Duration::from_secs(10))
        .retry(RetryPolicy::none())
        .pool_size(1)
}

async fn add(quotas: &Quotas) -> Result<Bounded, Error> {
    quotas.add("q", 1, Bounds::up_to(100)?, None).await
}

/// One add applied, one whose reply `corrupt` breaks, then one more: what each returned.
async fn through_a_broken_reply(
    quotas: &Quotas,
    set: impl Fn(Fault),
) -> (Result<Bounded, Error>, Result<Bounded, Error>) {
    assert!(matches!(
        add(quotas).await,
        Ok(Bounded::Applied { value: 1 })
    ));
    set(UNPARSABLE);
    let broken = add(quotas).await;
    set(Fault::None);
    (broken, add(quotas).await)
}

fn assert_unknown_then_applied(broken: &Result<Bounded, Error>, next: &Result<Bounded, Error>) {
    assert!(
        matches!(broken, Err(Error::OutcomeUnknown { reason, timed_out: false, .. }) if reason.contains("could not be parsed")),
        "{broken:?}"
    );
    // The call whose reply broke did run (2), and the next one runs on a good connection.
    assert!(
        matches!(next, Ok(Bounded::Applied { value: 3 })),
        "{next:?}"
    );
}

/// Owned pool of one connection: the broken one is dropped and a new one made.
#[tokio::test]
async fn unparsable_reply_on_the_pool() {
    let server = RedisServer::start(ServerOptions::default()).unwrap();
    let proxy = FaultProxy::start(server.addr().unwrap()).unwrap();
    let client = Client::connect(&proxy.url(), config()).await.unwrap();
    let quotas = Quotas::new(client, Keyspace::new(unique_prefix("unparsable")).unwrap());
    let connected = proxy.stats().accepted;
    let (broken, next) = through_a_broken_reply(&quotas, |f| proxy.set(f)).await;
    assert_unknown_then_applied(&broken, &next);
    assert!(proxy.stats().replies_rewritten >= 1);
    assert_eq!(
        proxy.stats().accepted,
        connected + 1,
        "the connection that carried the broken reply was replaced, once"
    );

    // A well-formed reply of a shape no script sends: it ran, its reply is unusable; the stream
    // is in step, so the connection stays.
    proxy.set(WRONG_SHAPE);
    let odd = add(&quotas).await;
    proxy.set(Fault::None);
    assert!(
        matches!(
            &odd,
            Err(Error::BadReply {
                script: "quota_add",
                ..
            })
        ),
        "{odd:?}"
    );
    assert!(matches!(
        add(&quotas).await,
        Ok(Bounded::Applied { value: 5 })
    ));
    assert_eq!(proxy.stats().accepted, connected + 1);
}

/// A cluster client behind proxies: the node connection that carried the broken reply is
/// replaced and the next call to that node succeeds.
#[tokio::test]
async fn unparsable_reply_on_a_cluster_client() {
    let proxied = ProxiedCluster::start(ClusterOptions::default()).unwrap();
    let client = Client::connect_cluster(&proxied.urls(), config())
        .await
        .unwrap();
    let quotas = Quotas::new(
        client,
        Keyspace::new(unique_prefix("unparsable-cluster")).unwrap(),
    );
    let (broken, next) = through_a_broken_reply(&quotas, |f| proxied.set(f)).await;
    assert_unknown_then_applied(&broken, &next);
    assert!(proxied.stats().replies_rewritten >= 1);
}
