//! Per algorithm: the library vs raw `EVALSHA` of the same script with the same keys and
//! arguments, same connection count, same concurrency, same run. Prints decisions/s, the ratio,
//! `EVALSHA` calls per decision, server µs per call (`INFO commandstats`), and `MEMORY USAGE` of
//! one identity's state. Two classic scripts (seed 000 §10's sliding log and the common
//! float-based GCRA, both on server `TIME`) run in the same session as the reference for server
//! µs per decision.
//!
//! `cargo bench -p redis-atomic --bench ratelimit [-- SECONDS]` (default 2 s per case). Starts its
//! own redis-server through the testkit.
#![allow(clippy::unwrap_used, missing_docs)]

use redis::aio::MultiplexedConnection;
use redis_atomic::ratelimit::{Algorithm, Limit, Policy, RateLimiter};
use redis_atomic::script::registry::RL_POLICY;
use redis_atomic::{Client, ClientConfig, Keyspace};
use redis_atomic_testkit::{RedisServer, ServerOptions};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const TASKS: usize = 50;
const CONNS: usize = 4;

/// Seed 000 §10's sliding log, reading the server's clock instead of the client's (member:
/// `<now>-<count>` stands in for the seed's unique request id). Args: window_ms limit.
/// `tools/rl-script-cost.py` measures the same files.
const CLASSIC_LOG: &str = include_str!("classic/sliding_log.lua");

/// The widely copied float GCRA (redis-gcra style) on server `TIME`. Args: rate period_s burst.
const CLASSIC_GCRA: &str = include_str!("classic/gcra.lua");

/// The keys of one identity.
type KeysFn = Arc<dyn Fn(&str) -> Vec<String> + Send + Sync>;

struct Stats {
    decisions: u64,
    secs: f64,
    calls: u64,
    usec_per_call: f64,
}

impl Stats {
    fn add(&mut self, o: Stats) {
        let usec = self.usec_per_call * self.calls as f64 + o.usec_per_call * o.calls as f64;
        self.decisions += o.decisions;
        self.secs += o.secs;
        self.calls += o.calls;
        self.usec_per_call = usec / self.calls.max(1) as f64;
    }
}

async fn commandstats(conn: &mut MultiplexedConnection) -> (u64, u64) {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(conn)
        .await
        .unwrap();
    let line = info
        .lines()
        .find_map(|l| l.strip_prefix("cmdstat_evalsha:"));
    let (mut calls, mut usec) = (0, 0);
    for kv in line.unwrap_or("").split(',') {
        match kv.split_once('=') {
            Some(("calls", v)) => calls = v.parse().unwrap(),
            Some(("usec", v)) => usec = v.parse().unwrap(),
            _ => {}
        }
    }
    (calls, usec)
}

