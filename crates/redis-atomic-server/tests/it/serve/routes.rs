//! `serve`'s other routes through a real HTTP client over a real server: queues with dead
//! letters, limits, quotas, dedup; the OpenAPI document, metrics and health.

use super::serve;
use serde_json::json;

/// Enqueue dedups by id; claim leases with fences; extend, nack (redelivered with a new fence)
/// and ack act only for the worker and the current fence.
#[tokio::test]
async fn queue_enqueue_claim_extend_nack_ack() {
    let s = serve("serve-queue", "").await;
    let job = json!({"id": "j1", "payload": "héllo"});
    let e = s.post("/v1/queues/q/jobs", job.clone()).await;
    assert_eq!((e.status, e.body), (201, json!({"enqueued": true})));
    let e = s.post("/v1/queues/q/jobs", job).await;
    assert_eq!(
        (e.status, e.body),
        (200, json!({"enqueued": false, "status": "queued"}))
    );
    let claim = json!({"worker": "w1", "visibility_ms": 30000, "max_jobs": 10});
    let c = s.post("/v1/queues/q/claim", claim.clone()).await;
    assert_eq!(c.status, 200);
    let jobs = c.body["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1);
    assert_eq!(
        (jobs[0]["id"].clone(), jobs[0]["payload"].clone()),
        (json!("j1"), json!("héllo"))
    );
    assert_eq!(jobs[0]["deliveries"], 1);
    let f1 = jobs[0]["fence"].as_u64().unwrap();
    let empty = s.post("/v1/queues/q/claim", claim.clone()).await;
    assert_eq!(empty.body["jobs"], json!([]));
    let x = s
        .post(
            "/v1/queues/q/jobs/j1/extend",
            json!({"worker": "w1", "fence": f1, "ttl_ms": 20000}),
        )
        .await;
    assert_eq!((x.status, x.body), (200, json!({"extended": true})));
    let n = s
        .post(
            "/v1/queues/q/jobs/j1/nack",
            json!({"worker": "w1", "fence": f1, "error": "boom"}),
        )
        .await;
    assert_eq!(
        (n.status, n.body),
        (200, json!({"nacked": true, "dead": false}))
    );
    let c = s.post("/v1/queues/q/claim", claim).await;
    let f2 = c.body["jobs"][0]["fence"].as_u64().unwrap();
    assert_eq!(c.body["jobs"][0]["deliveries"], 2);
    assert!(f2 > f1);
    let stale = s
        .post(
            "/v1/queues/q/jobs/j1/ack",
            json!({"worker": "w1", "fence": f1}),
        )
        .await;
    assert_eq!((stale.status, stale.body), (409, json!({"acked": false})));
    let stale = s
        .post(
            "/v1/queues/q/jobs/j1/nack",
            json!({"worker": "w1", "fence": f1}),
        )
        .await;
    assert_eq!(stale.status, 409);
    let ok = s
        .post(
            "/v1/queues/q/jobs/j1/ack",
            json!({"worker": "w1", "fence": f2}),
        )
        .await;
    assert_eq!((ok.status, ok.body), (200, json!({"acked": true})));
    let again = s
        .post("/v1/queues/q/jobs", json!({"id": "j1", "payload": "x"}))
        .await;
    assert_eq!(again.body, json!({"enqueued": false, "status": "acked"}));
}
/// A job nacked `max_deliveries` (5) times is listed as a dead letter; requeue makes it due again
/// (a second requeue is 409); purge deletes; a bad page query is 422.
#[tokio::test]
async fn queue_dead_letters() {
    let s = serve("serve-dead", "").await;
    for id in ["d1", "d2"] {
        let job = json!({"id": id, "payload": "p"});
        assert_eq!(s.post("/v1/queues/dq/jobs", job).await.status, 201);
    }
    let claim = json!({"worker": "w", "visibility_ms": 30000, "max_jobs": 2});
    for _ in 0..5 {
        let c = s.post("/v1/queues/dq/claim", claim.clone()).await;
        for job in c.body["jobs"].as_array().unwrap() {
            let (id, fence) = (job["id"].as_str().unwrap(), job["fence"].clone());
            let n = s
                .post(
                    &format!("/v1/queues/dq/jobs/{id}/nack"),
                    json!({"worker": "w", "fence": fence, "error": "boom"}),
                )
                .await;
            assert_eq!(n.status, 200);
        }
    }
    let (status, text) = s.get("/v1/queues/dq/dead?count=10").await;
    assert_eq!(status, 200, "{text}");
    let list: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(list["total"], 2);
    assert_eq!(
        (
            list["letters"][0]["deliveries"].clone(),
            list["letters"][0]["error"].clone()
        ),
        (json!(5), json!("boom"))
    );
    let r = s.post("/v1/queues/dq/dead/d1/requeue", json!({})).await;
    assert_eq!((r.status, r.body), (200, json!({"requeued": true})));
    let r = s.post("/v1/queues/dq/dead/d1/requeue", json!({})).await;
    assert_eq!((r.status, r.body), (409, json!({"requeued": false})));
    let c = s.post("/v1/queues/dq/claim", claim).await;
    assert_eq!(c.body["jobs"][0]["id"], "d1");
    let p = s.post("/v1/queues/dq/dead/purge", json!({})).await;
    assert_eq!(
        (p.status, p.body),
        (200, json!({"purged": 1, "remaining": 0}))
    );
    assert_eq!(s.get("/v1/queues/dq/dead?count=x").await.0, 422);
}
const LIMITS: &str = r#"
[limits.api]
limits = [ { algorithm = "fixed-window", limit = 2, period_ms = 60000, name = "minute" } ]
[limits.other]
limits = [ { algorithm = "gcra", limit = 1, period_ms = 60000 } ]
"#;

/// Consume answers with the IETF headers; over the limit is 429 with Retry-After; a request id
/// is charged once; policies count separately; an unknown policy is 404.
#[tokio::test]
async fn limits_consume() {
    let s = serve("serve-limits", LIMITS).await;
    let c = s
        .post(
            "/v1/limits/api/consume",
            json!({"key": "k", "request_id": "r1"}),
        )
        .await;
    assert_eq!(c.status, 200);
    assert_eq!(
        (c.body["allowed"].clone(), c.body["remaining"].clone()),
        (json!(true), json!(1))
    );
    assert_eq!(c.header("ratelimit-policy"), "\"minute\";q=2;w=60");
    assert!(
        c.header("ratelimit").starts_with("\"minute\";r=1;t="),
        "{}",
        c.header("ratelimit")
    );
    let replay = s
        .post(
            "/v1/limits/api/consume",
            json!({"key": "k", "request_id": "r1"}),
        )
        .await;
    assert_eq!(
        (replay.status, replay.body["replayed"].clone()),
        (200, json!(true))
    );
    assert_eq!(
        s.post("/v1/limits/api/consume", json!({"key": "k"}))
            .await
            .status,
        200
    );
    let refused = s.post("/v1/limits/api/consume", json!({"key": "k"})).await;
    assert_eq!(refused.status, 429);
    assert_eq!(refused.body["allowed"], false);
    assert!(refused.body["retry_after_ms"].as_u64().unwrap() > 0);
    assert!(!refused.header("retry-after").is_empty());
    assert!(refused.header("ratelimit").starts_with("\"minute\";r=0;"));
    let other = s
        .post("/v1/limits/other/consume", json!({"key": "k"}))
        .await;
    assert_eq!(other.status, 200, "policies must not share a bucket");
    s.post("/v1/limits/nope/consume", json!({"key": "k"}))
        .await
        .problem(404, "not-found");
    let big = s
        .post("/v1/limits/api/consume", json!({"key": "z", "cost": 3}))
        .await;
    big.problem(422, "invalid");
}
/// A bounded add applies inside `[min, max]` and is refused (409, unchanged) outside; a request
/// id is applied once; GET reads it; min above max (an empty range) refuses every add (409).
#[tokio::test]
async fn quotas_add() {
    let s = serve("serve-quota", "").await;
    let a = s
        .post("/v1/quotas/q1/add", json!({"delta": 60, "max": 100}))
        .await;
    assert_eq!(
        (a.status, a.body),
        (200, json!({"applied": true, "value": 60}))
    );
    let over = s
        .post("/v1/quotas/q1/add", json!({"delta": 50, "max": 100}))
        .await;
    assert_eq!(
        (over.status, over.body),
        (409, json!({"applied": false, "value": 60}))
    );
    let once = json!({"delta": 30, "max": 100, "request_id": "r1"});
    let a = s.post("/v1/quotas/q1/add", once.clone()).await;
    assert_eq!(
        (a.status, a.body),
        (200, json!({"applied": true, "value": 90}))
    );
    let replay = s.post("/v1/quotas/q1/add", once).await;
    assert_eq!(
        (replay.status, replay.body),
        (200, json!({"applied": true, "value": 90}))
    );
    let back = s
        .post("/v1/quotas/q1/add", json!({"delta": -100, "max": 100}))
        .await;
    assert_eq!(
        (back.status, back.body),
        (409, json!({"applied": false, "value": 90}))
    );
    assert_eq!(
        s.get("/v1/quotas/q1").await,
        (200, r#"{"value":90}"#.into())
    );
    let empty = s
        .post("/v1/quotas/q1/add", json!({"delta": 1, "min": 5, "max": 1}))
        .await;
    assert_eq!(
        (empty.status, empty.body),
        (409, json!({"applied": false, "value": 90}))
    );
}
/// The first sighting is `first: true`, later ones false; the same token gets the same answer;
/// ttl 0 is 422.
#[tokio::test]
async fn dedup_first_seen() {
    let s = serve("serve-dedup", "").await;
    let mine = json!({"ttl_ms": 60000, "token": "tok-1"});
    let a = s.post("/v1/dedup/e1", mine.clone()).await;
    assert_eq!((a.status, a.body), (200, json!({"first": true})));
    let resend = s.post("/v1/dedup/e1", mine).await;
    assert_eq!(resend.body, json!({"first": true}));
    let other = s.post("/v1/dedup/e1", json!({"ttl_ms": 60000})).await;
    assert_eq!((other.status, other.body), (200, json!({"first": false})));
    s.post("/v1/dedup/e2", json!({"ttl_ms": 0}))
        .await
        .problem(422, "invalid");
}
/// `/healthz`, `/readyz` answer; `/metrics` has the HTTP counters (route patterns, not resource
/// names) and the library's own metrics.
#[tokio::test]
async fn metrics_and_health() {
    let s = serve("serve-metrics", "").await;
    assert_eq!(s.get("/healthz").await.0, 200);
    assert_eq!(s.get("/readyz").await.0, 200);
    s.post("/v1/locks/secret-name/acquire", json!({"ttl_ms": 1000}))
        .await;
    let (status, text) = s.get("/metrics").await;
    assert_eq!(status, 200);
    assert!(
        text.contains("redis_atomic_http_requests_total{route=\"/v1/locks/{resource}/acquire\""),
        "{text}"
    );
    assert!(text.contains("redis_atomic_http_request_seconds"), "{text}");
    assert!(text.contains("redis_atomic_ops_total"), "{text}");
    assert!(!text.contains("secret-name"));
}
