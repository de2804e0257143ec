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
//! ## Layout
//! * [`client`]: connections, per-call timeout, retries by class, `EVALSHA`/`FCALL` delivery.
//! * [`script`]: the script registry generated from `scripts/*.lua` headers, the lock file.
//! * [`keys`]: key naming under one hash tag, [`slot`], same-slot checks.
//! * [`lock`]: leases with fencing tokens (the exemplar every primitive follows), and a watchdog
//!   that renews a lease and signals its loss ([`lock::WatchedLock`]).
//! * [`idempotency`]: idempotency keys: one-key state machine with fenced claims and takeover.
//! * [`semaphore`]: counting semaphores with expiring, fenced permits.
//! * [`fenced`]: writes applied only for the newest fence (zombie holders rejected).
//! * [`cas`]: optimistic WATCH/read/MULTI/EXEC with bounded, jittered retries.
//! * [`multi`]: atomic multi-key writes with MULTI/EXEC; [`write`]: the typed writes they use.
//! * [`dedup`]: first sighting of an event id on `SET NX PX GET`.
//! * [`queue`]: a reliable delayed job queue; every claim is a fenced lease.
//! * [`ratelimit`]: five rate-limit algorithms, multi-limit policies, retry-safe consume.
//! * [`quota`]: bounded counters, TTL set once / extended forward only, monotonic max.
//! * [`model`]: pure reference models of the scripts, for property tests.
//! * [`observe`]: metric names and tracing conventions.
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
#[cfg(feature = "http")]
pub mod http;
pub mod keys;
pub mod lease;
pub mod model;
pub mod observe;
mod primitives;
pub mod script;
pub mod write;

pub(crate) use primitives::legacy_reply as reply;
pub use primitives::{
    cas, dedup, fenced, idempotency, lock, multi, queue, quota, ratelimit, semaphore,
};

pub use client::{Arg, Client, ClientConfig, Replicas, RetryPolicy};
pub use error::Error;
pub use keys::{slot, Keyspace};
pub use lease::{Fence, OwnerToken};
pub use script::{Delivery, RetryClass};
