//! The gRPC face end to end on a real Redis: a request over one limit charges no other (the
//! scenario envoyproxy/ratelimit's users keep filing), check only, unlimited and replaced
//! descriptors, headers, `/json`, a stalled Redis answered `UNAVAILABLE` at the deadline, and a
//! reload that refuses a bad config.

use super::{desc, fixtures, request, settings, start};
use redis_atomic_server::faces::rls::pb::ratelimit::{Code, RateLimitRequest, RateLimitResponse};
use redis_atomic_testkit::{unique_prefix, RedisServer, ServerOptions};
use std::time::{Duration, Instant};

async fn ask(
    c: &mut super::Running,
    req: RateLimitRequest,
) -> Result<RateLimitResponse, tonic::Status> {
    c.client
        .should_rate_limit(req)
        .await
        .map(|r| r.into_inner())
}

fn gateway(user: &str, hits: Option<u64>) -> RateLimitRequest {
    let mut user = desc(&[("user", user)]);
    user.hits_addend = hits;
    let mut route = desc(&[("route", "/pay")]);
    route.hits_addend = hits;
    let mut global = desc(&[("generic_key", "global")]);
    global.hits_addend = hits;
    request("gateway", vec![user, route, global])
}

fn remaining(r: &RateLimitResponse) -> Vec<u32> {
    r.statuses.iter().map(|s| s.limit_remaining).collect()
}

/// The per-user limit refuses the third request: its per-route and global limits are not
/// charged for it; a check only (hits 0) charges nothing; the headers tell every limit.
#[tokio::test]
async fn a_request_over_one_limit_charges_no_other() {
    let url = RedisServer::shared().url();
    let mut rls = start(url, false, settings(fixtures(), &unique_prefix("rls185"))).await;
    for expected in [[1, 99, 999], [0, 98, 998]] {
        let r = ask(&mut rls, gateway("alice", None)).await.unwrap();
        assert_eq!(r.overall_code, Code::Ok as i32);
        assert_eq!(remaining(&r), expected);
    }
    let over = ask(&mut rls, gateway("alice", None)).await.unwrap();
    assert_eq!(over.overall_code, Code::OverLimit as i32);
    let codes: Vec<i32> = over.statuses.iter().map(|s| s.code).collect();
    assert_eq!(
        codes,
        [Code::OverLimit as i32, Code::Ok as i32, Code::Ok as i32]
    );
    assert_eq!(
        remaining(&over),
        [0, 98, 998],
        "the refusal charged the other limits"
    );
    let policy = over
        .response_headers_to_add
        .iter()
        .find(|h| h.key == "RateLimit-Policy");
    assert_eq!(
        policy.unwrap().value,
        "\"per-user\";q=2;w=3600, \"per-route\";q=100;w=3600, \"global\";q=1000;w=3600"
    );
    let check = ask(&mut rls, gateway("bob", Some(0))).await.unwrap();
    assert_eq!(check.overall_code, Code::Ok as i32);
    assert_eq!(remaining(&check), [2, 98, 998], "hits 0 charged something");
    let bob = ask(&mut rls, gateway("bob", None)).await.unwrap();
    assert_eq!(remaining(&bob), [1, 97, 997]);
}

/// Unlimited descriptors answer OK with remaining u32::MAX without Redis; a replaced limit is
/// not charged; a shadow-mode limit over its limit answers OK; unknown domains and unmatched
/// descriptors are OK without a limit; malformed requests are INVALID_ARGUMENT.
#[tokio::test]
async fn unlimited_replaces_shadow_and_unknown() {
    let url = RedisServer::shared().url();
    let mut rls = start(url, false, settings(fixtures(), &unique_prefix("rls-sem"))).await;
    let r = ask(&mut rls, request("internal", vec![desc(&[("ldap", "x")])]))
        .await
        .unwrap();
    assert_eq!(remaining(&r), [u32::MAX]);

    // example7: both rules match; the one named specific_limit (5/s) is replaced by the 10/s.
    let both = || {
        request(
            "example7",
            vec![
                desc(&[("key_1", "value_1"), ("user", "bkthomps")]),
                desc(&[("key_2", "value_2"), ("user", "bkthomps")]),
            ],
        )
    };
    for i in 0..7u32 {
        let r = ask(&mut rls, both()).await.unwrap();
        assert_eq!(r.overall_code, Code::Ok as i32, "request {i}");
        assert!(
            r.statuses[0].current_limit.is_none(),
            "the replaced limit is not reported"
        );
        assert_eq!(r.statuses[1].limit_remaining, 9 - i);
    }

    // example6: user-a is in shadow mode at 10/s.
    let shadow = || {
        request(
            "example6",
            vec![desc(&[("service", "auth"), ("user", "user-a")])],
        )
    };
    for _ in 0..12 {
        let r = ask(&mut rls, shadow()).await.unwrap();
        assert_eq!(r.overall_code, Code::Ok as i32);
    }

    let unknown = ask(&mut rls, request("nope", vec![desc(&[("a", "b")])]))
        .await
        .unwrap();
    assert_eq!(unknown.overall_code, Code::Ok as i32);
    let empty = ask(&mut rls, request("gateway", vec![])).await.unwrap_err();
    assert_eq!(empty.code(), tonic::Code::InvalidArgument);
}

