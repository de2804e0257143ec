//! `serve`'s lease-shaped routes through a real HTTP client over a real server: locks,
//! semaphores, fenced writes and idempotency keys (each a token and a fence).

use super::serve;
use serde_json::json;

/// Acquire gives a token and fence; a second acquire is 409 with Retry-After; extend and release
/// act only for the token and fence; acquiring again with the holder's own token returns the same fence.
#[tokio::test]
async fn locks_acquire_extend_release() {
    let s = serve("serve-locks", "").await;
    let a = s
        .post("/v1/locks/r1/acquire", json!({"ttl_ms": 10000}))
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["acquired"], true);
    assert_eq!(a.body["ttl_ms"], 10000);
    let token = a.body["token"].as_str().unwrap().to_string();
    let fence = a.body["fence"].as_u64().unwrap();
    let held = s
        .post("/v1/locks/r1/acquire", json!({"ttl_ms": 10000}))
        .await;
    assert_eq!(held.status, 409);
    assert_eq!(held.body["acquired"], false);
    assert!(held.body["retry_after_ms"].as_u64().unwrap() > 9000);
    assert_eq!(held.header("retry-after"), "10");
    let again = s
        .post(
            "/v1/locks/r1/acquire",
            json!({"ttl_ms": 10000, "token": token}),
        )
        .await;
    assert_eq!(
        (again.status, again.body["fence"].as_u64()),
        (200, Some(fence))
    );
    let wrong = json!({"token": "someone-else", "fence": fence, "ttl_ms": 5000});
    let e = s.post("/v1/locks/r1/extend", wrong).await;
    assert_eq!(
        (e.status, e.body.clone()),
        (409, json!({"extended": false}))
    );
    let e = s
        .post(
            "/v1/locks/r1/extend",
            json!({"token": token, "fence": fence, "ttl_ms": 5000}),
        )
        .await;
    assert_eq!(e.status, 200);
    assert_eq!(
        (e.body["extended"].clone(), e.body["fence"].as_u64()),
        (json!(true), Some(fence))
    );
    let r = s
        .post(
            "/v1/locks/r1/release",
            json!({"token": "someone-else", "fence": fence}),
        )
        .await;
    assert_eq!((r.status, r.body), (409, json!({"released": false})));
    let r = s
        .post(
            "/v1/locks/r1/release",
            json!({"token": token, "fence": fence}),
        )
        .await;
    assert_eq!((r.status, r.body), (200, json!({"released": true})));
    let next = s
        .post("/v1/locks/r1/acquire", json!({"ttl_ms": 1000}))
        .await;
    assert!(next.body["fence"].as_u64().unwrap() > fence);
}
/// Permits up to capacity with fences; the next acquire is 409 with Retry-After; extend and
/// release need the permit's token and fence; capacity 0 is 422.
#[tokio::test]
async fn semaphores_acquire_extend_release() {
    let s = serve("serve-sem", "").await;
    let take = json!({"capacity": 2, "ttl_ms": 10000});
    let a = s.post("/v1/semaphores/s1/acquire", take.clone()).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(
        (a.body["acquired"].clone(), a.body["ttl_ms"].clone()),
        (json!(true), json!(10000))
    );
    let token = a.body["token"].as_str().unwrap().to_string();
    let fence = a.body["fence"].as_u64().unwrap();
    let b = s.post("/v1/semaphores/s1/acquire", take.clone()).await;
    assert_eq!(b.status, 200);
    assert!(b.body["fence"].as_u64().unwrap() > fence);
    let full = s.post("/v1/semaphores/s1/acquire", take.clone()).await;
    assert_eq!(
        (full.status, full.body["acquired"].clone()),
        (409, json!(false))
    );
    assert!(full.body["retry_after_ms"].as_u64().unwrap() > 9000);
    assert_eq!(full.header("retry-after"), "10");
    let again = s
        .post(
            "/v1/semaphores/s1/acquire",
            json!({"capacity": 2, "ttl_ms": 10000, "token": token}),
        )
        .await;
    assert_eq!(
        (again.status, again.body["fence"].as_u64()),
        (200, Some(fence))
    );
    let stale = json!({"token": token, "fence": fence + 1000, "ttl_ms": 5000});
    let e = s.post("/v1/semaphores/s1/extend", stale).await;
    assert_eq!((e.status, e.body), (409, json!({"extended": false})));
    let e = s
        .post(
            "/v1/semaphores/s1/extend",
            json!({"token": token, "fence": fence, "ttl_ms": 5000}),
        )
        .await;
    assert_eq!((e.status, e.body["extended"].clone()), (200, json!(true)));
    let r = s
        .post(
            "/v1/semaphores/s1/release",
            json!({"token": "other", "fence": fence}),
        )
        .await;
    assert_eq!((r.status, r.body), (409, json!({"released": false})));
    let r = s
        .post(
            "/v1/semaphores/s1/release",
            json!({"token": token, "fence": fence}),
        )
        .await;
    assert_eq!((r.status, r.body), (200, json!({"released": true})));
    assert_eq!(s.post("/v1/semaphores/s1/acquire", take).await.status, 200);
    s.post(
        "/v1/semaphores/s1/acquire",
        json!({"capacity": 0, "ttl_ms": 1000}),
    )
    .await
    .problem(422, "invalid");
}
/// A write applies at the highest fence (again at the same one), under the tenant's namespace; a
/// smaller fence is 409 with the current one and writes nothing; no writes is 422.
#[tokio::test]
async fn fenced_write() {
    let s = serve("serve-fenced", "").await;
    let at = |fence: u64, value: &str| {
        let writes = json!([{"key": "state", "value": value}]);
        json!({"fence": fence, "writes": writes})
    };
    let key = format!(
        "{}:fenced:v1:{{order-1}}:data:state",
        s.env.keyspace.namespace()
    );
    let mut redis = s.env.redis.as_ref().unwrap().get_connection().unwrap();
    let mut stored =
        || -> Option<String> { redis::cmd("GET").arg(&key).query(&mut redis).unwrap() };
    let a = s.post("/v1/fenced/order-1/write", at(5, "paid")).await;
    assert_eq!((a.status, a.body), (200, json!({"applied": true})));
    assert_eq!(stored().as_deref(), Some("paid"));
    let same = s.post("/v1/fenced/order-1/write", at(5, "shipped")).await;
    assert_eq!(same.status, 200);
    let stale = s.post("/v1/fenced/order-1/write", at(3, "zombie")).await;
    assert_eq!(
        (stale.status, stale.body),
        (409, json!({"applied": false, "current_fence": 5}))
    );
    assert_eq!(stored().as_deref(), Some("shipped"), "a stale fence wrote");
    s.post(
        "/v1/fenced/order-1/write",
        json!({"fence": 6, "writes": []}),
    )
    .await
    .problem(422, "invalid");
}
/// Begin claims; a second begin is 409 in progress; extend and complete need the claim; after
/// complete, begin replays; another fingerprint is 422; lease 0 is 422; a retryable fail frees the
/// key (a final one without a status is 422).
#[tokio::test]
async fn idempotency_begin_extend_complete() {
    let s = serve("serve-idem", "").await;
    let req = json!({"fingerprint": "POST /charges amount=5", "lease_ms": 10000});
    let b = s.post("/v1/idempotency/k1/begin", req.clone()).await;
    assert_eq!(
        (b.status, b.body["state"].clone()),
        (200, json!("claimed")),
        "{}",
        b.body
    );
    let token = b.body["token"].as_str().unwrap().to_string();
    let fence = b.body["fence"].as_u64().unwrap();
    let busy = s.post("/v1/idempotency/k1/begin", req.clone()).await;
    assert_eq!(
        (busy.status, busy.body["state"].clone()),
        (409, json!("in_progress"))
    );
    assert!(busy.body["retry_after_ms"].as_u64().unwrap() > 9000);
    assert_eq!(busy.header("retry-after"), "10");
    let x = s
        .post(
            "/v1/idempotency/k1/extend",
            json!({"token": token, "fence": fence, "lease_ms": 20000}),
        )
        .await;
    assert_eq!((x.status, x.body["extended"].clone()), (200, json!(true)));
    let lost = json!({"token": "other", "fence": fence, "status": 201, "body": "x"});
    let c = s.post("/v1/idempotency/k1/complete", lost).await;
    assert_eq!((c.status, c.body), (409, json!({"stored": false})));
    let done = json!({"token": token, "fence": fence, "status": 201, "body": "{\"id\":7}"});
    let c = s.post("/v1/idempotency/k1/complete", done).await;
    assert_eq!((c.status, c.body), (200, json!({"stored": true})));
    let replay = s.post("/v1/idempotency/k1/begin", req).await;
    assert_eq!(
        (replay.status, replay.body),
        (
            200,
            json!({"state": "completed", "response": {"status": 201, "body": "{\"id\":7}"}})
        )
    );
    s.post("/v1/idempotency/k1/begin", json!({"fingerprint": "other"}))
        .await
        .problem(422, "fingerprint-mismatch");
    let k3 = json!({"fingerprint": "f3"});
    let b = s.post("/v1/idempotency/k3/begin", k3.clone()).await;
    let claim = json!({"token": b.body["token"], "fence": b.body["fence"]});
    let mut fail = claim.clone();
    fail["retryable"] = json!(false);
    s.post("/v1/idempotency/k3/fail", fail.clone())
        .await
        .problem(422, "invalid");
    fail["retryable"] = json!(true);
    let f = s.post("/v1/idempotency/k3/fail", fail).await;
    assert_eq!((f.status, f.body), (200, json!({"stored": true})));
    let again = s.post("/v1/idempotency/k3/begin", k3).await;
    assert_eq!(
        again.body["state"], "claimed",
        "a retryable failure frees the key"
    );
    s.post(
        "/v1/idempotency/k2/begin",
        json!({"fingerprint": "f", "lease_ms": 0}),
    )
    .await
    .problem(422, "invalid");
}
