//! Generates the script registry from `scripts/*.lua`.
//!
//! The `.lua` files are the single source of truth: their headers give names, key and argument
//! names, reply shapes, retry class, flags and version. `redis-atomic-scripts` (the same crate the
//! CLI uses) loads them, refuses to build when a header disagrees with its body, expands
//! `--@include` fragments, computes each SHA1 over the exact bytes Redis will run, and generates
//! one typed `static` and one reply enum per script, plus the Function library composed from the
//! same bodies. Nothing here is a hand-kept table.

use redis_atomic_scripts::codegen::{self, Library};
use std::path::PathBuf;
use std::{env, fs};

fn main() {
    let dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let scripts = dir.join("scripts");
    println!("cargo:rerun-if-changed={}", scripts.display());
    println!(
        "cargo:rerun-if-changed={}",
        scripts.join("include").display()
    );
    let files = redis_atomic_scripts::load_dir(&scripts).unwrap_or_else(|e| panic!("{e}"));
    for f in &files {
        for path in &f.expanded.files {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    let version_file = scripts.join("library.version");
    println!("cargo:rerun-if-changed={}", version_file.display());
    let version: u32 = fs::read_to_string(&version_file)
        .unwrap_or_else(|e| panic!("read {}: {e}", version_file.display()))
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("scripts/library.version must hold a positive integer: {e}"));
    let code = codegen::registry(&files, &Library::builtin(version), "crate")
        .unwrap_or_else(|e| panic!("scripts: {e}"));
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("registry.rs");
    fs::write(&out, code).unwrap_or_else(|e| panic!("write {}: {e}", out.display()));
}
