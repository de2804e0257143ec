//! The library's integration tests, one binary (one link, one process): a folder per primitive
//! and one per cross-cutting fault. Tests share one lazily started standalone server and one 3+3
//! cluster ([`common::env`]), each under its own key prefix; a test that crashes, stalls,
//! flushes, reconfigures or clock-shifts a server starts its own ([`common::own_env`],
//! [`common::standalone`], or a testkit cluster, Sentinel group or proxy of its own). A test that
//! counts metrics records into a recorder of its own ([`common::metrics::Recorded`]): the tests
//! run side by side in this one process.
//!
//! Run it again on Valkey with `REDIS_ATOMIC_SERVER_BIN=<valkey-server>` (the Makefile's server
//! matrix does).
#![allow(clippy::unwrap_used, missing_docs)]

mod common;
mod conformance;

// One per primitive.
mod cas;
mod dedup;
mod doctor;
mod fenced;
mod idempotency;
mod lock;
mod multi;
mod observe;
mod queue;
mod quota;
mod ratelimit;
mod scripts;
mod semaphore;
mod user_scripts;

// One per cross-cutting fault or deployment.
mod acl;
mod bad_input;
mod bad_replies;
mod batch;
mod busy;
mod client_retry;
mod clock;
mod crash;
mod durable_writes;
mod eviction;
mod failover;
mod resp3;
mod sentinel;
mod slot_migration;
