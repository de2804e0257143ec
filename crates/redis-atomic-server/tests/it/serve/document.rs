//! `/openapi.json` states what the server does: every route once, unique operationIds, the
//! library's limits as schema bounds (and the server accepting the bound and refusing one past
//! it), the error statuses each operation can answer, whether a body may be empty. The
//! property-based proof against every constraint is the contract suite (`tests/openapi`); these
//! pin the document's shape in the Rust suite.

use super::serve;
use redis_atomic::{keys, lock, queue, ratelimit};
use serde_json::{json, Value};
use std::collections::BTreeSet;

const LIMITS: &str = r#"
[limits.api]
limits = [ { algorithm = "gcra", limit = 100, period_ms = 1000, burst = 7 } ]
[limits.other]
limits = [ { algorithm = "fixed-window", limit = 3, period_ms = 60000 } ]
"#;

async fn document(s: &super::Served) -> Value {
    let (status, text) = s.get("/openapi.json").await;
    assert_eq!(status, 200);
    serde_json::from_str(&text).unwrap()
}

/// Every operation of the document: (path, method, operation).
fn operations(doc: &Value) -> Vec<(String, String, Value)> {
    let paths = doc["paths"].as_object().unwrap();
    paths
        .iter()
        .flat_map(|(path, item)| {
            let item = item.as_object().unwrap();
            item.iter()
                .map(|(m, op)| (path.clone(), m.clone(), op.clone()))
        })
        .collect()
}

/// Every `/v1` route once (a consume path per configured policy, no generic one), each with a
/// unique operationId and the problems it can answer; no 401 without `[auth] tokens`.
#[tokio::test]
async fn openapi_lists_every_route_once() {
    let s = serve("serve-openapi", LIMITS).await;
    let doc = document(&s).await;
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    let ops = operations(&doc);
    let ids: BTreeSet<&str> = ops
        .iter()
        .map(|o| o.2["operationId"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), ops.len(), "operationIds are not unique: {ids:?}");
    // 20 POSTs and 2 GETs with a fixed path, one consume per policy.
    assert_eq!(ops.len(), 20 + 2 + 2);
    assert!(ids.contains("limits_consume_api") && ids.contains("limits_consume_other"));
    let paths = doc["paths"].as_object().unwrap();
    assert!(!paths.contains_key("/v1/limits/{policy}/consume"));
    assert!(doc.get("security").is_none());
    for (path, method, op) in &ops {
        let responses = op["responses"].as_object().unwrap();
        let mut want = vec!["200", "422", "500", "502", "503", "504"];
        if method == "post" {
            want.extend(["400", "413"]);
        }
        for status in want {
            assert!(
                responses.contains_key(status),
                "{method} {path}: no {status}"
            );
        }
        assert!(!responses.contains_key("401"), "{method} {path}");
        assert_eq!(op["requestBody"].is_object(), method == "post", "{path}");
    }
    let ack = &paths["/v1/queues/{queue}/jobs/{id}/ack"]["post"];
    let problem = &ack["responses"]["504"]["content"]["application/problem+json"]["schema"];
    let name = problem["$ref"]
        .as_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap();
    let schema = &doc["components"]["schemas"][name];
    assert_eq!(schema["properties"]["status"]["const"], 504);
    assert!(schema["required"]
        .as_array()
        .unwrap()
        .contains(&json!("retry_safe")));
}

/// With `[auth] tokens` the document has the bearer scheme and every operation a 401.
#[tokio::test]
async fn openapi_states_auth() {
    let ns = redis_atomic_testkit::unique_prefix("serve-openapi-auth");
    let s = serve(
        "serve-openapi-auth",
        &format!("[auth]\ntokens = {{ \"token-aaaa-1234\" = \"{ns}\" }}\n"),
    )
    .await;
    let doc = document(&s).await;
    assert_eq!(doc["security"], json!([{"bearer": []}]));
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );
    for (path, _, op) in operations(&doc) {
        let www = &op["responses"]["401"]["headers"]["WWW-Authenticate"];
        assert!(www.is_object(), "{path}: no 401 with WWW-Authenticate");
    }
}

