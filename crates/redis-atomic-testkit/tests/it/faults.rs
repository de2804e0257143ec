//! The fault proxy and fault helpers do what they say, against a real server.

use redis_atomic_testkit::faults;
use redis_atomic_testkit::{Fault, FaultProxy, RedisServer, ServerOptions};
use std::time::Duration;

fn server() -> RedisServer {
    RedisServer::start(ServerOptions::default()).unwrap()
}

fn through(proxy: &FaultProxy) -> redis::Connection {
    let c = redis::Client::open(proxy.url()).unwrap();
    let conn = c
        .get_connection_with_timeout(Duration::from_secs(2))
        .unwrap();
    conn.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    conn
}

fn direct(server: &RedisServer) -> redis::Connection {
    server.client().get_connection().unwrap()
}

fn get(conn: &mut redis::Connection, key: &str) -> Option<String> {
    redis::cmd("GET").arg(key).query(conn).unwrap()
}

/// With no fault the proxy is transparent.
#[test]
fn transparent() {
    let s = server();
    let proxy = FaultProxy::start(s.addr().unwrap()).unwrap();
    let mut c = through(&proxy);
    let _: () = redis::cmd("SET").arg("k").arg("v").query(&mut c).unwrap();
    assert_eq!(get(&mut c, "k").as_deref(), Some("v"));
    proxy.set(Fault::Latency(Duration::from_millis(5)));
    assert_eq!(get(&mut c, "k").as_deref(), Some("v"));
    assert_eq!(proxy.stats().accepted, 1);
}

/// DropReplies: the request runs, its reply never arrives, and the connection that lost it is
/// reset when the fault ends; new connections work.
#[test]
fn dropped_reply_means_executed_but_lost() {
    let s = server();
    let proxy = FaultProxy::start(s.addr().unwrap()).unwrap();
    let mut c = through(&proxy);
    proxy.set(Fault::DropReplies);
    let r: redis::RedisResult<()> = redis::cmd("SET").arg("k").arg("ran").query(&mut c);
    assert!(r.is_err_and(|e| e.is_timeout()), "reply should be lost");
    assert_eq!(get(&mut direct(&s), "k").as_deref(), Some("ran"));
    assert!(proxy.stats().replies_dropped >= 1);
    proxy.set(Fault::None);
    std::thread::sleep(Duration::from_millis(50));
    let r: redis::RedisResult<Option<String>> = redis::cmd("GET").arg("k").query(&mut c);
    assert!(
        r.is_err(),
        "a connection that lost a reply must not resume: {r:?}"
    );
    assert_eq!(get(&mut through(&proxy), "k").as_deref(), Some("ran"));
}

/// Blackhole: the request never reaches the server.
#[test]
fn blackhole_swallows_requests() {
    let s = server();
    let proxy = FaultProxy::start(s.addr().unwrap()).unwrap();
    let mut c = through(&proxy);
    proxy.set(Fault::Blackhole);
    let r: redis::RedisResult<()> = redis::cmd("SET").arg("k").arg("v").query(&mut c);
    assert!(r.is_err());
    assert_eq!(get(&mut direct(&s), "k"), None);
    assert!(proxy.stats().requests_dropped >= 1);
}

/// Reset kills open connections; Refuse makes new ones fail with "connection refused" until the
/// fault ends, on the same port.
#[test]
fn reset_and_refuse() {
    let s = server();
    let proxy = FaultProxy::start(s.addr().unwrap()).unwrap();
    let mut c = through(&proxy);
    assert_eq!(get(&mut c, "k"), None);
    proxy.set(Fault::Reset);
    std::thread::sleep(Duration::from_millis(50));
    let r: redis::RedisResult<Option<String>> = redis::cmd("GET").arg("k").query(&mut c);
    assert!(r.is_err_and(|e| e.is_connection_dropped() || e.is_io_error()));
    proxy.set(Fault::Refuse);
    std::thread::sleep(Duration::from_millis(50));
    let e = std::net::TcpStream::connect(proxy.addr()).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::ConnectionRefused);
    proxy.set(Fault::None);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(get(&mut through(&proxy), "k"), None);
}

/// Server-side helpers: killed clients, flushed scripts, full memory, promotion.
#[test]
fn server_helpers() {
    let s = server();
    let mut c = direct(&s);
    let sha: String = redis::cmd("SCRIPT")
        .arg("LOAD")
        .arg("return 1")
        .query(&mut c)
        .unwrap();
    faults::flush_scripts(&s).unwrap();
    let exists: Vec<bool> = redis::cmd("SCRIPT")
        .arg("EXISTS")
        .arg(&sha)
        .query(&mut c)
        .unwrap();
    assert_eq!(exists, vec![false]);
    assert!(faults::kill_clients(&s).unwrap() >= 1);
    let killed: redis::RedisResult<String> = redis::cmd("PING").query(&mut c);
    assert!(killed.is_err(), "the killed connection still answers");
    let mut c = direct(&s);
    faults::fill_memory(&s, 0).unwrap();
    let r: redis::RedisResult<()> = redis::cmd("SET")
        .arg("big")
        .arg(vec![0u8; 1 << 20])
        .query(&mut direct(&s));
    assert_eq!(r.unwrap_err().code(), Some("OOM"));
    faults::unlimit_memory(&s).unwrap();
    let replica = server();
    let _: () = redis::cmd("SET").arg("x").arg("1").query(&mut c).unwrap();
    faults::replicate(&replica, &s).unwrap();
    faults::promote(&replica).unwrap();
    let mut r = direct(&replica);
    assert_eq!(get(&mut r, "x").as_deref(), Some("1"));
    let _: () = redis::cmd("SET").arg("y").arg("2").query(&mut r).unwrap();
}
