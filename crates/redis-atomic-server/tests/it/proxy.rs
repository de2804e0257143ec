//! The proxy's forwarding details through real sockets: an axum upstream that reports what it
//! received, the proxy in front of it on a real server (testkit), reqwest as the client.

use crate::common::{env, Env, Mode};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{any, post};
use axum::Router;
use redis_atomic::ClientConfig;
use redis_atomic_server::config::Config;
use redis_atomic_server::faces::proxy::{Proxy, Upstream};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Serves `app` on a free loopback port (axum's own server: the proxy must not care).
async fn listen(app: Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

/// The upstream: `/echo` answers with the headers it received (as `name: value` lines);
/// `/slow` answers after 2 s; `/big` with 1 KiB; every call is counted.
pub async fn upstream() -> (SocketAddr, Arc<AtomicU64>) {
    let count = Arc::new(AtomicU64::new(0));
    let (c1, c2, c3) = (count.clone(), count.clone(), count.clone());
    let app = Router::new()
        .route(
            "/echo",
            any(move |headers: HeaderMap| async move {
                c1.fetch_add(1, Ordering::SeqCst);
                let lines: Vec<String> = headers
                    .iter()
                    .map(|(n, v)| format!("{n}: {}", v.to_str().unwrap_or("?")))
                    .collect();
                (
                    [("connection", "x-up-secret"), ("x-up-secret", "1")],
                    lines.join("\n"),
                )
            }),
        )
        .route(
            "/slow",
            post(move || async move {
                c2.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_secs(2)).await;
                "late"
            }),
        )
        .route(
            "/big",
            post(move || async move {
                c3.fetch_add(1, Ordering::SeqCst);
                (StatusCode::CREATED, vec![b'x'; 1024])
            }),
        );
    (listen(app).await, count)
}

const CONFIG: &str = r#"
[proxy]
max_body_bytes = 512

[[proxy.routes]]
path = "/echo"
require_key = true
"#;

/// The proxy in front of `upstream`, with [`CONFIG`] (and an upstream timeout, if given).
pub async fn proxy(env: &Env, upstream: SocketAddr, timeout_ms: Option<u64>) -> String {
    let mut config = Config::parse(CONFIG, "test").unwrap();
    config.proxy.namespace = Some(env.keyspace.namespace().to_string());
    config.proxy.upstream_timeout_ms = timeout_ms;
    let upstream = Upstream::parse(&format!("http://{upstream}")).unwrap();
    let proxy = Proxy::new(env.client.clone(), &config, upstream).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(proxy.serve(listener, std::future::pending()));
    format!("http://{addr}")
}

async fn post_with(url: &str, key: Option<&str>, body: &'static str) -> reqwest::Response {
    let mut req = reqwest::Client::new().post(url).body(body);
    if let Some(key) = key {
        req = req.header("idempotency-key", key);
    }
    req.send().await.unwrap()
}

/// Hop-by-hop headers do not cross the proxy either way; X-Forwarded-For names the client; a
/// generation header sent by the client is replaced by the claim's; a required key is required.
#[tokio::test]
async fn hop_by_hop_headers_stop_at_the_proxy() {
    let env = env(Mode::StandaloneEval, "proxy-hop", ClientConfig::default()).await;
    let (up, count) = upstream().await;
    let base = proxy(&env, up, None).await;
    let r = reqwest::Client::new()
        .post(format!("{base}/echo"))
        .header("connection", "x-secret")
        .header("x-secret", "1")
        .header("proxy-authorization", "Basic eA==")
        .header("idempotency-key", "h-1")
        .header("idempotency-generation", "999999")
        .header("x-kept", "yes")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(
        r.headers().get("x-up-secret").is_none(),
        "{:?}",
        r.headers()
    );
    let seen = r.text().await.unwrap();
    assert!(
        !seen.contains("x-secret") && !seen.contains("proxy-authorization"),
        "{seen}"
    );
    assert!(
        seen.contains("x-kept: yes") && seen.contains("x-forwarded-for: 127.0.0.1"),
        "{seen}"
    );
    let generation = seen
        .lines()
        .find_map(|l| l.strip_prefix("idempotency-generation: "))
        .unwrap();
    assert_ne!(generation, "999999", "{seen}");
    assert!(generation.parse::<u64>().is_ok(), "{seen}");
    let missing = post_with(&format!("{base}/echo"), None, "").await;
    assert_eq!(missing.status(), 400);
    assert_eq!(
        count.load(Ordering::SeqCst),
        1,
        "a refused request never reaches upstream"
    );
}

/// Unreachable upstream → 502, slow upstream → 504, both problem+json and neither stored: the
/// key is free again, so the retry is forwarded again (a replay or a 409 would say otherwise).
#[tokio::test]
async fn upstream_failures_are_5xx_and_free_the_key() {
    let env = env(Mode::StandaloneEval, "proxy-5xx", ClientConfig::default()).await;
    let (up, count) = upstream().await;
    let base = proxy(&env, up, Some(1000)).await;
    for _ in 0..2 {
        let r = post_with(&format!("{base}/slow"), Some("s-1"), "").await;
        assert_eq!(r.status(), 504);
        assert_eq!(r.headers()["content-type"], "application/problem+json");
    }
    assert_eq!(
        count.load(Ordering::SeqCst),
        2,
        "the timed-out key ran again"
    );
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let dead = proxy(&env, closed, None).await;
    for _ in 0..2 {
        let r = post_with(&format!("{dead}/echo"), Some("d-1"), "").await;
        assert_eq!(r.status(), 502);
        assert!(r.headers().get("idempotent-replayed").is_none());
    }
}

/// A request body over `max_body_bytes` → 413, never forwarded; a response over it ran once and
/// is answered and replayed as a stored 500, never run again.
#[tokio::test]
async fn body_limits_both_ways() {
    let env = env(Mode::StandaloneEval, "proxy-413", ClientConfig::default()).await;
    let (up, count) = upstream().await;
    let base = proxy(&env, up, None).await;
    let big: &'static str = "0123456789abcdef".repeat(40).leak();
    assert_eq!(
        post_with(&format!("{base}/echo"), Some("b-1"), big)
            .await
            .status(),
        413
    );
    assert_eq!(
        post_with(&format!("{base}/other"), None, big)
            .await
            .status(),
        413
    );
    assert_eq!(count.load(Ordering::SeqCst), 0);
    let first = post_with(&format!("{base}/big"), Some("g-1"), "").await;
    assert_eq!(first.status(), 500);
    let again = post_with(&format!("{base}/big"), Some("g-1"), "").await;
    assert_eq!(again.status(), 500);
    assert_eq!(again.headers()["idempotent-replayed"], "true");
    assert_eq!(count.load(Ordering::SeqCst), 1, "ran once");
}
