//! The RateLimit layer through a real axum server and a real HTTP client: headers, 429,
//! fail-open and fail-closed (never 429) when Redis is down or stalled.

use crate::common::{env, private_env, Env, Mode};
use axum::extract::State;
use axum::routing::get;
use axum::Router;
use redis_atomic::ratelimit::{Limit, Policy, RateLimiter};
use redis_atomic::{ClientConfig, RetryPolicy};
use redis_atomic_http::{RateLimitLayer, RateLimitLayerConfig, Unavailable};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Executions of the handler: what a refusal must prevent.
type Count = Arc<AtomicU64>;

/// The layer over a counting handler. `timeout` is the layer's decision timeout: generous where
/// a test asserts decisions (a loaded machine must not turn them into 503s), short where it
/// asserts the timeout itself.
async fn serve(
    env: &Env,
    policy: Policy,
    unavailable: Unavailable,
    timeout: Duration,
) -> (SocketAddr, Count) {
    let _ = env.client.load(redis_atomic::script::registry::ALL).await;
    let limiter = RateLimiter::new(env.client.clone(), env.keyspace.clone(), policy);
    let config = RateLimitLayerConfig::by_header("x-api-key", unavailable)
        .cost(|parts| {
            parts
                .headers
                .get("x-cost")
                .and_then(|v| v.to_str().ok()?.parse().ok())
                .unwrap_or(1)
        })
        .timeout(timeout);
    let count = Count::default();
    let app = Router::new()
        .route(
            "/r",
            get(|State(c): State<Count>| async move {
                c.fetch_add(1, Ordering::SeqCst);
                "ok"
            })
            .layer(RateLimitLayer::new(limiter, config)),
        )
        .with_state(count.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (addr, count)
}

async fn get_r(addr: SocketAddr, key: Option<&str>, cost: u64) -> reqwest::Response {
    let mut req = reqwest::Client::new()
        .get(format!("http://{addr}/r"))
        .header("x-cost", cost.to_string())
        .timeout(Duration::from_secs(30));
    if let Some(k) = key {
        req = req.header("x-api-key", k);
    }
    req.send().await.unwrap()
}

fn header(r: &reqwest::Response, name: &str) -> String {
    r.headers()[name].to_str().unwrap().to_string()
}

/// RateLimit-Policy lists every limit; RateLimit counts down per limit; the refusal is 429 with
/// Retry-After and problem+json and does not run the handler; keys are separate; no key is 400;
/// a cost above the burst is 400.
#[tokio::test]
async fn headers_and_429() {
    for mode in [Mode::StandaloneEval, Mode::ClusterFunctions] {
        let env = env(mode, "http-rl", ClientConfig::default()).await;
        let policy = Policy::new(vec![
            Limit::gcra(3, Duration::from_secs(3600))
                .unwrap()
                .named("burst")
                .unwrap(),
            Limit::fixed_window(100, Duration::from_secs(366 * 86400))
                .unwrap()
                .named("daily")
                .unwrap(),
        ])
        .unwrap();
        let (addr, count) = serve(
            &env,
            policy,
            Unavailable::FailClosed,
            Duration::from_secs(10),
        )
        .await;
        for r in [2, 1, 0] {
            let resp = get_r(addr, Some("k1"), 1).await;
            assert_eq!(resp.status(), 200, "{mode:?}");
            assert_eq!(
                header(&resp, "ratelimit-policy"),
                "\"burst\";q=3;w=3600, \"daily\";q=100;w=31622400"
            );
            let rl = header(&resp, "ratelimit");
            assert!(rl.starts_with(&format!("\"burst\";r={r};t=")), "{rl}");
            assert!(rl.contains(&format!("\"daily\";r={};t=", 97 + r)), "{rl}");
        }
        let refused = get_r(addr, Some("k1"), 1).await;
        assert_eq!(refused.status(), 429);
        assert_eq!(header(&refused, "content-type"), "application/problem+json");
        assert_eq!(header(&refused, "retry-after"), "1200");
        let rl = header(&refused, "ratelimit");
        assert!(
            rl.starts_with("\"burst\";r=0;t=1200, \"daily\";r=97;"),
            "{rl}"
        );
        assert_eq!(
            count.load(Ordering::SeqCst),
            3,
            "{mode:?}: a refusal ran the handler"
        );
        assert_eq!(get_r(addr, Some("k2"), 3).await.status(), 200);
        assert_eq!(get_r(addr, None, 1).await.status(), 400);
        assert_eq!(get_r(addr, Some("k3"), 4).await.status(), 400);
        assert_eq!(count.load(Ordering::SeqCst), 4);
    }
}

/// Redis killed: fail-open serves (no 429, handler runs), fail-closed answers 503 with
/// Retry-After (no 429, handler does not run).
#[tokio::test]
async fn redis_down_fail_open_and_fail_closed() {
    let config = ClientConfig::default()
        .timeout(Duration::from_millis(200))
        .retry(RetryPolicy::none());
    for unavailable in [Unavailable::FailOpen, Unavailable::FailClosed] {
        let mut env = private_env("http-rl-down", config.clone()).await;
        let policy: Policy = Limit::gcra(1, Duration::from_secs(3600)).unwrap().into();
        let (addr, count) = serve(&env, policy, unavailable, Duration::from_secs(10)).await;
        assert_eq!(get_r(addr, Some("k"), 1).await.status(), 200);
        assert_eq!(get_r(addr, Some("k"), 1).await.status(), 429);
        env.server.as_mut().unwrap().kill();
        for _ in 0..3 {
            let r = get_r(addr, Some("k"), 1).await;
            match unavailable {
                Unavailable::FailOpen => assert_eq!(r.status(), 200),
                _ => {
                    assert_eq!(r.status(), 503);
                    assert_eq!(header(&r, "retry-after"), "1");
                }
            }
        }
        let served = if unavailable == Unavailable::FailOpen {
            4
        } else {
            1
        };
        assert_eq!(count.load(Ordering::SeqCst), served, "{unavailable:?}");
    }
}

/// Redis stalled (SIGSTOP): the layer's own timeout bounds the wait and the policy applies;
/// the request completes instead of hanging on Redis.
#[tokio::test]
async fn redis_stalled_is_bounded_by_the_layer_timeout() {
    for unavailable in [Unavailable::FailOpen, Unavailable::FailClosed] {
        let env = private_env("http-rl-stall", ClientConfig::default()).await;
        let policy: Policy = Limit::gcra(5, Duration::from_secs(3600)).unwrap().into();
        let (addr, count) = serve(&env, policy, unavailable, Duration::from_millis(300)).await;
        assert_eq!(get_r(addr, Some("k"), 1).await.status(), 200);
        let server = env.server.as_ref().unwrap();
        server.pause();
        let r = get_r(addr, Some("k"), 1).await;
        server.resume();
        let expected = if unavailable == Unavailable::FailOpen {
            200
        } else {
            503
        };
        assert_eq!(r.status(), expected, "{unavailable:?}");
        assert_eq!(
            count.load(Ordering::SeqCst),
            if expected == 200 { 2 } else { 1 }
        );
    }
}
