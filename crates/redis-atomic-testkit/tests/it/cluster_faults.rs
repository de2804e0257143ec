//! Cluster fault helpers against a dedicated cluster (they disturb it): slot migration, manual
//! failover, primary death.

use redis::Commands;
use redis_atomic_testkit::{ClusterOptions, RedisCluster};

fn slot_of(cluster: &RedisCluster, key: &str) -> u16 {
    let mut c = cluster.nodes()[0].client().get_connection().unwrap();
    redis::cmd("CLUSTER")
        .arg("KEYSLOT")
        .arg(key)
        .query(&mut c)
        .unwrap()
}

/// Keys survive a slot migration and a manual failover; after a primary is killed its replica
/// serves the slot and the cluster is ok again.
#[test]
fn migrate_failover_kill() {
    let cluster = RedisCluster::start(ClusterOptions::default()).unwrap();
    let mut conn = cluster.cluster_client().get_connection().unwrap();
    let keys: Vec<String> = (0..50).map(|i| format!("{{tag}}:k{i}")).collect();
    for k in &keys {
        let _: () = conn.set(k, k).unwrap();
    }
    let slot = slot_of(&cluster, "{tag}");
    let from = cluster.owner_of(slot).unwrap();
    let to = (from + 1) % 3;
    cluster.migrate_slot(slot, to, 7).unwrap();
    assert_eq!(cluster.owner_of(slot).unwrap(), to);
    let mut conn = cluster.cluster_client().get_connection().unwrap();
    for k in &keys {
        let v: String = conn.get(k).unwrap();
        assert_eq!(&v, k);
    }

    let replica = cluster.replicas_of(to).unwrap()[0];
    cluster.manual_failover(replica).unwrap();
    assert_eq!(cluster.owner_of(slot).unwrap(), replica);
    let mut conn = cluster.cluster_client().get_connection().unwrap();
    let v: String = conn.get(&keys[0]).unwrap();
    assert_eq!(v, keys[0]);

    // The old primary `to` is now the replica of `replica`: kill the new primary.
    cluster.kill_primary(replica, slot).unwrap();
    let owner = cluster.owner_of(slot).unwrap();
    assert_ne!(owner, replica);
    assert_eq!(owner, to, "the surviving replica took over");
    assert_eq!(cluster.nodes()[replica].pid(), 0);
}
