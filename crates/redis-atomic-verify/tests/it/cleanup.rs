//! What a run leaves behind: with [`Cleanup::Sweep`] nothing under its namespace; with
//! [`Cleanup::Keep`] only keys under it, each with a TTL.

use super::{client, namespace};
use redis::Commands as _;
use redis_atomic_testkit::RedisServer;
use redis_atomic_verify::{Cleanup, Verify};
use std::time::Duration;

/// Every key under `ns`.
fn keys(ns: &str) -> Vec<String> {
    let mut conn = RedisServer::shared().client().get_connection().unwrap();
    let keys: Vec<String> = conn
        .scan_match::<_, String>(format!("{ns}-*"))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    keys
}

#[tokio::test]
async fn sweep_leaves_nothing_keep_leaves_ttls() {
    let url = RedisServer::shared().url();
    let kept = namespace("keep");
    let report = Verify::new(client().await)
        .duration(Duration::from_millis(300))
        .tasks(4)
        .only(["lock", "queue", "quota"])
        .namespace(&kept)
        .cleanup(Cleanup::Keep)
        .run()
        .await
        .unwrap();
    assert!(report.ok);
    let left = keys(&kept);
    assert!(left.len() > 3, "{left:?}");
    let mut conn = RedisServer::shared().client().get_connection().unwrap();
    for key in &left {
        let ttl: i64 = conn.pttl(key).unwrap();
        assert!(ttl > 0, "{key} has no TTL ({ttl})");
    }

    let swept = namespace("sweep");
    let report = Verify::new(client().await)
        .duration(Duration::from_millis(300))
        .tasks(4)
        .only(["lock", "queue", "quota"])
        .namespace(&swept)
        .cleanup(Cleanup::Sweep { url })
        .run()
        .await
        .unwrap();
    assert!(report.ok);
    assert_eq!(keys(&swept), Vec::<String>::new());
}
