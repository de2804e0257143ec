//! A chain of redirects, made on purpose: a client whose slot map is stale sends a plain command
//! to the slot's former owner, which says `MOVED` to the current owner, which is migrating the
//! slot and says `ASK` for the key, already moved. Nothing ran at either node, so even a command
//! that is not retry-safe (`INCR`) follows both, and runs once. (Under load this happens while a
//! slot moves back; the raw path used to follow one redirect and return the second.)

use super::migration::{alone, asking_calls, cluster};
use redis_atomic::{Client, ClientConfig, Keyspace};
use redis_atomic_testkit::unique_prefix;

/// The hash tag of the test's key: a slot no other test moves.
const TAG: &str = "chained";

#[test]
fn a_plain_command_follows_a_moved_then_an_ask() {
    let _alone = alone();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(moved_then_ask());
}

async fn moved_then_ask() {
    let cluster = cluster();
    let slot = redis_atomic::keys::slot(TAG.as_bytes());
    let first = cluster.owner_of(slot).unwrap();
    let (owner, importer) = ((first + 1) % 3, (first + 2) % 3);
    let client = Client::connect_cluster(&cluster.urls(), ClientConfig::default())
        .await
        .unwrap();
    let ks = Keyspace::new(unique_prefix("chain")).unwrap();
    let key = ks.key("test", 1, TAG, &["counter"]).unwrap();
    client
        .command(redis::cmd("SET").arg(&key).arg(1))
        .await
        .unwrap();

    // The slot moves on while the client looks elsewhere: its map still names `first`.
    tokio::task::spawn_blocking(move || cluster.migrate_slot(slot, owner, 10).unwrap())
        .await
        .unwrap();
    // Half a migration from the new owner, the key already on the importing node.
    cluster.begin_migration(slot, importer, &[&key]).unwrap();
    let asking = asking_calls(cluster, importer);

    let incr = client.command(redis::cmd("INCR").arg(&key)).await;
    let asked = asking_calls(cluster, importer) - asking;
    tokio::task::spawn_blocking(move || cluster.migrate_slot(slot, importer, 10).unwrap())
        .await
        .unwrap();
    assert_eq!(incr.unwrap(), redis::Value::Int(2), "INCR ran once");
    assert_eq!(asked, 1, "the importing node was asked once");
    let get = client.command(redis::cmd("GET").arg(&key)).await.unwrap();
    assert_eq!(get, redis::Value::BulkString(b"2".to_vec()));
}
