//! Typed bindings for a folder of your own scripts, generated at build time.
//!
//! `redis_atomic_scripts::build::generate` loads the folder, checks every header against its
//! body and the folder's `scripts.lock`, and writes one `Script<K, A, R>` static and one reply
//! enum per script into `OUT_DIR`; `src/main.rs` includes them. A bad header fails this build
//! with the file and line; editing a script reruns it.

use redis_atomic_scripts::build::{generate, Options};
use std::path::PathBuf;

/// The scripts: the folder you keep beside your code.
const SCRIPTS: &str = "../user-scripts";

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo")).join("scripts.rs");
    if let Err(e) = generate(
        &manifest.join(SCRIPTS),
        &out,
        &Options::user("user_scripts"),
    ) {
        panic!("{e}");
    }
}
