//! On a 3+3 cluster. With `hash_tag`, one request's keys share a slot and the request is one
//! all-or-nothing call. Without it, each descriptor is its own slot and call, decided in request
//! order: a refusal leaves the descriptors before it charged and only checks those after it.

use super::{desc, request, settings, start};
use redis_atomic_server::faces::rls::pb::ratelimit::{Code, RateLimitResponse};
use redis_atomic_testkit::{unique_prefix, RedisCluster};

const SPREAD: &str = "domain: spread
descriptors:
  - key: a
    rate_limit: {unit: hour, requests_per_unit: 10}
  - key: b
    rate_limit: {unit: hour, requests_per_unit: 1}
";

const TAGGED: &str = "domain: tagged
hash_tag: tenant
descriptors:
  - key: tenant
    descriptors:
      - key: a
        rate_limit: {unit: hour, requests_per_unit: 10}
      - key: b
        rate_limit: {unit: hour, requests_per_unit: 1}
";

fn remaining(r: &RateLimitResponse) -> Vec<u32> {
    r.statuses.iter().map(|s| s.limit_remaining).collect()
}

#[tokio::test]
async fn per_slot_without_hash_tag_one_call_with_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("spread.yaml"), SPREAD).unwrap();
    std::fs::write(dir.path().join("tagged.yaml"), TAGGED).unwrap();
    let cluster = RedisCluster::shared();
    let url = cluster.urls()[0].clone();
    let rls = start(
        url,
        true,
        settings(dir.path().into(), &unique_prefix("rls-cl")),
    )
    .await;
    let ask = |r| {
        let mut c = rls.client.clone();
        async move { c.should_rate_limit(r).await.unwrap().into_inner() }
    };

    // Without hash_tag: exhaust b, then [a, b]: a (decided first) is charged, b refuses.
    let spread = |order: &[&str]| {
        let ds = order.iter().map(|k| desc(&[(k, "x")])).collect();
        request("spread", ds)
    };
    assert_eq!(ask(spread(&["b"])).await.overall_code, Code::Ok as i32);
    let r = ask(spread(&["a", "b"])).await;
    assert_eq!(r.overall_code, Code::OverLimit as i32);
    assert_eq!(
        remaining(&r),
        [9, 0],
        "a is charged before b refuses (documented)"
    );
    // [b, a]: b refuses first; a is only checked.
    let r = ask(spread(&["b", "a"])).await;
    assert_eq!(r.overall_code, Code::OverLimit as i32);
    assert_eq!(remaining(&r), [0, 9], "a was charged after b refused");

    // With hash_tag: one call, all or nothing, whatever the order.
    let tagged = |order: &[&str]| {
        let ds = order
            .iter()
            .map(|k| desc(&[("tenant", "t1"), (k, "x")]))
            .collect();
        request("tagged", ds)
    };
    assert_eq!(ask(tagged(&["b"])).await.overall_code, Code::Ok as i32);
    for order in [["a", "b"], ["b", "a"]] {
        let r = ask(tagged(&order)).await;
        assert_eq!(r.overall_code, Code::OverLimit as i32);
        let a = remaining(&r)[if order[0] == "a" { 0 } else { 1 }];
        assert_eq!(a, 10, "{order:?}: the refused request charged a");
    }
}
