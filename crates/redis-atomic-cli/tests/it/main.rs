//! The real `redis-atomic` binary, driven as a user would, one test binary with a module per
//! area: the small verbs and the binary's contract ([`commands`]), `verify` ([`verify`],
//! [`all_faults`], [`verify_url`], its `rls` row [`verify_rls`]), `doctor`, `bench`, `functions`, `lint` (the command's exit codes and
//! formats; the findings themselves are the lint crate's tests), the HTTP faces with clients we
//! did not write ([`faces`]), TLS end to end ([`tls`]) and a user's script folder
//! ([`user_scripts`]). Tests that need a server share this binary's where they can; those that
//! count every key, stop or reconfigure a server start their own.
#![allow(clippy::unwrap_used, missing_docs)]

mod all_faults;
mod bench;
mod commands;
mod doctor;
mod faces;
mod functions;
mod lint;
mod tls;
mod user_scripts;
mod verify;
mod verify_driver;
mod verify_rls;
mod verify_url;

use std::process::{Command, Output};

/// Runs the binary with `args`, to completion.
pub fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_redis-atomic"))
        .args(args)
        .output()
        .unwrap()
}

/// What a run printed on stdout.
pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// What a run said on stderr, for the assertion message.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A `--json` run's exit code and document (a stdout that is no JSON fails the test, showing
/// both streams).
pub fn exit_and_json(o: &Output) -> (i32, serde_json::Value) {
    let doc = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|_| panic!("stdout {} stderr {}", text(&o.stdout), text(&o.stderr)));
    (o.status.code().unwrap(), doc)
}

/// Bytes as text, lossily.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