/// A stalled Redis: the answer is UNAVAILABLE at the deadline, long before the stall ends.
#[tokio::test]
async fn a_stalled_redis_is_unavailable_at_the_deadline() {
    let server = RedisServer::start(ServerOptions::default()).unwrap();
    let mut s = settings(fixtures(), "rls-stall");
    s.deadline = Duration::from_millis(10);
    let mut rls = start(server.url(), false, s).await;
    assert!(ask(&mut rls, gateway("carol", None)).await.is_ok());
    server.pause(); // SIGSTOP: requests queue unanswered until resume
    let started = Instant::now();
    let err = ask(&mut rls, gateway("carol", None)).await;
    let took = started.elapsed();
    server.resume();
    let err = err.unwrap_err();
    assert_eq!(err.code(), tonic::Code::Unavailable, "{err:?}");
    // Bounded by the deadline, not by the stall (which lasts until the answer came back).
    assert!(took < Duration::from_secs(2), "took {took:?}");
    assert!(
        ask(&mut rls, gateway("carol", None)).await.is_ok(),
        "answers again"
    );
}

/// `/json`: 200 within the limit, 429 over it, the statuses as proto3 JSON.
#[tokio::test]
async fn json_endpoint_answers_like_grpc() {
    let url = RedisServer::shared().url();
    let rls = start(url, false, settings(fixtures(), &unique_prefix("rls-json"))).await;
    let body = r#"{"domain":"gateway","descriptors":[{"entries":[{"key":"user","value":"dan"}],"hitsAddend":"2"}]}"#;
    let http = reqwest::Client::new();
    let post = || http.post(format!("{}/json", rls.url)).body(body).send();
    let first = post().await.unwrap();
    assert_eq!(first.status(), 200);
    let json: serde_json::Value = first.json().await.unwrap();
    assert_eq!(json["overallCode"], "OK");
    assert_eq!(json["statuses"][0]["limitRemaining"], 0);
    assert_eq!(json["statuses"][0]["currentLimit"]["unit"], "HOUR");
    assert_eq!(post().await.unwrap().status(), 429);
    let bad = http
        .post(format!("{}/json", rls.url))
        .body("{")
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
}

/// A changed file is picked up; a broken one is refused and the old rules keep serving.
#[tokio::test]
async fn reload_keeps_the_old_rules_when_the_new_are_bad() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("d.yaml");
    let limit = |n: u32| {
        format!("domain: d\ndescriptors:\n  - key: k\n    rate_limit: {{unit: hour, requests_per_unit: {n}}}\n")
    };
    std::fs::write(&file, limit(5)).unwrap();
    let mut s = settings(dir.path().to_path_buf(), &unique_prefix("rls-reload"));
    s.poll = Duration::from_millis(20);
    let mut rls = start(RedisServer::shared().url(), false, s).await;
    let req = || request("d", vec![desc(&[("k", "v")])]);
    let current = |r: &RateLimitResponse| {
        r.statuses[0]
            .current_limit
            .as_ref()
            .unwrap()
            .requests_per_unit
    };
    assert_eq!(current(&ask(&mut rls, req()).await.unwrap()), 5);
    std::fs::write(&file, limit(7) + "# longer\n").unwrap();
    let mut seen = 5;
    for _ in 0..250 {
        seen = current(&ask(&mut rls, req()).await.unwrap());
        if seen == 7 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(seen, 7, "the change was never loaded");
    std::fs::write(
        &file,
        "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: fortnight}\n",
    )
    .unwrap();
    // Wait until the face has refused it (its counter says so), then it still answers with 7.
    let http = reqwest::Client::new();
    let mut refused = false;
    for _ in 0..250 {
        let text = http
            .get(format!("{}/metrics", rls.url))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        if text.contains("redis_atomic_rls_config_reloads_total{result=\"refused\"}") {
            refused = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(refused, "the bad file was never tried");
    assert_eq!(current(&ask(&mut rls, req()).await.unwrap()), 7);
}
