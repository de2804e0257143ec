//! `slot()` agrees with `CLUSTER KEYSLOT` on a real cluster node for random and tricky keys.

use redis_atomic_testkit::RedisCluster;

/// Thousands of random (binary) keys and the hash-tag corner cases hash like the server does.
#[tokio::test]
async fn slot_matches_cluster_keyslot() {
    let cluster = RedisCluster::shared();
    let mut conn = cluster.nodes()[0]
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let mut keys: Vec<Vec<u8>> = [
        "",
        "{}",
        "{}{a}",
        "{{a}}",
        "a{b}c{d}",
        "{a",
        "a}",
        "}{",
        "{a}",
        "x{}y",
        "{{}}",
        "foo{{bar}}zap",
        "{user1000}.following",
        "\u{e9}t\u{e9}{\u{fc}}",
    ]
    .iter()
    .map(|k| k.as_bytes().to_vec())
    .collect();
    for i in 0..4000u32 {
        let len = (i % 40) as usize;
        let mut k: Vec<u8> = (0..len).map(|_| rand::random::<u8>()).collect();
        if i % 3 == 0 {
            k.extend_from_slice(b"{tag");
            k.extend_from_slice(&i.to_le_bytes());
            k.push(b'}');
        }
        keys.push(k);
    }
    let mut pipe = redis::pipe();
    for k in &keys {
        pipe.cmd("CLUSTER").arg("KEYSLOT").arg(k);
    }
    let slots: Vec<u16> = pipe.query_async(&mut conn).await.unwrap();
    for (k, s) in keys.iter().zip(slots) {
        assert_eq!(redis_atomic::keys::slot(k), s, "key {k:?}");
    }
}
