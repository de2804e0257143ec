//! Library vs raw `EVALSHA` of the same scripts, same connection count, same concurrency, same
//! run. Prints decisions/s, the ratio, round trips per decision (from `INFO commandstats`),
//! server µs per call, and the Redis core's CPU use (is the server or the client the limit?).
//!
//! The paths alternate in [`ROUNDS`] rounds in ABBA order (raw, lib, lib, raw, ...), each a
//! quarter of the case's time: on a busy machine throughput drifts over seconds, and running one
//! path after the other puts that drift into the ratio. Rates are summed over the rounds; the
//! range of the per-round ratios shows how much to trust the ratio.
//!
//! `cargo bench -p redis-atomic --bench lock [-- SECONDS]` (default 3 s per path per case).
//! Starts its own redis-server through the testkit. Timing lives here, never in tests.
#![allow(clippy::unwrap_used, missing_docs)]

use redis::aio::MultiplexedConnection;
use redis_atomic::lease::OwnerToken;
use redis_atomic::lock::{Acquire, Locks};
use redis_atomic::script::registry::{LOCK_ACQUIRE, LOCK_EXTEND, LOCK_RELEASE};
use redis_atomic::{Client, ClientConfig, Keyspace};
use redis_atomic_testkit::{RedisServer, ServerOptions};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const TASKS: usize = 50;
const ROUNDS: usize = 4;

#[derive(Clone, Copy, Debug)]
enum Case {
    AcquireRelease,
    Extend,
}

/// One phase's totals, or their sums over the rounds.
#[derive(Default)]
struct Stats {
    decisions: u64,
    secs: f64,
    evalsha_calls: u64,
    usec: u64,
    cpu_secs: f64,
}

impl Stats {
    fn rate(&self) -> f64 {
        self.decisions as f64 / self.secs
    }

    fn add(&mut self, o: &Stats) {
        self.decisions += o.decisions;
        self.secs += o.secs;
        self.evalsha_calls += o.evalsha_calls;
        self.usec += o.usec;
        self.cpu_secs += o.cpu_secs;
    }
}

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

