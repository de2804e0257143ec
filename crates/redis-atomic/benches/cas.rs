//! When to climb the ladder: optimistic CAS (`WATCH`/read/`MULTI`/`EXEC`, rung 4) against the
//! equivalent one-script increment (rung 5) on ONE hot key, at 1, 16 and 64 contenders, in the
//! same run. Prints commits/s, the abort rate (attempts whose `EXEC` aborted, over all attempts)
//! and the ratio.
//!
//! `cargo bench -p redis-atomic --bench cas [-- SECONDS]` (default 2 s per case). Starts its own
//! redis-server through the testkit. Timing lives here, never in tests.
#![allow(clippy::unwrap_used, missing_docs)]

use redis_atomic::cas::{Cas, CasOutcome, Decision, Read};
use redis_atomic::write::Write;
use redis_atomic::{Client, ClientConfig, RetryPolicy};
use redis_atomic_testkit::{RedisServer, ServerOptions};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The same read-modify-write as the CAS closure, as one script.
const INCR_SCRIPT: &str = "#!lua\nlocal n = tonumber(redis.call('GET', KEYS[1]) or '0') + 1\nredis.call('SET', KEYS[1], n)\nreturn n\n";

#[derive(Default)]
struct Counts {
    commits: AtomicU64,
    attempts: AtomicU64,
    gave_up: AtomicU64,
}

async fn run_case(client: &Client, contenders: usize, script: bool, secs: f64) -> (f64, f64, u64) {
    let key = format!("bench:cas:{{hot}}:{:08x}", rand::random::<u32>());
    let sha: String = redis::from_redis_value(
        client
            .command(redis::cmd("SCRIPT").arg("LOAD").arg(INCR_SCRIPT))
            .await
            .unwrap(),
    )
    .unwrap();
    let counts = Arc::new(Counts::default());
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    let started = Instant::now();
    let tasks: Vec<_> = (0..contenders)
        .map(|_| {
            let (client, key, sha, counts) =
                (client.clone(), key.clone(), sha.clone(), counts.clone());
            tokio::spawn(async move {
                let policy = RetryPolicy::contention()
                    .max_attempts(64)
                    .deadline(Duration::from_secs(5));
                let cas = Cas::new(client.clone()).with_policy(policy);
                while Instant::now() < deadline {
                    if script {
                        client
                            .command(redis::cmd("EVALSHA").arg(&sha).arg(1).arg(&key))
                            .await
                            .unwrap();
                        counts.attempts.fetch_add(1, Ordering::Relaxed);
                        counts.commits.fetch_add(1, Ordering::Relaxed);
                        continue;
                    }
                    let out = cas
                        .update(&[Read::get(&key)], |s| {
                            counts.attempts.fetch_add(1, Ordering::Relaxed);
                            let n = s.get::<Option<i64>>(0)?.unwrap_or(0) + 1;
                            Ok(Decision::commit(vec![Write::set(&key, n.to_string())], ()))
                        })
                        .await
                        .unwrap();
                    match out {
                        CasOutcome::Committed(()) => counts.commits.fetch_add(1, Ordering::Relaxed),
                        _ => counts.gave_up.fetch_add(1, Ordering::Relaxed),
                    };
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let secs = started.elapsed().as_secs_f64();
    let commits = counts.commits.load(Ordering::Relaxed);
    let attempts = counts.attempts.load(Ordering::Relaxed).max(1);
    let stored: i64 =
        redis::from_redis_value(client.command(redis::cmd("GET").arg(&key)).await.unwrap())
            .unwrap();
    assert_eq!(
        stored as u64, commits,
        "lost update in the benchmark itself"
    );
    (
        commits as f64 / secs,
        (attempts - commits) as f64 / attempts as f64,
        counts.gave_up.load(Ordering::Relaxed),
    )
}

#[tokio::main]
async fn main() {
    let secs: f64 = std::env::args()
        .filter_map(|a| a.parse().ok())
        .next()
        .unwrap_or(2.0);
    let server = RedisServer::start(ServerOptions::default()).unwrap();
    let client = Client::connect(&server.url(), ClientConfig::default())
        .await
        .unwrap();
    println!(
        "redis {} · one hot key · {secs} s per case · machine: {} cores",
        server.version(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!(
        "{:>11} {:>14} {:>11} {:>12} {:>14} {:>8}",
        "contenders", "WATCH commit/s", "abort rate", "gave up", "script commit/s", "ratio"
    );
    for contenders in [1, 16, 64] {
        let (watch, aborts, gave_up) = run_case(&client, contenders, false, secs).await;
        let (script, _, _) = run_case(&client, contenders, true, secs).await;
        println!(
            "{contenders:>11} {watch:>14.0} {:>10.1}% {gave_up:>12} {script:>14.0} {:>8.2}",
            aborts * 100.0,
            script / watch
        );
    }
}
