//! The queue library vs raw `EVALSHA` of the same scripts: jobs/s to drain the same backlog with
//! claim batches of 1, 10 and 100 (each job claimed, then acked), same connection count, same
//! concurrency, same run. Also prints script calls per job and server µs per call (from
//! `INFO commandstats`) and the Redis core's CPU use.
//!
//! `cargo bench -p redis-atomic --bench queue [-- JOBS]` (default 20 000 jobs per case). Starts
//! its own redis-server through the testkit. Timing lives here, never in tests.
#![allow(clippy::unwrap_used, missing_docs)]

use redis::aio::MultiplexedConnection;
use redis::Value;
use redis_atomic::lease::OwnerToken;
use redis_atomic::queue::{Claim, Queue, QueueConfig, QueueKeys};
use redis_atomic::script::registry::{QUEUE_ACK, QUEUE_CLAIM, QUEUE_ENQUEUE};
use redis_atomic::{Client, ClientConfig, Keyspace};
use redis_atomic_testkit::{RedisServer, ServerOptions};
use std::time::Instant;

const TASKS: usize = 8;
const CONNS: usize = 4;
const VIS_MS: u64 = 30_000;

async fn server_stats(conn: &mut MultiplexedConnection) -> (u64, u64, f64) {
    let info: String = redis::cmd("INFO")
        .arg("all")
        .query_async(conn)
        .await
        .unwrap();
    let (mut calls, mut usec, mut cpu) = (0u64, 0u64, 0f64);
    for line in info.lines() {
        if let Some(rest) = line.strip_prefix("cmdstat_evalsha:") {
            for kv in rest.split(',') {
                match kv.split_once('=') {
                    Some(("calls", v)) => calls = v.parse().unwrap(),
                    Some(("usec", v)) => usec = v.parse().unwrap(),
                    _ => {}
                }
            }
        }
        if let Some(v) = line
            .strip_prefix("used_cpu_user:")
            .or_else(|| line.strip_prefix("used_cpu_sys:"))
        {
            cpu += v.trim().parse::<f64>().unwrap();
        }
    }
    (calls, usec, cpu)
}

/// Enqueues `jobs` jobs with pipelined raw EVALSHA (not measured).
async fn fill(conn: &mut MultiplexedConnection, k: &QueueKeys, jobs: usize) {
    for chunk in (0..jobs).collect::<Vec<_>>().chunks(1000) {
        let mut pipe = redis::pipe();
        for i in chunk {
            pipe.cmd("EVALSHA")
                .arg(QUEUE_ENQUEUE.sha1)
                .arg(3)
                .arg(&k.due)
                .arg(&k.meta)
                .arg(&k.payload)
                .arg(format!("j{i}"))
                .arg(&[7u8; 64][..])
                .arg(0)
                .arg(0)
                .ignore();
        }
        let () = pipe.query_async(conn).await.unwrap();
    }
}

/// One raw claim + acks; returns the jobs done (0 when empty).
async fn raw_round(conn: &mut MultiplexedConnection, k: &QueueKeys, batch: usize) -> usize {
    let reply: Value = redis::cmd("EVALSHA")
        .arg(QUEUE_CLAIM.sha1)
        .arg(6)
        .arg(&[&k.due, &k.inflight, &k.dead, &k.meta, &k.payload, &k.errors])
        .arg("raw")
        .arg(VIS_MS)
        .arg(batch)
        .arg(5)
        .query_async(conn)
        .await
        .unwrap();
    let Value::Array(items) = reply else { panic!() };
    let bytes = |v: &Value| match v {
        Value::BulkString(b) => b.clone(),
        other => panic!("{other:?}"),
    };
    let jobs: Vec<(Vec<u8>, Vec<u8>)> = items
        .get(3..)
        .unwrap_or_default()
        .chunks(4)
        .map(|c| (bytes(&c[0]), bytes(&c[1])))
        .collect();
    for (id, fence) in &jobs {
        let _: Value = redis::cmd("EVALSHA")
            .arg(QUEUE_ACK.sha1)
            .arg(5)
            .arg(&[&k.inflight, &k.meta, &k.payload, &k.errors, &k.done])
            .arg(id)
            .arg(fence)
            .arg(86_400_000)
            .query_async(conn)
            .await
            .unwrap();
    }
    jobs.len()
}

