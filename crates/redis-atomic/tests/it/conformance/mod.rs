//! The library against the conformance vectors, `conformance/vectors.json`: the one
//! language-neutral file every face (this library, the Python and Node packages, the Java, Go and
//! TypeScript libraries) runs in its own suite, so that all derive keys, encode arguments, decode
//! replies and classify failures alike. The file is the contract (`conformance/README.md` says
//! what each section means); each module here checks one section and fails when the library
//! disagrees with it.
//!
//! `REDIS_ATOMIC_VECTORS=<path>` runs another copy of the file (to see a deliberate change fail).
//! A failing case prints the library's own answer as JSON, ready to paste into the file when the
//! change is meant.

mod arguments;
mod errors;
mod keys;
mod monitor;
mod operations;
mod replies;
mod spellings;
mod vectors;
