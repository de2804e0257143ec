//! # redis-atomic
//!
//! Redis-backed workflows that stay correct under concurrency, client timeouts and retries,
//! dropped connections, restarts, script-cache loss, failover and Redis Cluster.
//!
//! Every decision is one round trip: one script, run atomically by the server, on the server's
//! clock. A refusal is a value (`Acquire::Held`), not an error; errors say whether the request
//! may have run ([`Error::OutcomeUnknown`]) or surely did not ([`Error::NotSent`],
//! [`Error::Rejected`]), and the client retries only what is safe to retry.
//!
//! ## Layout: the layers, bottom up
//!
//! ```text
//! scripts/*.lua ──build.rs (redis-atomic-scripts)──▶ script::registry   typed statics + reply enums
//! client/   connections, the one call path (retry loop, observability), delivery
//! lease.rs  Fence, OwnerToken, Extend/Release, the Lease handle shape
//! keys.rs   key naming under one hash tag, slot(), the one hash-tag parser
//! primitives/<name>   one module per primitive, all with the same shape
//! ```
//!
//! * [`script`]: the registry generated from `scripts/*.lua` headers (one `static` per script,
//!   typed by its key and argument counts and by its reply), the lock file, the ACL rules.
//! * [`client`]: connections, per-call timeout, `EVALSHA`/`FCALL` delivery, and the one call
//!   path every operation takes: `Client::call` for a script, one bounded retry loop by each
//!   script's retry class, one observability contract ([`observe`]).
//! * [`lease`]: what lease-like primitives share — [`Fence`], [`OwnerToken`], one handle shape
//!   (`fence()`, `token()`, `extend(ttl)`, `release`/`complete`/`ack`) and refusals that say
//!   `retry_after`.
//! * [`keys`]: key naming under one hash tag, [`slot`], same-slot checks. Every primitive exposes
//!   its own keys as a typed set (`Locks::keys`, `Queue::keys`, ...).
//! * [`error`]: one error type, classified by what a retry would do.
//! * The primitives, each stating its invariant, keys, mechanism, retry behaviour and what it
//!   does not guarantee:
//!   * [`lock`]: leases with fencing tokens, and a watchdog that renews a lease and signals its
//!     loss ([`lock::WatchedLock`]);
//!   * [`semaphore`]: counting semaphores with expiring, fenced permits;
//!   * [`idempotency`]: idempotency keys: one-key state machine with fenced claims and takeover;
//!   * [`queue`]: a reliable delayed job queue; every claim is a fenced lease;
//!   * [`ratelimit`]: five rate-limit algorithms, multi-limit policies, retry-safe consume;
//!   * [`quota`]: bounded counters, TTL set once / extended forward only, monotonic max;
//!   * [`fenced`]: writes applied only for the newest fence (zombie holders rejected);
//!   * [`cas`]: optimistic WATCH/read/MULTI/EXEC with bounded, jittered retries;
//!   * [`multi`]: atomic multi-key writes with MULTI/EXEC; [`write`](mod@write): the typed
//!     writes they use;
//!   * [`dedup`]: first sighting of an event id on `SET NX PX GET`.
//! * [`model`]: pure reference models of the scripts, for property tests.
//!
//! ## Quick example
//! ```no_run
//! # async fn demo() -> Result<(), redis_atomic::Error> {
//! use redis_atomic::{Client, ClientConfig, Keyspace, lock::{Locks, Acquire}};
//! use std::time::Duration;
//!
//! let client = Client::connect("redis://127.0.0.1:6379", ClientConfig::default()).await?;
//! let locks = Locks::new(client, Keyspace::new("billing")?);
//! match locks.acquire("invoice-42", Duration::from_secs(10)).await? {
//!     Acquire::Acquired(guard) => {
//!         // ... do the work, passing guard.fence() to every write it protects ...
//!         guard.release().await?;
//!     }
//!     Acquire::Held { retry_after } => println!("busy, retry in {retry_after:?}"),
//!     _ => {}
//! }
//! # Ok(()) }
//! ```

pub mod client;
pub mod error;
pub mod keys;
pub mod lease;
pub mod model;
pub mod observe;
mod primitives;
pub mod script;
pub mod write;

pub use primitives::{
    cas, dedup, fenced, idempotency, lock, multi, queue, quota, ratelimit, semaphore,
};

pub use client::{
    Arg, Client, ClientConfig, Pem, Replicas, RetryPolicy, SentinelConfig, TlsOptions,
};
pub use error::Error;
pub use keys::{slot, Keyspace};
pub use lease::{Fence, OwnerToken};
pub use script::{Delivery, RetryClass};

/// The README's Rust snippets, compiled by `cargo test --doc` so they follow the API.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
