//! One module per verb: its arguments (clap), a call into the crate that does the work, and
//! the printing. Exit codes: 0 ok, 1 the command's own "not ok" (findings, violations, failed
//! checks), 2 usage, unreadable input or connection errors; each command's `--help` says which.

pub mod bench;
pub mod doctor;
pub mod functions;
pub mod lint;
pub mod module;
pub mod proxy;
pub mod rls;
pub mod scripts;
pub mod serve;
pub mod slot;
pub mod test;
pub mod verify;
