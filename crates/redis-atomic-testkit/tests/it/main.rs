//! The testkit's own guarantees, one test binary: servers start, restart, pause and die with
//! their guard ([`server`]); the fault proxy and fault helpers do what they say ([`faults`]);
//! corrupted replies and a cluster behind its proxies ([`corrupt`]); cluster faults (slot
//! migration, failover, primary kill) leave a working cluster
//! ([`cluster_faults`]). Every test here stops, crashes or reconfigures its server, so each has
//! its own.
#![allow(clippy::unwrap_used, missing_docs)]

mod cluster_faults;
mod corrupt;
mod faults;
mod server;
