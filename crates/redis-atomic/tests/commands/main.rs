//! Primitives built on plain commands rather than scripts — optimistic CAS, MULTI/EXEC batches,
//! event dedup — in one test binary, so the shared cluster starts once for all three.
#![allow(clippy::unwrap_used)]

#[path = "../common/mod.rs"]
mod common;

mod cas;
mod dedup;
mod multi;
