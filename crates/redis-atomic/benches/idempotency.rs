//! Idempotency `begin` + `complete` through the library vs raw `EVALSHA` of the same scripts,
//! same connection count, 50 tasks, same run; server µs per call; MEMORY USAGE per record.
//!
//! `cargo bench -p redis-atomic --bench idempotency [-- SECONDS]`
#![allow(clippy::unwrap_used, missing_docs)]

use redis_atomic::idempotency::{Begin, Fingerprint, IdemConfig, Idempotency, Response};
use redis_atomic::script::registry::{IDEM_BEGIN, IDEM_COMPLETE};
use redis_atomic::{observe, Client, ClientConfig, Keyspace};
use redis_atomic_testkit::{RedisServer, ServerOptions};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const TASKS: usize = 50;

async fn evalsha_stats(conn: &mut redis::aio::MultiplexedConnection) -> (u64, u64) {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(conn)
        .await
        .unwrap();
    let line = info
        .lines()
        .find(|l| l.starts_with("cmdstat_evalsha:"))
        .unwrap_or("");
    let get = |k: &str| {
        line.split([':', ','])
            .find_map(|kv| kv.strip_prefix(k))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (get("calls="), get("usec="))
}

async fn run(server: &RedisServer, raw: bool, conns: usize, secs: f64) -> (f64, f64, f64) {
    let client = redis::Client::open(server.url()).unwrap();
    let mut admin = client.get_multiplexed_async_connection().await.unwrap();
    let mut raws = Vec::new();
    for _ in 0..conns {
        raws.push(client.get_multiplexed_async_connection().await.unwrap());
    }
    let lib = Client::connect(&server.url(), ClientConfig::default().pool_size(conns))
        .await
        .unwrap();
    lib.load_all().await.unwrap();
    let store =
        Idempotency::new(lib, Keyspace::new("bench").unwrap(), IdemConfig::default()).unwrap();
    let (c0, u0) = evalsha_stats(&mut admin).await;
    let done = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    let started = Instant::now();
    let run_id = rand::random::<u32>();
    let body = Response::new(201, vec![b'x'; 512]);
    let mut tasks = Vec::new();
    for t in 0..TASKS {
        let (store, done, body) = (store.clone(), done.clone(), body.clone());
        let mut conn = raws[t % conns].clone();
        tasks.push(tokio::spawn(async move {
            let mut i = 0u64;
            while Instant::now() < deadline {
                let key = format!("{run_id}-{t}-{i}");
                let fp = Fingerprint::of(&[key.as_bytes()]);
                if raw {
                    let rkey = store.keys("bench", key.as_bytes()).unwrap().record;
                    let fp_hex = "0123456789abcdef0123456789abcdef";
                    let begun: redis::Value = redis::cmd("EVALSHA")
                        .arg(IDEM_BEGIN.sha1)
                        .arg(1)
                        .arg(&rkey)
                        .arg("tok")
                        .arg(fp_hex)
                        .arg(30_000)
                        .arg(86_400_000)
                        .query_async(&mut conn)
                        .await
                        .unwrap();
                    // The complete must name the generation begin issued, or it is refused
                    // ('lost') without storing anything: the raw path must do the same work.
                    let redis::Value::Array(fields) = begun else {
                        panic!("begin: {begun:?}")
                    };
                    let Some(redis::Value::Int(generation)) = fields.get(1) else {
                        panic!("begin: {fields:?}")
                    };
                    let stored: redis::Value = redis::cmd("EVALSHA")
                        .arg(IDEM_COMPLETE.sha1)
                        .arg(1)
                        .arg(&rkey)
                        .arg("tok")
                        .arg(*generation)
                        .arg("completed")
                        .arg(vec![b'x'; 520])
                        .arg(86_400_000)
                        .query_async(&mut conn)
                        .await
                        .unwrap();
                    assert_eq!(observe::status_word(&stored), Some("stored"));
                } else {
                    let Begin::Claimed(c) = store.begin("bench", key.as_bytes(), fp).await.unwrap()
                    else {
                        panic!()
                    };
                    c.complete(&body).await.unwrap();
                }
                i += 1;
                done.fetch_add(2, Ordering::Relaxed); // two decisions: begin, complete
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let elapsed = started.elapsed().as_secs_f64();
    let (c1, u1) = evalsha_stats(&mut admin).await;
    let decisions = done.load(Ordering::Relaxed) as f64;
    (
        (decisions / elapsed),
        (c1 - c0) as f64 / decisions,
        (u1 - u0) as f64 / (c1 - c0).max(1) as f64,
    )
}

#[tokio::main]
async fn main() {
    let secs: f64 = std::env::args()
        .filter_map(|a| a.parse().ok())
        .next()
        .unwrap_or(3.0);
    let server = RedisServer::start(ServerOptions::default()).unwrap();
    println!(
        "redis {} · {TASKS} tasks · {secs} s per case · {} cores",
        server.version(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!(
        "{:<5} {:>12} {:>12} {:>7} {:>7} {:>9}",
        "conns", "lib dec/s", "raw dec/s", "ratio", "rt/dec", "µs/call"
    );
    for conns in [1, 4] {
        let (raw, _, _) = run(&server, true, conns, secs).await;
        let (lib, rt, us) = run(&server, false, conns, secs).await;
        println!(
            "{conns:<5} {lib:>12.0} {raw:>12.0} {:>7.3} {rt:>7.2} {us:>9.2}",
            lib / raw
        );
    }
    let client = Client::connect(&server.url(), ClientConfig::default())
        .await
        .unwrap();
    let store = Idempotency::new(
        client.clone(),
        Keyspace::new("mem").unwrap(),
        IdemConfig::default(),
    )
    .unwrap();
    let Begin::Claimed(c) = store
        .begin(
            "tenant-1",
            b"a-typical-uuid-4b1c-9f0e-7a2d",
            Fingerprint::of(&[b"r"]),
        )
        .await
        .unwrap()
    else {
        panic!()
    };
    c.complete(&Response::new(201, vec![b'x'; 512]))
        .await
        .unwrap();
    let key = store
        .keys("tenant-1", b"a-typical-uuid-4b1c-9f0e-7a2d")
        .unwrap()
        .record;
    let bytes: i64 = redis::from_redis_value(
        client
            .command(redis::cmd("MEMORY").arg("USAGE").arg(&key))
            .await
            .unwrap(),
    )
    .unwrap();
    println!("MEMORY USAGE, completed record with a 512-byte body: {bytes} bytes");
}
