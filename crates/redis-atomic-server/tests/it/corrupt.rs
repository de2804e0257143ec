//! Both faces in front of a hostile Redis: a real server behind the testkit's corrupting proxy,
//! which replaces 30 % of the replies to script calls with random or malformed RESP or cuts them
//! short. Many requests over every kind of route: no answer is a 500; each is a primitive's
//! outcome or the documented problem for what the server may have done — 502 `bad-reply` or
//! `redis-error`, 503 `unavailable` with `Retry-After`, 504 `outcome-unknown` — with
//! `retry_safe` wherever the request may have run.

use crate::common::Env;
use crate::proxy::{proxy, upstream};
use crate::serve::{serve_on, Answer};
use redis_atomic::{Client, ClientConfig, Keyspace};
use redis_atomic_testkit::{unique_prefix, Fault, FaultProxy, RedisServer, ServerOptions};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::Duration;

const CORRUPT: Fault = Fault::CorruptReplies {
    percent: 30,
    seed: 2024,
};

/// A server of the test's own behind a proxy (not corrupting yet), and a client through it.
async fn behind_a_proxy(test: &str) -> (Env, FaultProxy) {
    let server = RedisServer::start(ServerOptions::default()).unwrap();
    let proxy = FaultProxy::start(server.addr().unwrap()).unwrap();
    let config = ClientConfig::default().timeout(Duration::from_secs(5));
    let env = Env {
        client: Client::connect(&proxy.url(), config).await.unwrap(),
        keyspace: Keyspace::new(unique_prefix(test)).unwrap(),
        redis: Some(server.client()),
        server: Some(server),
    };
    (env, proxy)
}

/// Requests of request number `i` over the routes that run scripts.
fn requests(i: u32) -> Vec<(String, Value)> {
    let token = format!("token-{i:04}");
    vec![
        (
            format!("/v1/locks/r{i}/acquire"),
            json!({"ttl_ms": 10000, "token": token}),
        ),
        (
            format!("/v1/locks/r{i}/release"),
            json!({"token": token, "fence": 1}),
        ),
        (
            "/v1/quotas/q/add".into(),
            json!({"delta": 1, "max": 1000, "request_id": format!("a{i}")}),
        ),
        (
            "/v1/semaphores/s/acquire".into(),
            json!({"capacity": 3, "ttl_ms": 1000}),
        ),
        (
            "/v1/fenced/f/write".into(),
            json!({"fence": i + 1, "writes": [{"key": "k", "value": "v"}]}),
        ),
        (
            "/v1/queues/q/jobs".into(),
            json!({"id": format!("j{i}"), "payload": "p"}),
        ),
        ("/v1/queues/q/claim".into(), json!({"worker": "w"})),
        (
            "/v1/limits/api/consume".into(),
            json!({"key": "k", "request_id": format!("c{i}")}),
        ),
        (
            format!("/v1/idempotency/k{i}/begin"),
            json!({"fingerprint": "f"}),
        ),
        (format!("/v1/dedup/e{i}"), json!({"ttl_ms": 10000})),
    ]
}

/// The answer is a primitive's outcome or a documented problem, never a 500; its label.
fn judged(path: &str, a: &Answer) -> String {
    let kind = a.body["type"]
        .as_str()
        .unwrap_or("")
        .trim_start_matches("urn:redis-atomic:problem:")
        .to_string();
    match a.status {
        200 | 201 | 204 | 409 | 429 => {}
        502 => assert!(
            kind == "bad-reply" || kind == "redis-error",
            "{path}: {}",
            a.body
        ),
        503 => {
            assert!(
                kind == "unavailable" || kind == "not-replicated",
                "{path}: {}",
                a.body
            );
            assert_eq!(a.header("retry-after"), "1", "{path}");
        }
        504 => assert_eq!(kind, "outcome-unknown", "{path}: {}", a.body),
        other => panic!("{path}: {other} {}", a.body),
    }
    if kind == "bad-reply" || kind == "outcome-unknown" {
        assert!(a.body["retry_safe"].is_boolean(), "{path}: {}", a.body);
        a.problem(a.status, &kind);
    }
    format!("{} {kind}", a.status)
}

/// `serve` over a corrupting proxy: hundreds of requests, no 500, each answer documented.
#[tokio::test]
async fn serve_answers_no_500_under_corrupted_replies() {
    let (env, corrupting) = behind_a_proxy("serve-corrupt").await;
    let limits =
        "[limits.api]\nlimits = [ { algorithm = \"gcra\", limit = 1000000, period_ms = 1000 } ]\n";
    let s = serve_on(env, limits).await;
    corrupting.set(CORRUPT);
    let mut seen: BTreeMap<String, u64> = BTreeMap::new();
    for i in 0..40 {
        for (path, body) in requests(i) {
            let answer = s.post(&path, body).await;
            *seen.entry(judged(&path, &answer)).or_default() += 1;
        }
    }
    corrupting.set(Fault::None);
    let corrupted = corrupting.stats().replies_corrupted;
    let failed: u64 = seen
        .iter()
        .filter(|(k, _)| k.starts_with('5'))
        .map(|(_, n)| n)
        .sum();
    assert!(corrupted >= 40, "{corrupted} corrupted: {seen:?}");
    assert!(
        failed > 0 && seen.keys().any(|k| k.starts_with("20")),
        "{seen:?}"
    );
    eprintln!("serve under corrupted replies ({corrupted} corrupted): {seen:?}");
}

/// `proxy` over a corrupting proxy: an idempotent POST per key, each answered by the upstream,
/// a replay, or a documented problem (503 while the store cannot be trusted), never a 500.
#[tokio::test]
async fn proxy_answers_no_500_under_corrupted_replies() {
    let (env, corrupting) = behind_a_proxy("proxy-corrupt").await;
    let (up, _count) = upstream().await;
    let base = proxy(&env, up, None).await;
    corrupting.set(CORRUPT);
    let http = reqwest::Client::new();
    let mut seen: BTreeMap<u16, u64> = BTreeMap::new();
    for i in 0..150 {
        let r = http
            .post(format!("{base}/echo"))
            .header("idempotency-key", format!("key-{}", i % 100))
            .timeout(Duration::from_secs(30))
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        assert!(
            matches!(status, 200 | 409 | 503),
            "{status}: {}",
            r.text().await.unwrap()
        );
        *seen.entry(status).or_default() += 1;
    }
    corrupting.set(Fault::None);
    let corrupted = corrupting.stats().replies_corrupted;
    assert!(corrupted > 0, "{seen:?}");
    assert!(seen.contains_key(&200), "{seen:?}");
    eprintln!("proxy under corrupted replies ({corrupted} corrupted): {seen:?}");
}
