//! A batch whose reply is lost ([`lose_a_batch_reply`]), on a standalone server here and on a
//! 3+3 cluster in [`super::cluster`]. The fault proxy in front of the node swallows replies; one
//! decision holds the lane's only call slot (its reply swallowed too) while seven queue behind
//! it; the first is abandoned by its caller, so the seven leave as one batch, whose reply is
//! swallowed; ending the fault resets the connection. Each of the seven learns `OutcomeUnknown`;
//! the four with request ids are resent by the retry loop and answer as if once; the node,
//! read directly, shows every decision ran once.

use crate::common::patient;
use redis_atomic::quota::{Bounded, Bounds, Quotas};
use redis_atomic::{Batching, Client, ClientConfig, Error, Keyspace};
use redis_atomic_testkit::{unique_prefix, Fault, FaultProxy, RedisServer, ServerOptions};
use std::time::Duration;

/// Waits (10 s at most) until `done`.
pub(super) fn waited(what: &str, done: impl Fn() -> bool) {
    tokio::task::block_in_place(|| {
        redis_atomic_testkit::faults::wait(Duration::from_secs(10), what, || Ok(done())).unwrap();
    });
}

/// Batching that queues a decision as soon as one call of its lane is in flight, and sends two
/// queued decisions as a batch.
pub(super) fn eager() -> ClientConfig {
    patient().batching(Batching::default().in_flight(1).min_batch(2))
}

/// Where the scenario runs: one node behind a proxy.
pub(super) struct Site<'a> {
    /// Connected through the proxies with [`eager`] batching.
    pub client: Client,
    /// The proxy in front of the node that serves both quotas.
    pub proxy: &'a FaultProxy,
    /// That node, reached directly.
    pub node: redis::Client,
    pub keyspace: Keyspace,
    /// The quota added to without request ids, and the one added to with them (on a cluster,
    /// two names of one slot: their decisions share a lane).
    pub names: [&'a str; 2],
}

/// A quota counter's value, read on `node` itself (0 when absent).
pub(super) async fn counter(node: &redis::Client, quotas: &Quotas, name: &str) -> i64 {
    let mut conn = node.get_multiplexed_async_connection().await.unwrap();
    let key = quotas.keys(name, None).unwrap().value;
    let value: Option<i64> = redis::cmd("GET")
        .arg(&key)
        .query_async(&mut conn)
        .await
        .unwrap();
    value.unwrap_or(0)
}

/// The scenario of the module doc, at `site`.
pub(super) async fn lose_a_batch_reply(site: Site<'_>) {
    let Site {
        client,
        proxy,
        node,
        keyspace,
        names: [plain, ided],
    } = site;
    let quotas = Quotas::new(client.clone(), keyspace);
    let bounds = Bounds::up_to(1000).unwrap();
    // Loads every script and batch entry point: the batch below must run, not meet `NOSCRIPT`.
    client
        .load(redis_atomic::script::registry::ALL)
        .await
        .unwrap();

    // The baseline before anything is spawned: a spawned decision may count itself at once.
    let stats = client.batch_stats();
    let dropped = proxy.stats().replies_dropped;
    proxy.set(Fault::DropReplies);
    let first = {
        let quotas = quotas.clone();
        let plain = plain.to_string();
        tokio::spawn(async move { quotas.add(&plain, 1, bounds, None).await })
    };
    waited("the first decision's reply is swallowed", || {
        proxy.stats().replies_dropped > dropped && client.batch_stats().since(&stats).alone == 1
    });
    let plain_adds = (0..3).map(|_| quotas.add(plain, 1, bounds, None));
    let id_adds = (0..4).map(|i| {
        let quotas = &quotas;
        async move {
            quotas
                .add_with_id(ided, 1, bounds, None, &format!("id{i}"))
                .await
        }
    });
    let mut queued = std::pin::pin!(futures::future::join(
        futures::future::join_all(plain_adds),
        futures::future::join_all(id_adds),
    ));
    // One poll queues all seven behind the first, whose reply cannot come.
    assert!(futures::poll!(queued.as_mut()).is_pending());
    assert_eq!(client.batch_stats().since(&stats).decisions, 8);
    let dropped = proxy.stats().replies_dropped;
    first.abort(); // its caller gives up: the slot is handed to the queue
    waited("the batch's reply is swallowed", || {
        client.batch_stats().since(&stats).batches == 1 && proxy.stats().replies_dropped > dropped
    });
    let sent = client.batch_stats().since(&stats);
    assert_eq!(
        (sent.alone, sent.batched, sent.separate),
        (1, 7, 0),
        "{sent:?}"
    );
    proxy.set(Fault::None); // resets the connections that lost replies

    let (plain_replies, ids) = queued.await;
    for r in &plain_replies {
        assert!(matches!(r, Err(Error::OutcomeUnknown { .. })), "{r:?}");
    }
    for (i, r) in ids.iter().enumerate() {
        assert!(matches!(r, Ok(Bounded::Applied { .. })), "id{i}: {r:?}");
    }
    // Every decision ran exactly once: the abandoned one and the three unknown ones, and the four
    // with ids despite their resend.
    assert_eq!(counter(&node, &quotas, plain).await, 4);
    assert_eq!(counter(&node, &quotas, ided).await, 4);
    let mut values: Vec<i64> = ids
        .into_iter()
        .map(|r| match r.unwrap() {
            Bounded::Applied { value } | Bounded::Refused { value } => value,
            other => panic!("{other:?}"),
        })
        .collect();
    values.sort_unstable();
    assert_eq!(
        values,
        [1, 2, 3, 4],
        "each id answers the value its one run saw"
    );
    assert!(proxy.stats().reset >= 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lost_batch_reply_is_unknown_per_decision_and_request_ids_are_resent() {
    let server = RedisServer::start(ServerOptions::default()).unwrap();
    let proxy = FaultProxy::start(server.addr().unwrap()).unwrap();
    let client = Client::connect(&proxy.url(), eager()).await.unwrap();
    lose_a_batch_reply(Site {
        client,
        proxy: &proxy,
        node: server.client(),
        keyspace: Keyspace::new(unique_prefix("batch-lost")).unwrap(),
        names: ["plain", "ided"],
    })
    .await;
}