/// One library claim + acks; returns the jobs done (0 when empty).
async fn lib_round(q: &Queue, batch: usize) -> usize {
    let vis = std::time::Duration::from_millis(VIS_MS);
    let worker = OwnerToken::new("lib").unwrap();
    let Claim::Claimed(jobs) = q.claim(&worker, vis, batch).await.unwrap() else {
        return 0;
    };
    for j in &jobs {
        j.ack().await.unwrap();
    }
    jobs.len()
}

struct Stats {
    jobs_per_s: f64,
    calls_per_job: f64,
    usec_per_call: f64,
    cpu_share: f64,
}

async fn run_case(server: &RedisServer, batch: usize, raw: bool, jobs: usize) -> Stats {
    let client = redis::Client::open(server.url()).unwrap();
    let mut admin = client.get_multiplexed_async_connection().await.unwrap();
    let mut raws = Vec::new();
    for _ in 0..CONNS {
        raws.push(client.get_multiplexed_async_connection().await.unwrap());
    }
    let lib = Client::connect(&server.url(), ClientConfig::default().pool_size(CONNS))
        .await
        .unwrap();
    lib.load_all().await.unwrap();
    let name = format!("q{:08x}", rand::random::<u32>());
    let q = Queue::new(
        lib,
        &Keyspace::new("bench").unwrap(),
        &name,
        QueueConfig::default(),
    )
    .unwrap();
    fill(&mut admin, q.keys(), jobs).await;
    let (c0, u0, cpu0) = server_stats(&mut admin).await;
    let started = Instant::now();
    let mut tasks = Vec::new();
    for t in 0..TASKS {
        let (q, k) = (q.clone(), q.keys().clone());
        let mut conn = raws[t % CONNS].clone();
        tasks.push(tokio::spawn(async move {
            let mut done = 0;
            loop {
                let n = if raw {
                    raw_round(&mut conn, &k, batch).await
                } else {
                    lib_round(&q, batch).await
                };
                if n == 0 {
                    return done;
                }
                done += n;
            }
        }));
    }
    let mut done = 0;
    for t in tasks {
        done += t.await.unwrap();
    }
    let secs = started.elapsed().as_secs_f64();
    assert_eq!(done, jobs, "every job drained once");
    let (c1, u1, cpu1) = server_stats(&mut admin).await;
    let calls = c1 - c0;
    Stats {
        jobs_per_s: done as f64 / secs,
        calls_per_job: calls as f64 / done as f64,
        usec_per_call: (u1 - u0) as f64 / calls.max(1) as f64,
        cpu_share: (cpu1 - cpu0) / secs,
    }
}

#[tokio::main]
async fn main() {
    let jobs: usize = std::env::args()
        .filter_map(|a| a.parse().ok())
        .next()
        .unwrap_or(20_000);
    let server = RedisServer::start(ServerOptions::default()).unwrap();
    println!(
        "redis {} · {TASKS} tasks · {CONNS} connections · {jobs} jobs per case (claim + ack each) · machine: {} cores",
        server.version(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!(
        "{:>6} {:>11} {:>11} {:>7} {:>10} {:>9} {:>9}",
        "batch", "lib jobs/s", "raw jobs/s", "ratio", "calls/job", "µs/call", "redis cpu"
    );
    for batch in [1, 10, 100] {
        let raw = run_case(&server, batch, true, jobs).await;
        let lib = run_case(&server, batch, false, jobs).await;
        println!(
            "{:>6} {:>11.0} {:>11.0} {:>7.3} {:>10.2} {:>9.2} {:>8.0}%",
            batch,
            lib.jobs_per_s,
            raw.jobs_per_s,
            lib.jobs_per_s / raw.jobs_per_s,
            lib.calls_per_job,
            lib.usec_per_call,
            lib.cpu_share * 100.0
        );
    }
}
