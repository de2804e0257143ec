//! The operations the `arguments` and `errors` sections name (`lock.acquire_with_token`,
//! `queue.claim`, ...), run through the library's public API with a case's inputs, answering the
//! outcome's word: the Rust variant's name in snake case, the vocabulary's rule.

use super::vectors::{bytes, int, text, uint};
use redis_atomic::dedup::Dedup;
use redis_atomic::fenced::FencedWrites;
use redis_atomic::idempotency::{
    Body, Failure, Fingerprint, Idempotency, IdempotencyConfig, Response,
};
use redis_atomic::lock::Locks;
use redis_atomic::queue::{Queue, QueueConfig, RunAt};
use redis_atomic::quota::{Bounds, Quotas};
use redis_atomic::ratelimit::{Algorithm, Limit, Policy, RateLimiter};
use redis_atomic::semaphore::{Semaphore, SemaphoreConfig};
use redis_atomic::write::Write;
use redis_atomic::{Client, Error, Fence, Keyspace, OwnerToken};
use serde_json::Value;
use std::num::NonZeroU32;
use std::time::{Duration, UNIX_EPOCH};

/// Runs `operation` with `input`; the outcome's word (`None` for a read that answers a state
/// without one, such as `semaphore.inspect`).
pub async fn run(client: &Client, operation: &str, input: &Value) -> Result<Option<String>, Error> {
    let ks = Keyspace::new(text(input, "namespace"))?;
    let c = client.clone();
    let (primitive, op) = operation.split_once('.').expect("primitive.operation");
    match primitive {
        "lock" => lock(Locks::new(c, ks), op, input).await,
        "semaphore" => semaphore(c, &ks, op, input).await,
        "idempotency" => idempotency(c, ks, op, input).await,
        "ratelimit" => ratelimit(c, ks, op, input).await,
        "quota" => quota(Quotas::new(c, ks), op, input).await,
        "queue" => queue(c, &ks, op, input).await,
        "fenced" => fenced(FencedWrites::new(c, ks), op, input).await,
        "dedup" => dedup(Dedup::new(c, ks), op, input).await,
        other => panic!("unknown primitive {other:?}"),
    }
}

/// The vocabulary's word of an outcome: its Rust variant's name in snake case
/// (`InProgress { .. }` → `in_progress`).
fn word<T: std::fmt::Debug>(outcome: &T) -> Option<String> {
    let debug = format!("{outcome:?}");
    let name: String = debug.chars().take_while(|c| c.is_alphanumeric()).collect();
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    Some(out)
}

fn string(v: &Value) -> String {
    v.as_str().expect("a string").to_string()
}

fn ms(input: &Value, field: &str) -> Duration {
    Duration::from_millis(uint(input, field))
}

fn token(input: &Value, field: &str) -> OwnerToken {
    OwnerToken::new(text(input, field)).expect("a valid owner token")
}

fn fence(input: &Value) -> Fence {
    Fence(uint(input, "fence"))
}

async fn lock(locks: Locks, op: &str, input: &Value) -> Result<Option<String>, Error> {
    let resource = text(input, "resource");
    match op {
        "acquire" => Ok(word(&locks.acquire(resource, ms(input, "ttl_ms")).await?)),
        "acquire_with_token" => {
            let ttl = ms(input, "ttl_ms");
            let outcome = locks
                .acquire_with_token(resource, &token(input, "token"), ttl)
                .await?;
            Ok(word(&outcome))
        }
        "release" => Ok(word(
            &locks
                .release(resource, &token(input, "token"), fence(input))
                .await?,
        )),
        "extend" => {
            let (t, ttl) = (token(input, "token"), ms(input, "ttl_ms"));
            Ok(word(&locks.extend(resource, &t, fence(input), ttl).await?))
        }
        "inspect" => Ok(word(&locks.inspect(resource).await?)),
        other => panic!("unknown lock operation {other:?}"),
    }
}

async fn semaphore(
    c: Client,
    ks: &Keyspace,
    op: &str,
    input: &Value,
) -> Result<Option<String>, Error> {
    let capacity = u32::try_from(uint(input, "capacity")).expect("capacity");
    let sem = Semaphore::new(c, ks, text(input, "name"), SemaphoreConfig::new(capacity))?;
    match op {
        "acquire_with_token" => {
            let outcome = sem
                .acquire_with_token(&token(input, "token"), ms(input, "ttl_ms"))
                .await?;
            Ok(word(&outcome))
        }
        "release" => Ok(word(
            &sem.release(&token(input, "token"), fence(input)).await?,
        )),
        "extend" => {
            let (t, ttl) = (token(input, "token"), ms(input, "ttl_ms"));
            Ok(word(&sem.extend(&t, fence(input), ttl).await?))
        }
        "inspect" => sem.inspect().await.map(|_| None),
        other => panic!("unknown semaphore operation {other:?}"),
    }
}

