//! Section `keys`: namespace, primitive, tag and parts → the full key and its cluster hash slot;
//! each primitive's own key set; what is refused.

use super::operations::{limits_of, policy_of};
use super::vectors::{bytes, cases, error_json, expected, text, uint, Check};
use redis_atomic::dedup::Dedup;
use redis_atomic::fenced::FencedWrites;
use redis_atomic::idempotency::Idempotency;
use redis_atomic::keys::{same_slot, slot};
use redis_atomic::lock::Locks;
use redis_atomic::queue::{Queue, QueueConfig};
use redis_atomic::quota::Quotas;
use redis_atomic::ratelimit::{Entry, EntryLimiter, RateLimiter};
use redis_atomic::semaphore::{Semaphore, SemaphoreConfig};
use redis_atomic::{Client, ClientConfig, Error, Keyspace};
use redis_atomic_testkit::RedisServer;
use serde_json::{json, Value};

#[tokio::test]
async fn keys() {
    // The primitives' key methods hang off instances, which hold a client; no call is made.
    let client = Client::connect(&RedisServer::shared().url(), ClientConfig::default())
        .await
        .unwrap();
    let mut check = Check::new("keys");
    for case in cases("keys") {
        let actual =
            derive(&client, text(&case, "call"), &case["input"]).unwrap_or_else(|e| error_json(&e));
        check.compare(&case, &expected(&case, &["call", "input"]), &actual);
    }
    check.finish();
}

/// The library's answer to one `keys` case.
fn derive(client: &Client, call: &str, input: &Value) -> Result<Value, Error> {
    if call == "slot" {
        return Ok(json!({ "slot": slot(text(input, "key").as_bytes()) }));
    }
    let ks = Keyspace::new(text(input, "namespace"))?;
    let one = |key: String| json!({ "key": key, "slot": slot(key.as_bytes()) });
    let c = client.clone();
    let keys = match call {
        "keyspace.key" => {
            let parts: Vec<&str> = input["parts"]
                .as_array()
                .expect("parts")
                .iter()
                .map(|p| p.as_str().expect("a part is a string"))
                .collect();
            let schema = u32::try_from(uint(input, "schema")).expect("schema");
            let key = ks.key(text(input, "primitive"), schema, text(input, "tag"), &parts)?;
            return Ok(one(key));
        }
        "fenced.key" => {
            let f = FencedWrites::new(c, ks);
            return Ok(one(f.key(text(input, "resource"), text(input, "part"))?));
        }
        "lock.keys" => {
            let k = Locks::new(c, ks).keys(text(input, "resource"))?;
            json!({ "lock": k.lock, "fence": k.fence })
        }
        "semaphore.keys" => {
            let config = SemaphoreConfig::new(1);
            let sem = Semaphore::new(c, &ks, text(input, "name"), config)?;
            let k = sem.keys();
            json!({ "permits": k.permits, "holders": k.holders, "fence": k.fence })
        }
        "idempotency.keys" => {
            let store = Idempotency::new(c, ks);
            let k = store.keys(text(input, "scope"), &bytes(&input["key"]))?;
            json!({ "record": k.record })
        }
        "ratelimit.keys" => {
            let limiter = RateLimiter::new(c, ks, policy_of(&input["limits"])?);
            let k = limiter.keys(text(input, "identity"), input["request_id"].as_str())?;
            json!({ "request": k.request, "limits": k.limits })
        }
        "entries.keys" => entry_keys(c, ks, input)?,
        "quota.keys" => {
            let k = Quotas::new(c, ks).keys(text(input, "name"), input["request_id"].as_str())?;
            json!({ "value": k.value, "request": k.request })
        }
        "queue.keys" => queue_keys(c, &ks, input)?,
        "dedup.keys" => json!({ "seen": Dedup::new(c, ks).keys(text(input, "event_id"))?.seen }),
        "fenced.keys" => {
            json!({ "fence": FencedWrites::new(c, ks).keys(text(input, "resource"))?.fence })
        }
        other => panic!("unknown keys call {other:?}"),
    };
    Ok(json!({ "keys": keys, "slot": common_slot(&keys) }))
}

fn entry_keys(client: Client, ks: Keyspace, input: &Value) -> Result<Value, Error> {
    let mut entries = Vec::new();
    for e in input["entries"].as_array().expect("entries") {
        let limit = limits_of(&Value::Array(vec![e["limit"].clone()]))?.remove(0);
        entries.push(Entry::new(limit, text(e, "identity"), uint(e, "hits")));
    }
    let keys = EntryLimiter::new(client, ks).keys(text(input, "tag"), &entries)?;
    Ok(json!({ "limits": keys }))
}

fn queue_keys(client: Client, ks: &Keyspace, input: &Value) -> Result<Value, Error> {
    let queue = Queue::new(client, ks, text(input, "name"), QueueConfig::default())?;
    let k = queue.keys();
    Ok(json!({
        "due": k.due, "inflight": k.inflight, "dead": k.dead, "done": k.done, "meta": k.meta,
        "payload": k.payload, "errors": k.errors, "claims": k.claims,
        "claim": k.claim(text(input, "claim_id"))?,
    }))
}

/// The one slot of every key string in `keys` (a key set must be in one slot), or the word
/// `cross_slot`.
fn common_slot(keys: &Value) -> Value {
    let mut all = Vec::new();
    collect(keys, &mut all);
    match same_slot(&all) {
        Ok(Some(s)) => json!(s),
        _ => json!("cross_slot"),
    }
}

fn collect(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| collect(x, out)),
        Value::Object(o) => o.values().for_each(|x| collect(x, out)),
        _ => {}
    }
}
