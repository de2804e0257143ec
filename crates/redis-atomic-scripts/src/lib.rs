//! # redis-atomic-scripts
//!
//! The script format of redis-atomic, in one place for every tool that reads it: the library's
//! `build.rs` (registry, reply types, Function library), its tests, and the CLI (`lint`,
//! `scripts`, `functions`). Plain `std` plus SHA1, so it builds as a build-dependency in seconds
//! and carries no runtime.
//!
//! A script is a Lua file: a `#!lua` shebang, a `---` header ([`header`]) whose `returns:` line
//! declares every reply shape ([`returns`]), then a body that may pull in shared fragments with
//! `--@include name` ([`include`]). [`check`] holds the body to its header, [`load`] reads
//! scripts, [`folder`] names a user's folder as a versioned Function library and loads it as a
//! unit (scripts, `library.version`, `scripts.lock`), [`lockfile`] records versions and SHA1s,
//! [`codegen`] turns headers into typed Rust, and [`build`] does it from a user's `build.rs` for
//! their own folder.

pub mod build;
pub mod check;
pub mod codegen;
pub mod folder;
pub mod header;
pub mod include;
pub mod load;
pub mod lockfile;
pub mod returns;

pub use folder::{Folder, FolderError};
pub use header::{Header, HeaderError, RetryClass};
pub use load::{load_dir, LoadError, ScriptFile};
