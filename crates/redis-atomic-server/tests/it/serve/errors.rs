//! `serve`'s error mapping (problem+json, documented in `serve::error`) and its tenant
//! isolation, through a real HTTP client over a real server.

use super::{serve, serve_private};
use redis_atomic::{ClientConfig, RetryPolicy};
use serde_json::json;
use std::time::Duration;

/// The client's mistakes are 400/413/422/404 problems, never 500.
#[tokio::test]
async fn client_mistakes_are_4xx_problems() {
    let s = serve("serve-bad", "").await;
    let acquire = "/v1/locks/r/acquire";
    s.post_raw(acquire, "{not json".into(), None)
        .await
        .problem(400, "bad-json");
    s.post(acquire, json!({"ttl_ms": "ten"}))
        .await
        .problem(422, "invalid");
    s.post(acquire, json!({"ttl_ms": 10, "tll": 1}))
        .await
        .problem(422, "invalid");
    s.post(acquire, json!({})).await.problem(422, "invalid");
    s.post(acquire, json!({"ttl_ms": 0}))
        .await
        .problem(422, "invalid");
    s.post(acquire, json!({"ttl_ms": 10, "token": ""}))
        .await
        .problem(422, "invalid");
    let huge = json!({"ttl_ms": 10, "token": "x".repeat(2000)}).to_string();
    s.post_raw(acquire, huge, None)
        .await
        .problem(413, "too-large");
    s.post("/v1/nothing", json!({}))
        .await
        .problem(404, "not-found");
    let job = json!({"id": "", "payload": "p"});
    s.post("/v1/queues/q/jobs", job)
        .await
        .problem(422, "invalid");
    let claim = json!({"worker": "w", "max_jobs": 0});
    s.post("/v1/queues/q/claim", claim)
        .await
        .problem(422, "invalid");
}

const TOKENS: &str = r#"
[auth]
tokens = { "token-aaaa-1234" = "NS-a", "token-bbbb-1234" = "NS-b" }
"#;

/// Each token is its own namespace: the same resource under two tokens is two locks (and two
/// fenced-write records); no token or an unknown one is 401 with `WWW-Authenticate: Bearer`.
#[tokio::test]
async fn tokens_are_tenants() {
    let ns = redis_atomic_testkit::unique_prefix("serve-auth");
    let toml = TOKENS.replace("NS", &ns);
    let s = serve("serve-auth", &toml).await;
    let body = || json!({"ttl_ms": 10000}).to_string();
    let path = "/v1/locks/shared/acquire";
    let a = s.post_raw(path, body(), Some("token-aaaa-1234")).await;
    let b = s.post_raw(path, body(), Some("token-bbbb-1234")).await;
    assert_eq!((a.status, b.status), (200, 200), "two tenants, two locks");
    let a2 = s.post_raw(path, body(), Some("token-aaaa-1234")).await;
    assert_eq!(a2.status, 409, "same tenant, same lock");
    let write = |fence: u64| json!({"fence": fence, "writes": [{"key": "k", "value": "v"}]});
    let path_w = "/v1/fenced/shared/write";
    let a = s
        .post_raw(path_w, write(5).to_string(), Some("token-aaaa-1234"))
        .await;
    let b = s
        .post_raw(path_w, write(1).to_string(), Some("token-bbbb-1234"))
        .await;
    assert_eq!(
        (a.status, b.status),
        (200, 200),
        "two tenants, two fence records"
    );
    let none = s.post_raw(path, body(), None).await;
    none.problem(401, "unauthorized");
    assert_eq!(none.header("www-authenticate"), "Bearer");
    s.post_raw(path, body(), Some("token-cccc-1234"))
        .await
        .problem(401, "unauthorized");
}

/// Redis gone: 503 with Retry-After (nothing ran, resend later), never 500.
#[tokio::test]
async fn redis_down_is_503() {
    let config = ClientConfig::default()
        .timeout(Duration::from_millis(300))
        .retry(RetryPolicy::none());
    let mut s = serve_private("serve-down", "", config).await;
    s.env.server.as_mut().unwrap().kill();
    // A pooled connection that was open when Redis died fails on write: the library cannot know
    // whether the request went out (504 outcome-unknown). Once every pooled connection has
    // broken, reconnecting is refused: nothing was sent, 503. Never anything else.
    let mut unavailable = 0;
    for _ in 0..12 {
        let r = s.post("/v1/locks/r/acquire", json!({"ttl_ms": 1000})).await;
        if r.status == 504 {
            r.problem(504, "outcome-unknown");
            continue;
        }
        r.problem(503, "unavailable");
        assert_eq!(r.header("retry-after"), "1");
        unavailable += 1;
    }
    assert!(unavailable >= 4, "{unavailable} of 12 answers were 503");
    assert_eq!(s.get("/readyz").await.0, 503);
    assert_eq!(s.get("/healthz").await.0, 200);
}

/// Redis stalled past the client timeout: 504 outcome-unknown, with `retry_safe` true only when
/// resending the same request cannot repeat an effect (the caller's own lock token, a queue ack).
#[tokio::test]
async fn outcome_unknown_is_504_with_retry_safe() {
    let config = ClientConfig::default()
        .timeout(Duration::from_millis(200))
        .retry(RetryPolicy::none());
    let s = serve_private("serve-stall", "", config).await;
    let server = s.env.server.as_ref().unwrap();
    server.pause();
    let fresh = s.post("/v1/locks/r/acquire", json!({"ttl_ms": 1000})).await;
    let own = s
        .post(
            "/v1/locks/r/acquire",
            json!({"ttl_ms": 1000, "token": "mine-0001"}),
        )
        .await;
    let claim = s.post("/v1/queues/q/claim", json!({"worker": "w"})).await;
    let ack = s
        .post(
            "/v1/queues/q/jobs/j/ack",
            json!({"worker": "w", "fence": 1}),
        )
        .await;
    server.resume();
    for (answer, safe) in [(&fresh, false), (&own, true), (&claim, false), (&ack, true)] {
        answer.problem(504, "outcome-unknown");
        assert_eq!(answer.body["retry_safe"], safe, "{}", answer.body);
    }
}

/// The same for the newer routes (own server: a stalled connection takes about four requests
/// before the client stops sending): a quota add is retry-safe only with a request id, dedup only
/// with the caller's token, a fenced write always.
#[tokio::test]
async fn outcome_unknown_retry_safe_newer_routes() {
    let config = ClientConfig::default()
        .timeout(Duration::from_millis(200))
        .retry(RetryPolicy::none());
    let s = serve_private("serve-stall2", "", config).await;
    let server = s.env.server.as_ref().unwrap();
    server.pause();
    let add = s
        .post("/v1/quotas/c/add", json!({"delta": 1, "max": 9}))
        .await;
    let add_id = json!({"delta": 1, "max": 9, "request_id": "r-1"});
    let add_id = s.post("/v1/quotas/c/add", add_id).await;
    let seen = s.post("/v1/dedup/e", json!({"ttl_ms": 1000})).await;
    let fenced = json!({"fence": 1, "writes": [{"key": "k", "value": "v"}]});
    let fenced = s.post("/v1/fenced/r/write", fenced).await;
    server.resume();
    for (answer, safe) in [
        (&add, false),
        (&add_id, true),
        (&seen, false),
        (&fenced, true),
    ] {
        answer.problem(504, "outcome-unknown");
        assert_eq!(answer.body["retry_safe"], safe, "{}", answer.body);
    }
}
