//! The HTTP faces through real sockets, a real HTTP client and a real Redis, one test binary:
//! the one start-up sequence every face goes through ([`start`]), `serve`'s routes and error
//! mapping ([`serve`]), the proxy's forwarding ([`proxy`]), both faces in front of a Redis whose
//! replies are corrupted ([`corrupt`]). Tests share this binary's server
//! ([`common`], the layer tests' helpers) with keys of their own; those that kill or pause Redis
//! start their own.
#![allow(clippy::unwrap_used, missing_docs)]

#[path = "../../../redis-atomic-http/tests/it/common.rs"]
mod common;
mod corrupt;
mod proxy;
mod rls;
mod serve;
mod start;
