//! The HTTP faces through the real binary: `serve` raced by Python and Node clients
//! ([`serve`]), `proxy` between a Python client and a Python upstream ([`proxy`]), both with
//! scripts under `foreign/`; `bench --rls` ([`rls`]). The faces' routes and start-up in detail
//! are the server crate's tests.

mod proxy;
mod rls;
mod serve;

use crate::{cli, stderr};
use std::path::{Path, PathBuf};

/// `bench FLAG` (`--http`, `--rls`): a short run of two rounds of two tasks, its JSON report
/// (the command must succeed).
pub fn bench_json(flag: &str) -> serde_json::Value {
    let (seconds, rounds, tasks) = ("0.4", "2", "2");
    let out = cli(&[
        "bench",
        flag,
        "--seconds",
        seconds,
        "--rounds",
        rounds,
        "--concurrency",
        tasks,
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A script of `foreign/`.
pub fn foreign(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/faces/foreign")
        .join(name)
}