async fn idempotency(
    c: Client,
    ks: Keyspace,
    op: &str,
    input: &Value,
) -> Result<Option<String>, Error> {
    let mut config = IdempotencyConfig::default();
    if let Some(cfg) = input.get("config") {
        config = config
            .ttl(ms(cfg, "ttl_ms"))
            .result_ttl(ms(cfg, "result_ttl_ms"));
    }
    let store = Idempotency::new(c, ks).with_config(config)?;
    let (scope, key) = (text(input, "scope"), bytes(&input["key"]));
    let t = token(input, "token");
    match op {
        "begin_with_token" => {
            let parts: Vec<Vec<u8>> = input["fingerprint"]
                .as_array()
                .expect("fingerprint parts")
                .iter()
                .map(bytes)
                .collect();
            let parts: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
            let fp = Fingerprint::of(&parts);
            Ok(word(&store.begin_with_token(scope, &key, fp, &t).await?))
        }
        "complete" => {
            let response = response(&input["response"]);
            Ok(word(
                &store
                    .complete(scope, &key, &t, fence(input), &response)
                    .await?,
            ))
        }
        "fail" => {
            let failure = match text(input, "failure") {
                "retryable" => Failure::Retryable,
                _ => Failure::Final(response(&input["response"])),
            };
            Ok(word(
                &store.fail(scope, &key, &t, fence(input), &failure).await?,
            ))
        }
        "extend" => Ok(word(
            &store
                .extend(scope, &key, &t, fence(input), ms(input, "ttl_ms"))
                .await?,
        )),
        other => panic!("unknown idempotency operation {other:?}"),
    }
}

/// `{"status", "headers": [[name, value]], "body" | "body_reference"}`.
fn response(v: &Value) -> Response {
    let headers = v["headers"]
        .as_array()
        .expect("headers")
        .iter()
        .map(|h| (string(&h[0]), bytes(&h[1])))
        .collect();
    let body = match v.get("body_reference") {
        Some(r) => Body::Reference(r.as_str().expect("a reference").to_string()),
        None => Body::Bytes(bytes(&v["body"])),
    };
    Response {
        status: u16::try_from(uint(v, "status")).expect("status"),
        headers,
        body,
    }
}

/// `[{"algorithm", "limit", "period_ms", "burst"?, "name"?}]`.
pub fn limits_of(v: &Value) -> Result<Vec<Limit>, Error> {
    let mut out = Vec::new();
    for l in v.as_array().expect("limits") {
        let algorithm: Algorithm = text(l, "algorithm").parse()?;
        let mut limit = Limit::new(algorithm, uint(l, "limit"), ms(l, "period_ms"))?;
        if let Some(b) = l.get("burst") {
            limit = limit.with_burst(b.as_u64().expect("burst"))?;
        }
        if let Some(n) = l.get("name") {
            limit = limit.named(n.as_str().expect("name"))?;
        }
        out.push(limit);
    }
    Ok(out)
}

pub fn policy_of(v: &Value) -> Result<Policy, Error> {
    Policy::new(limits_of(v)?)
}

async fn ratelimit(
    c: Client,
    ks: Keyspace,
    op: &str,
    input: &Value,
) -> Result<Option<String>, Error> {
    let limiter = RateLimiter::new(c, ks, policy_of(&input["limits"])?);
    let (identity, cost) = (text(input, "identity"), uint(input, "cost"));
    match op {
        "consume" => Ok(word(&limiter.consume(identity, cost).await?)),
        "consume_with_id" => {
            let id = text(input, "request_id");
            Ok(word(&limiter.consume_with_id(identity, cost, id).await?))
        }
        other => panic!("unknown ratelimit operation {other:?}"),
    }
}

async fn quota(quotas: Quotas, op: &str, input: &Value) -> Result<Option<String>, Error> {
    let name = text(input, "name");
    if op == "raise" {
        return Ok(word(&quotas.raise(name, int(input, "candidate")).await?));
    }
    let bounds = Bounds::new(int(input, "min"), int(input, "max"))?;
    let ttl = input["ttl_ms"].as_u64().map(Duration::from_millis);
    let delta = int(input, "delta");
    let outcome = match op {
        "add" => quotas.add(name, delta, bounds, ttl).await?,
        "add_clamped" => quotas.add_clamped(name, delta, bounds, ttl).await?,
        "add_with_id" => {
            let id = text(input, "request_id");
            quotas.add_with_id(name, delta, bounds, ttl, id).await?
        }
        other => panic!("unknown quota operation {other:?}"),
    };
    Ok(word(&outcome))
}