/// The bounds are the library's constants, and the server takes the bound and refuses one past
/// it: the schema and the check are one definition.
#[tokio::test]
async fn bounds_are_the_library_limits() {
    let s = serve("serve-openapi-bounds", LIMITS).await;
    let doc = document(&s).await;
    let schemas = &doc["components"]["schemas"];
    assert_eq!(schemas["JobId"]["maxLength"], queue::MAX_JOB_ID_LEN);
    assert_eq!(schemas["KeyName"]["maxLength"], keys::MAX_TAG_LEN);
    assert_eq!(schemas["Batch"]["maximum"], queue::MAX_BATCH);
    let max_ttl = lock::MAX_TTL.as_millis() as u64;
    assert_eq!(schemas["LockTtlMs"]["maximum"], max_ttl);
    // A consume's bounds are its policy's: `cost` up to the burst, `key` up to what the name
    // leaves of the library's key limit.
    let api = &doc["paths"]["/v1/limits/api/consume"]["post"]["requestBody"];
    let consume = &api["content"]["application/json"]["schema"]["properties"];
    assert_eq!(consume["cost"]["maximum"], 7);
    assert_eq!(
        consume["key"]["maxLength"],
        ratelimit::MAX_KEY_LEN - "api/".len()
    );

    let acquire = |r: &str| format!("/v1/locks/{r}/acquire");
    let ok = s.post(&acquire("a"), json!({"ttl_ms": max_ttl})).await;
    assert_eq!(ok.status, 200, "{}", ok.body);
    s.post(&acquire("b"), json!({"ttl_ms": max_ttl + 1}))
        .await
        .problem(422, "invalid");
    let longest = "r".repeat(keys::MAX_TAG_LEN);
    let ok = s.post(&acquire(&longest), json!({"ttl_ms": 1000})).await;
    assert_eq!(ok.status, 200, "{}", ok.body);
    s.post(&acquire(&format!("{longest}r")), json!({"ttl_ms": 1000}))
        .await
        .problem(422, "invalid");
    s.post(&acquire("a%7Bb%7D"), json!({"ttl_ms": 1000}))
        .await
        .problem(422, "invalid");
    let consume = "/v1/limits/api/consume";
    let at_burst = s.post(consume, json!({"key": "k", "cost": 7})).await;
    assert_eq!(at_burst.status, 200, "{}", at_burst.body);
    s.post(consume, json!({"key": "k", "cost": 8}))
        .await
        .problem(422, "invalid");
}

/// A body is a JSON object (never the array form serde could read a struct from); an empty
/// body reads as `{}`, so the document marks a body required exactly when a field is.
#[tokio::test]
async fn bodies_are_objects_and_empty_means_no_fields() {
    let s = serve("serve-openapi-bodies", "").await;
    let doc = document(&s).await;
    let body = |path: &str| doc["paths"][path]["post"]["requestBody"]["required"].clone();
    assert_eq!(body("/v1/locks/{resource}/acquire"), json!(true));
    assert_eq!(body("/v1/queues/{queue}/dead/purge"), json!(false));
    s.post_raw("/v1/locks/r/acquire", "[1000]".into(), None)
        .await
        .problem(422, "invalid");
    s.post_raw("/v1/locks/r/acquire", String::new(), None)
        .await
        .problem(422, "invalid");
    let purge = s
        .post_raw("/v1/queues/q/dead/purge", String::new(), None)
        .await;
    assert_eq!(
        (purge.status, purge.body),
        (200, json!({"purged": 0, "remaining": 0}))
    );
    s.post_raw("/v1/queues/q/dead/purge", " ".into(), None)
        .await
        .problem(400, "bad-json");
}
