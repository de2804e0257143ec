//! The HTTP faces through the real binary: `serve` raced by Python and Node clients
//! ([`serve`]), `proxy` between a Python client and a Python upstream ([`proxy`]), both with
//! scripts under `foreign/`; `bench --rls` ([`rls`]). The faces' routes and start-up in detail
//! are the server crate's tests.

mod proxy;
mod rls;
mod serve;

use std::path::{Path, PathBuf};

/// A script of `foreign/`.
pub fn foreign(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/faces/foreign")
        .join(name)
}
