//! Generates the script registry from `scripts/*.lua`.
//!
//! The `.lua` files are the single source of truth: their headers give names, key and argument
//! names, reply shapes, retry class, flags and version. `redis-atomic-scripts` (the same crate the
//! CLI uses) loads them, refuses to build when a header disagrees with its body, expands
//! `--@include` fragments, computes each SHA1 over the exact bytes Redis will run, and generates
//! one typed `static` and one reply enum per script, plus the Function library composed from the
//! same bodies. Nothing here is a hand-kept table, and it is the same public helper a user's
//! `build.rs` calls for their own folder (`redis_atomic_scripts::build`).

use redis_atomic_scripts::build::{generate, Options};
use std::env;
use std::path::PathBuf;

fn main() {
    let dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    generate(
        &dir.join("scripts"),
        &out.join("registry.rs"),
        &Options::builtin(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // Bindings of a user folder, included only by `tests/user_scripts.rs`: the user path (a
    // foreign library, `::redis_atomic` as runtime) exercised by this crate's own tests.
    generate(
        &dir.join("tests/fixtures/user-lib"),
        &out.join("user_lib.rs"),
        &Options::user("userlib"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
}
