//! The testkit's own guarantees: servers start, restart, pause, die with their guard.

use redis_atomic_testkit::{Fsync, RedisCluster, RedisServer, ServerOptions, TestkitError};
use std::time::{Duration, Instant};

fn alive(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .unwrap_or_default()
            .contains(") Z ")
}

/// A server starts, answers, and is reachable over TCP below port 55535.
#[test]
fn start_ping_set_get() {
    let started = Instant::now();
    let s = RedisServer::start(ServerOptions::default()).unwrap();
    eprintln!("server start: {:?}", started.elapsed());
    assert!(s.port().unwrap() < 55_535);
    let mut c = s.client().get_connection().unwrap();
    let _: () = redis::cmd("SET").arg("k").arg("v").query(&mut c).unwrap();
    let v: String = redis::cmd("GET").arg("k").query(&mut c).unwrap();
    assert_eq!(v, "v");
    assert!(s.version().starts_with(|c: char| c.is_ascii_digit()));
}

/// The unix-socket option works.
#[test]
fn unix_socket() {
    let s = RedisServer::start(ServerOptions {
        unix_socket: true,
        ..Default::default()
    })
    .unwrap();
    assert!(s.url().starts_with("redis+unix://"));
    let mut c = s.client().get_connection().unwrap();
    let pong: String = redis::cmd("PING").query(&mut c).unwrap();
    assert_eq!(pong, "PONG");
}

/// Restart keeps the port and, with AOF, the data; kill makes it unreachable until restart.
#[test]
fn restart_keeps_port_and_data() {
    let mut s = RedisServer::start(ServerOptions {
        appendonly: true,
        appendfsync: Some(Fsync::Always), // SIGKILL below: everysec may lose acked writes
        ..Default::default()
    })
    .unwrap();
    let port = s.port();
    let mut c = s.client().get_connection().unwrap();
    let _: () = redis::cmd("SET").arg("k").arg("v").query(&mut c).unwrap();
    s.kill();
    assert!(s
        .client()
        .get_connection_with_timeout(Duration::from_millis(200))
        .is_err());
    s.restart().unwrap();
    assert_eq!(s.port(), port);
    let mut c = s.client().get_connection().unwrap();
    let v: String = redis::cmd("GET").arg("k").query(&mut c).unwrap();
    assert_eq!(v, "v");
}

/// While paused (SIGSTOP) a command times out; after resume it succeeds.
#[test]
fn pause_resume() {
    let s = RedisServer::start(ServerOptions::default()).unwrap();
    let mut c = s.client().get_connection().unwrap();
    c.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    s.pause();
    assert!(redis::cmd("PING").query::<String>(&mut c).is_err());
    s.resume();
    let mut c = s.client().get_connection().unwrap();
    assert_eq!(redis::cmd("PING").query::<String>(&mut c).unwrap(), "PONG");
}

/// maxmemory makes a large write fail with OOM.
#[test]
fn maxmemory_oom() {
    let s = RedisServer::start(ServerOptions {
        maxmemory: Some(2 << 20),
        ..Default::default()
    })
    .unwrap();
    let mut c = s.client().get_connection().unwrap();
    let big = vec![b'x'; 3 << 20];
    let err = redis::cmd("SET")
        .arg("big")
        .arg(big)
        .query::<()>(&mut c)
        .unwrap_err();
    assert_eq!(err.code(), Some("OOM"));
}

/// A missing binary is a clear error naming the Debian package.
#[test]
fn missing_binary_error() {
    let err = RedisServer::start(ServerOptions {
        binary: Some("/nonexistent/redis-server".into()),
        ..Default::default()
    })
    .unwrap_err();
    assert!(matches!(err, TestkitError::Io { .. }), "{err}");
    assert!(TestkitError::BinaryMissing
        .to_string()
        .contains("apt-get install redis-server"));
}

