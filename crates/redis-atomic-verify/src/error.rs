//! Why a run could not produce a report. A violation is never an error: it is a row of the
//! [`crate::Report`] with `ok: false`.

use crate::bootstrap::BootstrapError;
use crate::check::CheckError;

/// A run that could not complete.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// A setting out of range, or a check named that does not exist (one line naming it).
    #[error("{0}")]
    Settings(String),
    /// No server could be reached or started.
    #[error(transparent)]
    Bootstrap(#[from] BootstrapError),
    /// The server did not answer `INFO` (the report's header).
    #[error(transparent)]
    Server(redis_atomic::Error),
    /// A check could not run: an error, not a violation (in a clean run any error of the
    /// primitive is one).
    #[error("check `{name}` failed to run")]
    Check {
        /// The check's name.
        name: String,
        /// What failed.
        #[source]
        source: CheckError,
    },
    /// The servers faults are injected into did not start.
    #[error("starting the embedded server for faults")]
    Faults(#[source] CheckError),
    /// The run's keys could not all be deleted.
    #[error("deleting the run's keys")]
    Cleanup(#[source] CheckError),
}
