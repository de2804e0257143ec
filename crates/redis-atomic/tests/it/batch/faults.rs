//! A batch whose reply is lost. The fault proxy swallows replies; one decision holds the lane's
//! only call slot (its reply swallowed too) while seven queue behind it; the first is abandoned
//! by its caller, so the seven leave as one batch, whose reply is swallowed; ending the fault
//! resets the connection. Each of the seven learns `OutcomeUnknown`; the four with request ids
//! are resent by the retry loop and answer as if once; the server shows every decision ran once.

use crate::common::patient;
use redis_atomic::quota::{Bounded, Bounds, Quotas};
use redis_atomic::{Batching, Client, Error, Keyspace};
use redis_atomic_testkit::{unique_prefix, Fault, FaultProxy, RedisServer, ServerOptions};
use std::time::Duration;

fn waited(what: &str, done: impl Fn() -> bool) {
    tokio::task::block_in_place(|| {
        redis_atomic_testkit::faults::wait(Duration::from_secs(10), what, || Ok(done())).unwrap();
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lost_batch_reply_is_unknown_per_decision_and_request_ids_are_resent() {
    let server = RedisServer::start(ServerOptions::default()).unwrap();
    let proxy = FaultProxy::start(server.addr().unwrap()).unwrap();
    let config = patient().batching(Batching::default().in_flight(1).min_batch(2));
    let client = Client::connect(&proxy.url(), config).await.unwrap();
    let direct = Client::connect(&server.url(), patient()).await.unwrap();
    let keyspace = Keyspace::new(unique_prefix("batch-lost")).unwrap();
    let quotas = Quotas::new(client.clone(), keyspace.clone());
    let bounds = Bounds::up_to(1000).unwrap();
    // Loads every script and batch entry point: the batch below must run, not meet `NOSCRIPT`.
    client
        .load(redis_atomic::script::registry::ALL)
        .await
        .unwrap();

    // The baseline before anything is spawned: a spawned decision may count itself at once.
    let stats = client.batch_stats();
    proxy.set(Fault::DropReplies);
    let first = {
        let quotas = quotas.clone();
        tokio::spawn(async move { quotas.add("plain", 1, bounds, None).await })
    };
    waited("the first decision's reply is swallowed", || {
        proxy.stats().replies_dropped >= 1 && client.batch_stats().since(&stats).alone == 1
    });
    let queued = tokio::spawn({
        let quotas = quotas.clone();
        async move {
            let plain = (0..3).map(|_| quotas.add("plain", 1, bounds, None));
            let ids = (0..4).map(|i| {
                let quotas = &quotas;
                async move {
                    quotas
                        .add_with_id("ided", 1, bounds, None, &format!("id{i}"))
                        .await
                }
            });
            futures::future::join(
                futures::future::join_all(plain),
                futures::future::join_all(ids),
            )
            .await
        }
    });
    waited("seven decisions queue", || {
        client.batch_stats().since(&stats).decisions == 8
    });
    first.abort(); // its caller gives up: the slot is handed to the queue
    waited("the batch's reply is swallowed", || {
        client.batch_stats().since(&stats).batches == 1 && proxy.stats().replies_dropped >= 2
    });
    assert_eq!(client.batch_stats().since(&stats).batched, 7);
    proxy.set(Fault::None); // resets the connections that lost replies

    let (plain, ids) = queued.await.unwrap();
    for r in &plain {
        assert!(matches!(r, Err(Error::OutcomeUnknown { .. })), "{r:?}");
    }
    for (i, r) in ids.iter().enumerate() {
        assert!(matches!(r, Ok(Bounded::Applied { .. })), "id{i}: {r:?}");
    }
    let check = Quotas::new(direct, keyspace);
    // Every decision ran exactly once: the abandoned one and the three unknown ones, and the four
    // with ids despite their resend.
    assert_eq!(check.get("plain").await.unwrap(), 4);
    assert_eq!(check.get("ided").await.unwrap(), 4);
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
