//! The natives' keys as the server sees them: `RATOMIC.RL_POLICY`, whose key count varies,
//! reports its positions through the getkeys API (`COMMAND GETKEYS` asks the same callback
//! Cluster asks), and a cluster node refuses a native whose keys span slots (`CROSSSLOT`) before
//! it runs, as it refuses such a script.

mod common;

use common::module_path;
use redis::Value;
use redis_atomic_testkit::{RedisServer, ServerOptions};

fn start(cluster: bool) -> RedisServer {
    let mut extra_config = vec![format!("loadmodule {}", module_path().display())];
    if cluster {
        extra_config.push("cluster-enabled yes".into());
    }
    RedisServer::start(ServerOptions {
        extra_config,
        ..Default::default()
    })
    .expect("a server")
}

/// A policy call over `limits` (fixed windows), request key first.
fn policy(request: &str, limits: &[&str], wide: bool) -> redis::Cmd {
    let mut cmd = redis::cmd("RATOMIC.RL_POLICY");
    cmd.arg(request).arg(limits.len()).arg(limits);
    cmd.arg(&["1", "", "", ""]);
    for _ in limits {
        cmd.arg(&["fw", "3", "1000000", "1"]);
        if wide {
            cmd.arg(&["1", "h"]);
        }
    }
    cmd
}

fn getkeys(conn: &mut redis::Connection, call: &redis::Cmd) -> Vec<String> {
    let mut cmd = redis::cmd("COMMAND");
    cmd.arg("GETKEYS");
    for arg in call.args_iter() {
        if let redis::Arg::Simple(bytes) = arg {
            cmd.arg(bytes);
        }
    }
    cmd.query(conn).expect("COMMAND GETKEYS")
}

#[test]
fn a_policy_declares_its_request_and_limit_keys() {
    let server = start(false);
    let mut conn = server.client().get_connection().expect("connect");
    let two = policy("r", &["a", "b"], false);
    assert_eq!(getkeys(&mut conn, &two), ["r", "a", "b"]);
    let wide = policy("r", &["a", "b", "c"], true);
    assert_eq!(getkeys(&mut conn, &wide), ["r", "a", "b", "c"]);
    // A count the call cannot hold declares the request key only (the call is then refused).
    let mut bad = redis::cmd("RATOMIC.RL_POLICY");
    bad.arg(&["r", "9", "a"]);
    assert_eq!(getkeys(&mut conn, &bad), ["r"]);
    let refused = bad.query::<Value>(&mut conn).expect_err("a bad count");
    assert!(refused.to_string().contains("wrong number"), "{refused}");
}

#[test]
fn a_cluster_node_refuses_natives_across_slots() {
    let server = start(true);
    let mut conn = server.client().get_connection().expect("connect");
    let () = redis::cmd("CLUSTER")
        .arg(&["ADDSLOTSRANGE", "0", "16383"])
        .query(&mut conn)
        .expect("own every slot");
    let crossslot = |cmd: &redis::Cmd, conn: &mut redis::Connection| match cmd.query::<Value>(conn)
    {
        Err(e) => e.code() == Some("CROSSSLOT"),
        Ok(_) => false,
    };
    assert!(crossslot(
        &policy("{a}r", &["{a}x", "{b}y"], false),
        &mut conn
    ));
    assert!(crossslot(&policy("{b}r", &["{a}x"], true), &mut conn));
    let mut lock = redis::cmd("RATOMIC.LOCK_ACQUIRE");
    lock.arg(&["{a}lock", "{b}fence", "t1", "1000"]);
    assert!(crossslot(&lock, &mut conn));
    // The refused calls wrote nothing (DBSIZE has no key: a node answers it in any state).
    let keys: i64 = redis::cmd("DBSIZE").query(&mut conn).expect("DBSIZE");
    assert_eq!(keys, 0);
    // One slot: not refused for its keys (it runs, or waits for the cluster's state).
    assert!(!crossslot(
        &policy("{a}r", &["{a}x", "{a}y"], false),
        &mut conn
    ));
}
