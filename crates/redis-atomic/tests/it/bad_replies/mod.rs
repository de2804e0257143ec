//! Replies no script sends: every generated reply type fed arbitrary `redis::Value` trees, and a
//! real server's reply rewritten on the wire. Each ends in a value or `Error::BadReply`, never a
//! panic or an allocation sized by a number in the reply.

use proptest::prelude::*;
use redis_atomic::lease::OwnerToken;
use redis_atomic::queue::{Claim, Queue, QueueConfig, RunAt};
use redis_atomic::script::registry::{decode_reply, ALL};
use redis_atomic::script::Reply;
use redis_atomic::{Client, ClientConfig, Error, Keyspace, RetryPolicy};
use redis_atomic_testkit::{arb, unique_prefix, Fault, FaultProxy, RedisServer, ServerOptions};
use std::time::Duration;

/// The status words script `i` of the registry declares.
fn words(i: usize) -> Vec<String> {
    let returns = redis_atomic_scripts::returns::parse(ALL[i].returns).unwrap();
    returns.statuses().into_iter().map(String::from).collect()
}

/// Script `i` and a reply for it: a tagged array with one of its status words, or anything.
fn script_and_reply() -> impl Strategy<Value = (usize, redis::Value)> {
    (0..ALL.len()).prop_flat_map(|i| (Just(i), arb::tagged(words(i))))
}

/// Every script of the registry has a decoder `decode_reply` reaches (so the proptest below
/// covers a script added later without a new line).
#[test]
fn every_script_has_a_decoder() {
    for def in ALL {
        let reply = Reply::parse(def.name, redis::Value::Array(vec![])).err();
        assert!(
            matches!(reply, Some(Error::BadReply { .. })),
            "{}",
            def.name
        );
        let tagged = redis::Value::Array(vec![redis::Value::BulkString(b"?".to_vec())]);
        let reply = Reply::parse(def.name, tagged).unwrap();
        assert!(
            matches!(decode_reply(reply), Some(Err(Error::BadReply { .. }))),
            "{}",
            def.name
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]
    /// Any value, as the reply of any script: a status word the script declares, or
    /// `BadReply` naming the script; never a panic.
    #[test]
    fn reply_decoders_answer_any_value((i, value) in script_and_reply()) {
        let def = ALL[i];
        let decoded = Reply::parse(def.name, value).and_then(|r| decode_reply(r).unwrap());
        match decoded {
            Ok(status) => prop_assert!(words(i).contains(&status)),
            Err(Error::BadReply { script, .. }) => prop_assert_eq!(script, def.name),
            Err(other) => prop_assert!(false, "{}: {other:?}", def.name),
        }
    }
}

proptest! {
    /// The `redis` crate's conversions the primitives' own commands lean on (quota's `GET`, CAS
    /// reads, `ZADD`'s count, verify's judgements) answer any value with a value or an error.
    #[test]
    fn conversions_answer_any_value(value in arb::reply()) {
        let _ = redis::from_redis_value_ref::<Option<i64>>(&value);
        let _ = redis::from_redis_value_ref::<u64>(&value);
        let _ = redis::from_redis_value_ref::<Vec<String>>(&value);
        let _ = redis::from_redis_value_ref::<std::collections::HashMap<String, u64>>(&value);
        let _ = redis::from_redis_value_ref::<Option<Vec<u8>>>(&value);
    }
}

/// A claim of three due jobs (through a fault proxy, with `timeout`) whose reply has `find`
/// replaced by `replace` on the wire, exactly once.
async fn rewritten_claim(
    find: &'static [u8],
    replace: &'static [u8],
    timeout: Duration,
) -> Result<Claim, Error> {
    let server = RedisServer::start(ServerOptions::default()).unwrap();
    let proxy = FaultProxy::start(server.addr().unwrap()).unwrap();
    let config = ClientConfig::default()
        .timeout(timeout)
        .retry(RetryPolicy::new(1, Duration::from_secs(1)));
    let client = Client::connect(&proxy.url(), config).await.unwrap();
    client
        .load(redis_atomic::script::registry::ALL)
        .await
        .unwrap();
    let keyspace = Keyspace::new(unique_prefix("bad-replies")).unwrap();
    let queue = Queue::new(client, &keyspace, "q", QueueConfig::default()).unwrap();
    for id in ["a", "b", "c"] {
        queue.enqueue(id, b"payload", RunAt::Now).await.unwrap();
    }
    proxy.set(Fault::RewriteReplies { find, replace });
    let r = queue
        .claim(&OwnerToken::random(), Duration::from_secs(60), 10)
        .await;
    proxy.set(Fault::None);
    assert_eq!(proxy.stats().replies_rewritten, 1);
    r
}

/// A proxy rewriting `queue_claim`'s job count to 2^62 once aborted the process
/// ("capacity overflow" from a `Vec::with_capacity` sized by it). Now the count is checked
/// against the jobs actually received: a typed `BadReply`.
#[tokio::test]
async fn claim_count_of_2_pow_62_is_a_bad_reply() {
    // The claim reply is `claimed, now_ms, 3, (id, fence, deliveries = 1, payload) * 3`: the
    // only integer 3 in it is the count.
    let huge = b":4611686018427387904\r\n";
    let r = rewritten_claim(b":3\r\n", huge, Duration::from_secs(10)).await;
    assert!(
        matches!(&r, Err(Error::BadReply { script: "queue_claim", detail }) if detail.contains("4611686018427387904")),
        "{r:?}"
    );
}

/// The same reply with its array header (3 + 3 * 4 items) rewritten to 2^62 items: the `redis`
/// crate's parser waits for items that never come; the call times out (outcome unknown, the
/// claim did run) instead of allocating for them.
#[tokio::test]
async fn array_of_2_pow_62_items_times_out() {
    let huge = b"*4611686018427387904\r\n";
    let r = rewritten_claim(b"*15\r\n", huge, Duration::from_millis(500)).await;
    assert!(
        matches!(
            r,
            Err(Error::OutcomeUnknown {
                timed_out: true,
                ..
            })
        ),
        "{r:?}"
    );
}

mod unparsable;
