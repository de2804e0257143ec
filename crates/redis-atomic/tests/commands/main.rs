//! Primitives built on plain commands rather than scripts — optimistic CAS, MULTI/EXEC batches,
//! event dedup — in one test binary, so the shared cluster starts once for all three.
#![allow(clippy::unwrap_used)]

#[path = "../common/mod.rs"]
mod common;

mod cas;
mod cas_retry;
mod dedup;
mod multi;

use common::metrics::counter as counter_with;

/// The sum of counter `name` over all its series.
fn counter(name: &str) -> u64 {
    counter_with(name, &[])
}