/// Dropping the guard kills the process.
#[test]
fn drop_kills() {
    let s = RedisServer::start(ServerOptions::default()).unwrap();
    let pid = s.pid();
    assert!(alive(pid));
    drop(s);
    assert!(!alive(pid));
}

/// The shared cluster has 3 primaries, 3 replicas, state ok, and serves reads and writes.
#[tokio::test]
async fn shared_cluster_is_formed() {
    let started = Instant::now();
    let cluster = RedisCluster::shared();
    eprintln!("cluster start: {:?}", started.elapsed());
    assert_eq!(cluster.nodes().len(), 6);
    assert_eq!(cluster.primary_urls().len(), 3);
    let mut conn = cluster
        .cluster_client()
        .get_async_connection()
        .await
        .unwrap();
    for i in 0..100 {
        let _: () = redis::cmd("SET")
            .arg(format!("k{i}"))
            .arg(i)
            .query_async(&mut conn)
            .await
            .unwrap();
    }
    for i in 0..100 {
        let v: i64 = redis::cmd("GET")
            .arg(format!("k{i}"))
            .query_async(&mut conn)
            .await
            .unwrap();
        assert_eq!(v, i);
    }
    let mut direct = cluster.nodes()[0].client().get_connection().unwrap();
    let info: String = redis::cmd("CLUSTER")
        .arg("INFO")
        .query(&mut direct)
        .unwrap();
    assert!(info.contains("cluster_state:ok"));
}

/// The clock shim moves a running server's wall clock both ways (TIME and expiry), and back.
#[test]
fn clock_offset_moves_time_and_expiry() {
    use redis_atomic_testkit::ClockShift;
    let s = RedisServer::start(ServerOptions {
        clock: true,
        ..Default::default()
    })
    .unwrap();
    let mut c = s.client().get_connection().unwrap();
    let time = |c: &mut redis::Connection| -> i64 {
        let t: Vec<i64> = redis::cmd("TIME").query(c).unwrap();
        t[0]
    };
    let real = || {
        let now = std::time::SystemTime::now();
        now.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
    };
    assert!((time(&mut c) - real()).abs() <= 1);
    s.set_clock_offset(Duration::from_secs(120), ClockShift::Behind)
        .unwrap();
    assert!((time(&mut c) - (real() - 120)).abs() <= 1);
    let _: () = redis::cmd("SET")
        .arg("k")
        .arg("v")
        .arg("PX")
        .arg(60_000)
        .query(&mut c)
        .unwrap();
    s.set_clock_offset(Duration::from_secs(120), ClockShift::Ahead)
        .unwrap();
    assert!((time(&mut c) - (real() + 120)).abs() <= 1);
    let gone: Option<String> = redis::cmd("GET").arg("k").query(&mut c).unwrap();
    assert_eq!(
        gone, None,
        "a 60 s key set before a 4 min forward jump expired"
    );
    s.set_clock_offset(Duration::ZERO, ClockShift::Ahead)
        .unwrap();
    assert!((time(&mut c) - real()).abs() <= 1);
}

/// A crash (SIGKILL, no shutdown) with `appendfsync always` keeps every acknowledged write; the
/// server comes back on the same port.
#[test]
fn crash_restart_with_fsync_always_keeps_writes() {
    let mut s = RedisServer::start(ServerOptions {
        appendonly: true,
        appendfsync: Some(Fsync::Always),
        ..Default::default()
    })
    .unwrap();
    let mut c = s.client().get_connection().unwrap();
    for i in 0..200 {
        let _: () = redis::cmd("SET").arg(i).arg(i).query(&mut c).unwrap();
    }
    let pid = s.pid();
    s.crash_restart().unwrap();
    assert_ne!(s.pid(), pid);
    assert!(!alive(pid));
    let mut c = s.client().get_connection().unwrap();
    let n: i64 = redis::cmd("DBSIZE").query(&mut c).unwrap();
    assert_eq!(n, 200);
}