async fn run_case(server: &RedisServer, case: Case, raw: bool, conns: usize, secs: f64) -> Stats {
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
    let locks = Locks::new(lib.clone(), Keyspace::new("bench").unwrap());
    let (c0, u0, cpu0) = server_stats(&mut admin).await;
    let done = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    let started = Instant::now();
    let run = rand::random::<u32>();
    let mut tasks = Vec::new();
    for t in 0..TASKS {
        let (locks, done) = (locks.clone(), done.clone());
        let mut conn = raws[t % conns].clone();
        tasks.push(tokio::spawn(async move {
            let resource = format!("r{t}-{run:08x}");
            let lock = format!("bench:lock:v1:{{{resource}}}");
            let fence = format!("{lock}:fence");
            let token = OwnerToken::random();
            if let Case::Extend = case {
                let Acquire::Acquired(_g) = locks
                    .acquire_with_token(&resource, &token, Duration::from_secs(600))
                    .await
                    .unwrap()
                else {
                    panic!()
                };
            }
            while Instant::now() < deadline {
                match (case, raw) {
                    (Case::AcquireRelease, false) => {
                        let Acquire::Acquired(g) = locks
                            .acquire_with_token(&resource, &token, Duration::from_secs(10))
                            .await
                            .unwrap()
                        else {
                            panic!()
                        };
                        g.release().await.unwrap();
                    }
                    (Case::AcquireRelease, true) => {
                        let _: redis::Value = redis::cmd("EVALSHA")
                            .arg(LOCK_ACQUIRE.sha1)
                            .arg(2)
                            .arg(&lock)
                            .arg(&fence)
                            .arg(token.as_str())
                            .arg(10_000)
                            .query_async(&mut conn)
                            .await
                            .unwrap();
                        let _: redis::Value = redis::cmd("EVALSHA")
                            .arg(LOCK_RELEASE.sha1)
                            .arg(1)
                            .arg(&lock)
                            .arg(token.as_str())
                            .query_async(&mut conn)
                            .await
                            .unwrap();
                    }
                    (Case::Extend, false) => {
                        locks
                            .extend(&resource, &token, Duration::from_secs(600))
                            .await
                            .unwrap();
                    }
                    (Case::Extend, true) => {
                        let _: redis::Value = redis::cmd("EVALSHA")
                            .arg(LOCK_EXTEND.sha1)
                            .arg(1)
                            .arg(&lock)
                            .arg(token.as_str())
                            .arg(600_000)
                            .query_async(&mut conn)
                            .await
                            .unwrap();
                    }
                }
                // a decision is one script call: acquire+release makes two
                done.fetch_add(
                    match case {
                        Case::AcquireRelease => 2,
                        Case::Extend => 1,
                    },
                    Ordering::Relaxed,
                );
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let secs = started.elapsed().as_secs_f64();
    let (c1, u1, cpu1) = server_stats(&mut admin).await;
    Stats {
        decisions: done.load(Ordering::Relaxed),
        secs,
        evalsha_calls: c1 - c0,
        usec: u1 - u0,
        cpu_secs: cpu1 - cpu0,
    }
}

/// `ROUNDS` rounds of raw and lib in ABBA order, `secs / ROUNDS` each: (raw, lib, round ratios).
async fn interleaved(
    server: &RedisServer,
    case: Case,
    conns: usize,
    secs: f64,
) -> (Stats, Stats, Vec<f64>) {
    let (mut raw, mut lib, mut ratios) = (Stats::default(), Stats::default(), Vec::new());
    for round in 0..ROUNDS {
        let order = if round % 2 == 0 {
            [true, false]
        } else {
            [false, true]
        };
        let (mut r, mut l) = (Stats::default(), Stats::default());
        for is_raw in order {
            let s = run_case(server, case, is_raw, conns, secs / ROUNDS as f64).await;
            if is_raw {
                r = s;
            } else {
                l = s;
            }
        }
        ratios.push(l.rate() / r.rate());
        raw.add(&r);
        lib.add(&l);
    }
    (raw, lib, ratios)
}

#[tokio::main]
async fn main() {
    let secs: f64 = std::env::args()
        .filter_map(|a| a.parse().ok())
        .next()
        .unwrap_or(3.0);
    let server = RedisServer::start(ServerOptions::default()).unwrap();
    println!(
        "redis {} · {TASKS} tasks · {secs} s per path per case in {ROUNDS} rounds (ABBA) · machine: {} cores",
        server.version(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!(
        "{:<16} {:>5} {:>12} {:>12} {:>7} {:>11} {:>9} {:>9} {:>9}",
        "case",
        "conns",
        "lib dec/s",
        "raw dec/s",
        "ratio",
        "round range",
        "rt/dec",
        "µs/call",
        "redis cpu"
    );
    for case in [Case::AcquireRelease, Case::Extend] {
        for conns in [1, 4] {
            let (raw, lib, ratios) = interleaved(&server, case, conns, secs).await;
            let min = ratios.iter().copied().fold(f64::INFINITY, f64::min);
            let max = ratios.iter().copied().fold(0.0, f64::max);
            println!(
                "{:<16} {:>5} {:>12.0} {:>12.0} {:>7.3} {:>11} {:>9.2} {:>9.2} {:>8.0}%",
                format!("{case:?}"),
                conns,
                lib.rate(),
                raw.rate(),
                lib.rate() / raw.rate(),
                format!("{min:.2}–{max:.2}"),
                lib.evalsha_calls as f64 / lib.decisions.max(1) as f64,
                lib.usec as f64 / lib.evalsha_calls.max(1) as f64,
                lib.cpu_secs / lib.secs * 100.0
            );
        }
    }
}
