//! The Idempotency-Key layer through a real axum server and a real HTTP client.

use crate::common::{env, private_env, Env, Mode};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::Router;
use redis_atomic::idempotency::{Idempotency, IdempotencyConfig};
use redis_atomic::{ClientConfig, RetryPolicy};
use redis_atomic_http::{IdempotencyLayer, IdempotencyLayerConfig};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Executions of the handler: the side effect the layer must not repeat.
type Count = Arc<AtomicU64>;

/// Echoes the body; `slow` sleeps first, `long` longer; `fail` answers 500; executions are
/// counted.
async fn handler(
    State(count): State<Count>,
    body: Bytes,
) -> (StatusCode, [(&'static str, &'static str); 1], Bytes) {
    count.fetch_add(1, Ordering::SeqCst);
    if body.starts_with(b"slow") {
        tokio::time::sleep(Duration::from_millis(600)).await;
    }
    if body.starts_with(b"long") {
        tokio::time::sleep(Duration::from_millis(2500)).await;
    }
    let status = if body.starts_with(b"fail") {
        StatusCode::INTERNAL_SERVER_ERROR
    } else {
        StatusCode::CREATED
    };
    (status, [("content-type", "application/octet-stream")], body)
}

async fn serve(env: &Env, limit: usize) -> (SocketAddr, Count) {
    serve_with(env, limit, IdempotencyConfig::default()).await
}

async fn serve_with(env: &Env, limit: usize, idem: IdempotencyConfig) -> (SocketAddr, Count) {
    let store = Idempotency::new(env.client.clone(), env.keyspace.clone())
        .with_config(idem)
        .unwrap();
    let config = IdempotencyLayerConfig::default()
        .max_body_bytes(limit)
        .scope(|parts| {
            parts
                .headers
                .get("x-tenant")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("anon")
                .to_string()
        });
    let count = Count::default();
    let app = Router::new()
        .route(
            "/op",
            post(handler).layer(IdempotencyLayer::new(store, config)),
        )
        .route(
            "/free",
            get(|| async { "free" }).layer(IdempotencyLayer::new(
                Idempotency::new(env.client.clone(), env.keyspace.clone()),
                IdempotencyLayerConfig::default(),
            )),
        )
        .with_state(count.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (addr, count)
}

async fn post_op(
    addr: SocketAddr,
    key: Option<&str>,
    body: impl Into<reqwest::Body>,
) -> reqwest::Response {
    let mut req = reqwest::Client::new()
        .post(format!("http://{addr}/op"))
        .body(body);
    if let Some(k) = key {
        req = req.header("idempotency-key", k);
    }
    req.send().await.unwrap()
}

/// 400 without a key, replay with `Idempotent-Replayed`, 422 on a different payload, GET untouched.
#[tokio::test]
async fn status_codes_and_replay_header() {
    let env = env(Mode::StandaloneEval, "http-codes", ClientConfig::default()).await;
    let (addr, count) = serve(&env, 1 << 20).await;
    let r = post_op(addr, None, "a").await;
    assert_eq!(r.status(), 400);
    assert_eq!(r.headers()["content-type"], "application/problem+json");
    let r = post_op(addr, Some("k1"), "a").await;
    assert_eq!(r.status(), 201);
    assert!(r.headers().get("idempotent-replayed").is_none());
    let r = post_op(addr, Some("k1"), "a").await;
    assert_eq!(r.status(), 201);
    assert_eq!(r.headers()["idempotent-replayed"], "true");
    assert_eq!(r.headers()["content-type"], "application/octet-stream");
    assert_eq!(post_op(addr, Some("k1"), "b").await.status(), 422);
    assert_eq!(post_op(addr, Some(""), "b").await.status(), 400);
    let free = reqwest::get(format!("http://{addr}/free")).await.unwrap();
    assert_eq!(free.status(), 200);
    assert_eq!(count.load(Ordering::SeqCst), 1);
}

/// A duplicate while the first is still running gets 409 with Retry-After.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_flight_is_409_with_retry_after() {
    let env = env(Mode::StandaloneEval, "http-409", ClientConfig::default()).await;
    let (addr, count) = serve(&env, 1 << 20).await;
    let first = tokio::spawn(post_op(addr, Some("slow-1"), "slow"));
    tokio::time::sleep(Duration::from_millis(150)).await;
    let dup = post_op(addr, Some("slow-1"), "slow").await;
    assert_eq!(dup.status(), 409);
    assert!(
        dup.headers()["retry-after"]
            .to_str()
            .unwrap()
            .parse::<u64>()
            .unwrap()
            >= 1
    );
    assert_eq!(first.await.unwrap().status(), 201);
    assert_eq!(count.load(Ordering::SeqCst), 1);
}

