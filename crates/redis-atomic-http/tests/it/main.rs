//! The tower layers through a real axum server, a real HTTP client and a real Redis, one test
//! binary: [`idempotency`] (the `Idempotency-Key` layer) and [`ratelimit`] (the `RateLimit`
//! layer). Tests share this binary's server and cluster ([`common`]) with keys of their own;
//! those that kill or pause Redis start their own.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;
mod idempotency;
mod ratelimit;