#[derive(Clone)]
enum Mode {
    Library(RateLimiter),
    /// Raw EVALSHA: sha, keys per identity (computed like the library does), fixed args.
    Raw(&'static str, KeysFn, Vec<String>),
}

async fn run(server: &RedisServer, mode: Mode, secs: f64) -> Stats {
    let client = redis::Client::open(server.url()).unwrap();
    let mut admin = client.get_multiplexed_async_connection().await.unwrap();
    let mut conns = Vec::new();
    for _ in 0..CONNS {
        conns.push(client.get_multiplexed_async_connection().await.unwrap());
    }
    let (c0, u0) = commandstats(&mut admin).await;
    let done = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(secs);
    let run = rand::random::<u32>();
    let mut tasks = Vec::new();
    for t in 0..TASKS {
        let (mode, done, mut conn) = (mode.clone(), done.clone(), conns[t % CONNS].clone());
        tasks.push(tokio::spawn(async move {
            let id = format!("user-{t}-{run:08x}");
            while Instant::now() < deadline {
                match &mode {
                    Mode::Library(l) => {
                        l.consume(&id, 1).await.unwrap();
                    }
                    Mode::Raw(sha, keys, args) => {
                        let _: redis::Value = redis::cmd("EVALSHA")
                            .arg(*sha)
                            .arg(keys(&id).len())
                            .arg(keys(&id))
                            .arg(args)
                            .query_async(&mut conn)
                            .await
                            .unwrap();
                    }
                }
                done.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let secs = started.elapsed().as_secs_f64();
    let (c1, u1) = commandstats(&mut admin).await;
    Stats {
        decisions: done.load(Ordering::Relaxed),
        secs,
        calls: c1 - c0,
        usec_per_call: (u1 - u0) as f64 / (c1 - c0).max(1) as f64,
    }
}

/// The keys and arguments the library sends for `limiter` without a request id: a single limit
/// goes to its algorithm's script (state key; cost limit period burst test-clock), several to
/// `rl_policy` (request key, state keys; cost request-id ttl test-clock, then the specs).
fn raw_of(limiter: &RateLimiter) -> (KeysFn, Vec<String>) {
    let limits = limiter.policy().limits();
    let single = limits.len() == 1;
    let l2 = limiter.clone();
    let keys = Arc::new(move |id: &str| {
        let state = l2.keys(id, None).unwrap().limits;
        if single {
            return state;
        }
        // Without a request id rl_policy never touches KEYS[1]: any request key of the slot.
        let mut keys = vec![l2.keys(id, Some("-")).unwrap().request.unwrap()];
        keys.extend(state);
        keys
    });
    let mut args = vec!["1".to_string()];
    if !single {
        let ttl = limiter.request_ttl().as_micros().to_string();
        args.extend([String::new(), ttl, String::new()]);
    }
    for l in limits {
        if !single {
            args.push(l.algorithm().code().to_string());
        }
        args.extend([
            l.limit().to_string(),
            l.period_us().to_string(),
            l.burst().to_string(),
        ]);
    }
    if single {
        args.push(String::new());
    }
    (keys, args)
}

/// Server µs per call measured without queueing: `n` sequential calls on one connection, in
/// `rounds` rounds interleaved by the caller; the least disturbed (smallest) round counts, since
/// this machine is shared and a descheduled server inflates `usec`.
async fn serial_usec(
    conn: &mut MultiplexedConnection,
    sha: &str,
    keys: &[String],
    args: &[String],
    n: u64,
) -> f64 {
    let (c0, u0) = commandstats(conn).await;
    for _ in 0..n {
        let _: redis::Value = redis::cmd("EVALSHA")
            .arg(sha)
            .arg(keys.len())
            .arg(keys)
            .arg(args)
            .query_async(conn)
            .await
            .unwrap();
    }
    let (c1, u1) = commandstats(conn).await;
    // the INFO call itself is not an EVALSHA; calls counted exactly
    (u1 - u0) as f64 / (c1 - c0).max(1) as f64
}

async fn memory(admin: &Client, limiter: &RateLimiter, units: u64) -> Vec<i64> {
    for _ in 0..units {
        limiter.consume("mem", 1).await.unwrap();
    }
    let mut out = Vec::new();
    for k in limiter.keys("mem", None).unwrap().limits {
        let v = admin
            .command(redis::cmd("MEMORY").arg("USAGE").arg(&k))
            .await
            .unwrap();
        out.push(redis::from_redis_value(v).unwrap());
    }
    out
}

#[tokio::main]
async fn main() {
    let secs: f64 = std::env::args()
        .filter_map(|a| a.parse().ok())
        .next()
        .unwrap_or(2.0);
    let server = RedisServer::start(ServerOptions::default()).unwrap();
    let lib = Client::connect(&server.url(), ClientConfig::default().pool_size(CONNS))
        .await
        .unwrap();
    lib.load_all().await.unwrap();
    println!(
        "redis {} · {TASKS} tasks · {CONNS} conns · {secs} s per case · {} cores (shared)",
        server.version(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!(
        "{:<16} {:>11} {:>11} {:>6} {:>8} {:>8} {:>8} {:>13}",
        "case", "lib dec/s", "raw dec/s", "ratio", "call/dec", "µs/call", "raw µs", "memory B"
    );
    let period = Duration::from_secs(1);
    let mut cases: Vec<(String, Policy)> = Algorithm::ALL
        .iter()
        .map(|&a| {
            // 1000/s each; the sliding log 10 000 per 100 ms (the classic log gets the same),
            // so both logs stay on their admitting path with a few hundred members.
            let limit = match a {
                Algorithm::SlidingLog => Limit::sliding_log(10_000, period / 10).unwrap(),
                _ => Limit::new(a, 1000, period).unwrap(),
            };
            (a.name().to_string(), limit.into())
        })
        .collect();
    cases.push((
        "policy gcra+fw".into(),
        Policy::new(vec![
            Limit::gcra(1000, period).unwrap(),
            Limit::fixed_window(100_000, Duration::from_secs(86400)).unwrap(),
        ])
        .unwrap(),
    ));
    let mut serial: Vec<(String, &'static str, Vec<String>, Vec<String>)> = Vec::new();
    for (name, policy) in cases {
        let ks = Keyspace::new(format!("bench{}", rand::random::<u16>())).unwrap();
        let limiter = RateLimiter::new(lib.clone(), ks, policy);
        let (keys, args) = raw_of(&limiter);
        let sha = if limiter.policy().limits().len() > 1 {
            RL_POLICY.sha1
        } else {
            let algo = limiter.policy().limits()[0]
                .algorithm()
                .name()
                .replace('-', "_");
            redis_atomic::script::find(&format!("rl_{algo}"))
                .unwrap()
                .sha1
        };
        serial.push((name.clone(), sha, keys("serial"), args.clone()));
        // Two interleaved rounds each, so neither side always runs first on a shared machine.
        let raw_mode = Mode::Raw(sha, keys, args);
        let lib_mode = Mode::Library(limiter.clone());
        let mut raw = run(&server, raw_mode.clone(), secs / 2.0).await;
        let mut libr = run(&server, lib_mode.clone(), secs / 2.0).await;
        raw.add(run(&server, raw_mode, secs / 2.0).await);
        libr.add(run(&server, lib_mode, secs / 2.0).await);
        let mem = memory(&lib, &limiter, 100).await;
        let per = |s: &Stats| s.decisions as f64 / s.secs;
        println!(
            "{:<16} {:>11.0} {:>11.0} {:>6.3} {:>8.2} {:>8.2} {:>8.2} {:>13}",
            name,
            per(&libr),
            per(&raw),
            per(&libr) / per(&raw),
            libr.calls as f64 / libr.decisions.max(1) as f64,
            libr.usec_per_call,
            raw.usec_per_call,
            format!("{mem:?}"),
        );
    }
    for (name, source, args) in [
        ("classic log", CLASSIC_LOG, ["100", "10000", "-"]),
        ("classic gcra", CLASSIC_GCRA, ["1000", "1", "1000"]),
    ] {
        let sha: String = redis::from_redis_value(
            lib.command(redis::cmd("SCRIPT").arg("LOAD").arg(source))
                .await
                .unwrap(),
        )
        .unwrap();
        let sha: &'static str = Box::leak(sha.into_boxed_str());
        let args: Vec<String> = args.into_iter().map(String::from).collect();
        serial.push((name.into(), sha, vec![format!("{name}:{{serial}}")], args));
    }
    // Server µs per decision, sequential and interleaved: 20 rounds of 300 calls per script.
    let mut conn = server
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let mut rounds: Vec<Vec<f64>> = vec![Vec::new(); serial.len()];
    for _ in 0..20 {
        for (i, (_, sha, keys, args)) in serial.iter().enumerate() {
            rounds[i].push(serial_usec(&mut conn, sha, keys, args, 300).await);
        }
    }
    println!("\nserver µs per decision (sequential, 20 interleaved rounds of 300): min / median");
    for ((name, ..), mut r) in serial.iter().zip(rounds) {
        r.sort_by(f64::total_cmp);
        println!("{name:<16} {:>7.2} / {:>7.2}", r[0], r[r.len() / 2]);
    }
}