/// A handler that runs past the claim's lease keeps its claim: the layer extends it every
/// lease/3, so a duplicate after the first lease would have ended still gets 409 (not a
/// takeover that runs the handler again).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_handler_keeps_its_claim() {
    let env = env(Mode::StandaloneEval, "http-extend", ClientConfig::default()).await;
    let idem = IdempotencyConfig::default().ttl(Duration::from_secs(1));
    let (addr, count) = serve_with(&env, 1 << 20, idem).await;
    let first = tokio::spawn(post_op(addr, Some("long-1"), "long"));
    tokio::time::sleep(Duration::from_millis(2000)).await;
    let dup = post_op(addr, Some("long-1"), "long").await;
    assert_eq!(dup.status(), 409, "the claim was not extended");
    assert_eq!(first.await.unwrap().status(), 201);
    assert_eq!(count.load(Ordering::SeqCst), 1);
}

/// 32 concurrent duplicates (per tenant) run the handler once per tenant.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_duplicates_run_once() {
    for mode in [Mode::StandaloneEval, Mode::ClusterFunctions] {
        let env = env(mode, "http-dups", ClientConfig::default()).await;
        let (addr, count) = serve(&env, 1 << 20).await;
        let mut tasks = Vec::new();
        for i in 0..32 {
            tasks.push(tokio::spawn(async move {
                reqwest::Client::new()
                    .post(format!("http://{addr}/op"))
                    .header("idempotency-key", "same")
                    .header("x-tenant", if i % 2 == 0 { "even" } else { "odd" })
                    .body("payload")
                    .send()
                    .await
                    .unwrap()
                    .status()
                    .as_u16()
            }));
        }
        for t in tasks {
            assert!(matches!(t.await.unwrap(), 201 | 409));
        }
        assert_eq!(
            count.load(Ordering::SeqCst),
            2,
            "{mode:?}: one execution per tenant"
        );
    }
}

/// Oversized bodies are refused (413) before anything runs; binary bodies replay byte-exact.
#[tokio::test]
async fn body_limit_and_binary_replay() {
    let env = env(Mode::StandaloneEval, "http-body", ClientConfig::default()).await;
    let (addr, count) = serve(&env, 1024).await;
    assert_eq!(
        post_op(addr, Some("big"), vec![b'x'; 2048]).await.status(),
        413
    );
    assert_eq!(count.load(Ordering::SeqCst), 0);
    let binary: Vec<u8> = (0..=255u8).rev().chain([0xff, 0xfe, 0x00, 0x80]).collect();
    let first = post_op(addr, Some("bin"), binary.clone()).await;
    assert_eq!(first.bytes().await.unwrap().as_ref(), binary.as_slice());
    let replay = post_op(addr, Some("bin"), binary.clone()).await;
    assert_eq!(replay.headers()["idempotent-replayed"], "true");
    assert_eq!(replay.bytes().await.unwrap().as_ref(), binary.as_slice());
    assert_eq!(count.load(Ordering::SeqCst), 1);
}

/// 5xx is not cached: the retry runs again.
#[tokio::test]
async fn server_errors_are_retryable() {
    let env = env(Mode::StandaloneEval, "http-5xx", ClientConfig::default()).await;
    let (addr, count) = serve(&env, 1 << 20).await;
    assert_eq!(post_op(addr, Some("f"), "fail").await.status(), 500);
    assert_eq!(post_op(addr, Some("f"), "fail").await.status(), 500);
    assert_eq!(count.load(Ordering::SeqCst), 2);
}

/// With Redis down the layer answers 503 and never runs the handler.
#[tokio::test]
async fn store_down_is_503_and_nothing_runs() {
    let config = ClientConfig::default()
        .timeout(Duration::from_millis(200))
        .retry(RetryPolicy::none());
    let mut env = private_env("http-down", config).await;
    let (addr, count) = serve(&env, 1 << 20).await;
    env.server.as_mut().unwrap().kill();
    let r = post_op(addr, Some("x"), "a").await;
    assert_eq!(r.status(), 503);
    assert_eq!(r.headers()["content-type"], "application/problem+json");
    assert_eq!(count.load(Ordering::SeqCst), 0);
}
