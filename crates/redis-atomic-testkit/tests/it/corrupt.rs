//! `Fault::CorruptReplies` and `ProxiedCluster` against real servers: only replies to script
//! calls are touched, each corruption is counted and the script did run; a cluster behind its
//! proxies is reached only through them.

use redis_atomic_testkit::proxy::ProxiedCluster;
use redis_atomic_testkit::{ClusterOptions, Fault, FaultProxy, RedisServer, ServerOptions};
use std::time::Duration;

/// Increments `ran` and answers what a script of ours would: an array headed by a status word.
const SCRIPT: &str = "redis.call('INCR', KEYS[1]) return {'applied', 7}";

fn eval(conn: &mut redis::Connection) -> redis::RedisResult<redis::Value> {
    redis::cmd("EVAL").arg(SCRIPT).arg(1).arg("ran").query(conn)
}

fn real_reply() -> redis::Value {
    redis::Value::Array(vec![
        redis::Value::BulkString(b"applied".to_vec()),
        redis::Value::Int(7),
    ])
}

fn connect(proxy: &FaultProxy) -> redis::Connection {
    let conn = redis::Client::open(proxy.url())
        .unwrap()
        .get_connection_with_timeout(Duration::from_secs(2))
        .unwrap();
    conn.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    conn
}

/// At 100 % every script reply is replaced (never the real one; the script ran each time) and
/// counted, while plain commands on the same connection pass untouched; at 0 % nothing is.
#[test]
fn corrupts_script_replies_only_and_counts_them() {
    let server = RedisServer::start(ServerOptions::default()).unwrap();
    let proxy = FaultProxy::start(server.addr().unwrap()).unwrap();
    proxy.set(Fault::CorruptReplies {
        percent: 100,
        seed: 42,
    });
    let (mut errors, mut wrong_values) = (0, 0);
    for i in 0..60 {
        let mut conn = connect(&proxy);
        let key = format!("k{i}");
        let () = redis::cmd("SET").arg(&key).arg(i).query(&mut conn).unwrap();
        match eval(&mut conn) {
            Ok(value) => {
                assert_ne!(value, real_reply());
                wrong_values += 1;
                // The stream is still in step (the next reply is this command's) or the
                // connection ended: never another request's answer.
                let got: redis::RedisResult<i64> = redis::cmd("GET").arg(&key).query(&mut conn);
                assert!(
                    got.as_ref().is_ok_and(|v| *v == i) || got.is_err(),
                    "{got:?}"
                );
            }
            Err(_) => errors += 1,
        }
    }
    assert_eq!(proxy.stats().replies_corrupted, 60);
    assert!(errors > 0 && wrong_values > 0, "{errors} {wrong_values}");
    let mut direct = server.client().get_connection().unwrap();
    let ran: i64 = redis::cmd("GET").arg("ran").query(&mut direct).unwrap();
    assert_eq!(ran, 60, "every corrupted call ran");

    proxy.set(Fault::CorruptReplies {
        percent: 0,
        seed: 42,
    });
    let mut conn = connect(&proxy);
    for _ in 0..20 {
        assert_eq!(eval(&mut conn).unwrap(), real_reply());
    }
    assert_eq!(proxy.stats().replies_corrupted, 60);
}

/// A cluster behind its proxies: the nodes announce the proxies' ports, a cluster client
/// started from them reaches every primary through its proxy, and corruption applies there.
#[test]
fn proxied_cluster_is_reached_through_its_proxies() {
    let proxied = ProxiedCluster::start(ClusterOptions::default()).unwrap();
    let client = redis::cluster::ClusterClientBuilder::new(proxied.urls())
        .retries(0)
        .build()
        .unwrap();
    let mut conn = client.get_connection().unwrap();
    for i in 0..200 {
        let () = redis::cmd("SET")
            .arg(format!("k{i}"))
            .arg(i)
            .query(&mut conn)
            .unwrap();
    }
    let ports: Vec<u16> = proxied.proxies().iter().map(|p| p.addr().port()).collect();
    let slots: redis::Value = redis::cmd("CLUSTER").arg("SLOTS").query(&mut conn).unwrap();
    let text = format!("{slots:?}");
    for node in proxied.cluster().nodes() {
        let real = node.port().unwrap();
        assert!(!text.contains(&format!("int({real})")), "{text}");
    }
    for (proxy, port) in proxied.proxies().iter().zip(&ports).take(3) {
        assert!(text.contains(&format!("int({port})")), "{text}");
        assert!(
            proxy.stats().accepted > 0,
            "primary behind {port} not reached"
        );
    }
    proxied.set(Fault::CorruptReplies {
        percent: 100,
        seed: 7,
    });
    for i in 0..30 {
        let mut conn = client.get_connection().unwrap();
        let r: redis::RedisResult<redis::Value> = redis::cmd("EVAL")
            .arg(SCRIPT)
            .arg(1)
            .arg(format!("ran{i}"))
            .query(&mut conn);
        assert_ne!(r.ok(), Some(real_reply()));
    }
    assert_eq!(proxied.stats().replies_corrupted, 30);
}