/// `{"max_deliveries"?, "max_dead_letters"?, "dead_letter_retention_ms"?, "dedup_window_ms"?,
/// "claim_id_ttl_ms"?}` over the defaults.
fn queue_config(v: Option<&Value>) -> QueueConfig {
    let mut config = QueueConfig::default();
    let Some(v) = v else { return config };
    let nonzero = |f: &str| NonZeroU32::new(u32::try_from(uint(v, f)).expect(f)).expect(f);
    if v.get("max_deliveries").is_some() {
        config = config.max_deliveries(nonzero("max_deliveries"));
    }
    if v.get("max_dead_letters").is_some() {
        config = config.max_dead_letters(nonzero("max_dead_letters"));
    }
    if v.get("dead_letter_retention_ms").is_some() {
        config = config.dead_letter_retention(ms(v, "dead_letter_retention_ms"));
    }
    if v.get("dedup_window_ms").is_some() {
        config = config.dedup_window(ms(v, "dedup_window_ms"));
    }
    if v.get("claim_id_ttl_ms").is_some() {
        config = config.claim_id_ttl(ms(v, "claim_id_ttl_ms"));
    }
    config
}

async fn queue(c: Client, ks: &Keyspace, op: &str, input: &Value) -> Result<Option<String>, Error> {
    let q = Queue::new(
        c,
        ks,
        text(input, "name"),
        queue_config(input.get("config")),
    )?;
    let outcome = match op {
        "enqueue" => {
            let run_at = if input.get("delay_ms").is_some() {
                RunAt::After(ms(input, "delay_ms"))
            } else if input.get("at_ms").is_some() {
                RunAt::At(UNIX_EPOCH + ms(input, "at_ms"))
            } else {
                RunAt::Now
            };
            let payload = bytes(&input["payload"]);
            word(&q.enqueue(text(input, "job_id"), &payload, run_at).await?)
        }
        "claim" | "claim_with_id" => {
            let (w, ttl) = (token(input, "worker"), ms(input, "ttl_ms"));
            let max = usize::try_from(uint(input, "max_jobs")).expect("max_jobs");
            let claim = match input.get("claim_id") {
                Some(id) => {
                    q.claim_with_id(&w, ttl, max, id.as_str().expect("claim id"))
                        .await?
                }
                None => q.claim(&w, ttl, max).await?,
            };
            word(&claim)
        }
        "ack" => word(
            &q.ack(text(input, "job_id"), &token(input, "token"), fence(input))
                .await?,
        ),
        "nack" => {
            let (id, t, f) = (text(input, "job_id"), token(input, "token"), fence(input));
            let after = ms(input, "retry_after_ms");
            word(&q.nack(id, &t, f, after, text(input, "error")).await?)
        }
        "extend" => {
            let (id, t, f) = (text(input, "job_id"), token(input, "token"), fence(input));
            word(&q.extend(id, &t, f, ms(input, "ttl_ms")).await?)
        }
        other => panic!("unknown queue operation {other:?}"),
    };
    Ok(outcome)
}

async fn fenced(f: FencedWrites, op: &str, input: &Value) -> Result<Option<String>, Error> {
    assert_eq!(op, "fenced_write", "unknown fenced operation");
    let resource = text(input, "resource");
    let mut writes = Vec::new();
    for w in input["writes"].as_array().expect("writes") {
        let key = f.key(resource, text(w, "part"))?;
        let list = |field: &str| -> Vec<Vec<u8>> {
            w[field]
                .as_array()
                .expect(field)
                .iter()
                .map(bytes)
                .collect()
        };
        writes.push(match text(w, "op") {
            "set" if w.get("ttl_ms").is_some() => {
                Write::set_px(key, bytes(&w["value"]), ms(w, "ttl_ms"))
            }
            "set" => Write::set(key, bytes(&w["value"])),
            "hset" => Write::hset(
                key,
                w["fields"]
                    .as_array()
                    .expect("fields")
                    .iter()
                    .map(|p| (string(&p[0]), bytes(&p[1]))),
            ),
            "hdel" => Write::hdel(
                key,
                list("fields")
                    .into_iter()
                    .map(|b| String::from_utf8(b).expect("UTF-8 field")),
            ),
            "sadd" => Write::sadd(key, list("members")),
            "srem" => Write::srem(key, list("members")),
            "del" => Write::del(key),
            "pexpire" => Write::expire(key, ms(w, "ttl_ms")),
            other => panic!("unknown write op {other:?}"),
        });
    }
    Ok(word(
        &f.fenced_write(resource, fence(input), &writes).await?,
    ))
}

async fn dedup(d: Dedup, op: &str, input: &Value) -> Result<Option<String>, Error> {
    assert_eq!(op, "first_seen_as", "unknown dedup operation");
    let first = d
        .first_seen_as(
            text(input, "event_id"),
            ms(input, "ttl_ms"),
            &token(input, "token"),
        )
        .await?;
    Ok(Some(if first { "first" } else { "duplicate" }.to_string()))
}
