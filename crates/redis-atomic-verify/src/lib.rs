//! # redis-atomic-verify
//!
//! Proof that every redis-atomic primitive keeps its invariant against a real server, under
//! concurrency and (optionally) faults: many tasks drive each primitive for a few seconds while
//! a check records what they saw, and the testkit's history checkers judge the record against
//! the primitive's model. One row per primitive; any violation fails the run, and so does a check
//! that could not run to a verdict (its row says why; the run goes on with the next).
//!
//! The harness is production code: it never ends a run on a refusal or an odd reply. A refusal
//! (nothing ran) and a lost or unusable reply (may have run) are outcomes the history checkers
//! judge; each row counts its unknown outcomes and reports how available the primitive was
//! ([`Availability`]: the calls refused, the longest stretch in which every call was refused).
//!
//! **Who it is for:** an operator or a CI job that wants the proof on *its* deployment and
//! build — from `redis-atomic verify`, or from their own tests:
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use redis_atomic::{Client, ClientConfig};
//! use redis_atomic_verify::{Cleanup, Verify};
//! use std::time::Duration;
//!
//! let url = "redis://127.0.0.1:6379";
//! let client = Client::connect(url, ClientConfig::default()).await?;
//! let report = Verify::new(client)
//!     .duration(Duration::from_secs(1))
//!     .only(["lock", "queue"])
//!     .cleanup(Cleanup::Sweep { url: url.into() })
//!     .run()
//!     .await?;
//! report.write_table(&mut std::io::stdout())?;
//! assert!(report.ok);
//! # Ok(()) }
//! ```
//!
//! A crate that adds a primitive adds its row with a [`Check`] of its own
//! ([`Verify::add_check`]); this crate does not depend on it.
//!
//! **Why a crate of its own:** the checks, faults, history checkers and report were locked in
//! the command-line binary, so nobody could run them from a test; and the binary should not
//! decide what a test can prove. The crate also holds the one embedded-server bootstrap
//! ([`connect_or_embed`], [`url_or_embed`]) every command and HTTP face uses.
//!
//! With [`Verify::faults`], every check runs again once per kind of fault ([`FaultKind`]),
//! injected over and over into servers started for it while it runs (a hostile proxy that
//! corrupts replies among them): the report then has one row per primitive and fault, with the
//! operations whose outcome was unknown, and the invariant must still hold.
//!
//! On a server it does not own, a run leaves nothing behind: every key has a TTL and, with
//! [`Cleanup::Sweep`], the run's namespaces are deleted when it ends ([`cleanup`]); [`acl`]
//! gives the ACL such a run needs.

/// Returns early with a [`CheckError`] made from a format string.
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::CheckError::from(format!($($arg)*)))
    };
}

/// A [`CheckError`] made from a format string.
macro_rules! err {
    ($($arg:tt)*) => {
        $crate::CheckError::from(format!($($arg)*))
    };
}

/// Returns early with a [`CheckError`] unless the condition holds.
macro_rules! ensure {
    ($cond:expr, $($arg:tt)*) => {
        if !$cond {
            bail!($($arg)*);
        }
    };
}

pub mod acl;
mod bootstrap;
mod check;
mod checks;
pub mod cleanup;
mod ctx;
mod driver;
mod error;
mod faults;
mod race;
mod report;
mod run;
mod tally;

pub use bootstrap::{
    connect_or_embed, embed_module, embedded_module, url_or_embed, BootstrapError, Embedded,
    MODULE_ENV,
};
pub use check::{Check, CheckError, CheckResult};
pub use checks::builtin;
pub use ctx::CheckCtx;
pub use driver::Driver;
pub use error::VerifyError;
pub use faults::{FaultKind, ServerCalls};
/// A check's judgement ([`Findings::with`]), re-exported so a check of your own needs no testkit
/// dependency of its own.
pub use redis_atomic_testkit::Verdict;
pub use report::{CheckReport, Findings, Report, ServerInfo, Status};
pub use run::{Cleanup, Verify, CLEAN_TIMEOUT, DEFAULT_NAMESPACE, MAX_DURATION, MAX_TASKS};
pub use tally::Availability;
