//! Real `redis-server` processes, clusters and faults for tests — ours, `verify`'s and users'.
//!
//! Why real servers: the semantics this project depends on (script atomicity, `NOSCRIPT`, shebang
//! flags, cluster redirects, expiry on the server's clock) are exactly what a mock would get
//! wrong. A server starts in about 20 ms, so each test can have its own.
//!
//! Why RAII guards: a [`RedisServer`] kills and reaps its process on drop and prints the server
//! log when the test panicked. Processes are also started with `PR_SET_PDEATHSIG`, so even a
//! server held in a `static` (the shared cluster) dies with the test binary.
//!
//! Faults: [`FaultProxy`] sits between a client and a server and adds latency, blackholes,
//! resets, refuses, or forwards requests while dropping their replies (the request ran, the
//! client cannot know). [`faults`] stalls, kills client connections, flushes script caches,
//! fills memory, runs foreign busy scripts, promotes replicas, migrates slots and kills cluster
//! primaries; [`RedisServer::crash_restart`] is a SIGKILL and a restart (what survives depends on
//! [`ServerOptions::appendfsync`]); [`clock`] makes a running server's wall clock jump. [`history`]
//! records what concurrent clients saw (ok / fail / unknown, with times) and checks it against
//! the models the primitives claim, so a test under faults asserts the invariant instead of
//! hoping for no errors. `arb` (with the `arb` feature) generates arbitrary server replies for
//! decoder proptests.
//!
//! TLS: [`TlsMaterial`] generates a throwaway CA and certificates; [`ServerOptions::tls`] and
//! [`ClusterOptions::tls`] start servers and clusters that speak TLS only. Sentinel:
//! [`SentinelGroup`] runs a primary, replicas and Sentinels, and fails them over on demand.

#[cfg(feature = "arb")]
pub mod arb;
pub mod clock;
mod cluster;
mod error;
pub mod faults;
pub mod history;
pub mod proxy;
mod sentinel;
mod server;
mod stats;
mod tls;

pub use clock::ClockShift;
pub use cluster::{ClusterOptions, RedisCluster};
pub use error::TestkitError;
pub use history::{FencedWrite, History, LeaseSpan, Op, OpResult, Verdict};
pub use proxy::{Fault, FaultProxy, ProxyStats};
pub use sentinel::{Failover, SentinelGroup, SentinelOptions};
pub use server::{free_port, server_binary, Fsync, RedisServer, ServerOptions};
pub use stats::command_calls;
pub use tls::{ClientAuth, ServerTls, TlsMaterial};

/// Runs `start` on a thread that lives as long as the process and returns what it built: for
/// servers held in a `static` and shared by the tests of one binary. (A server dies with the
/// *thread* that spawned it, `PR_SET_PDEATHSIG`; a test's thread ends with the test.)
pub fn for_the_process<T: Send + 'static>(start: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("redis-atomic-testkit-keeper".into())
        .spawn(move || {
            let _ = tx.send(start());
            loop {
                std::thread::park();
            }
        });
    if let Err(e) = spawned {
        panic!("spawn keeper thread: {e}");
    }
    rx.recv()
        .unwrap_or_else(|e| panic!("keeper thread died before starting: {e}"))
}

/// A key prefix unique to one test run, instead of `FLUSHALL` (tests share servers and run in
/// parallel): `t-<name>-<8 hex digits>`. Braces and colons in `test_name` become `-`.
pub fn unique_prefix(test_name: &str) -> String {
    let name: String = test_name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("t-{name}-{:08x}", rand::random::<u32>())
}
