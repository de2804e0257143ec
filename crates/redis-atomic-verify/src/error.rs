//! Why a run could not produce a report. A violation is never an error, nor is a check that
//! could not run: each is a row of the [`crate::Report`] (status `violations`, `error`).

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
    /// The run's keys could not all be deleted.
    #[error("deleting the run's keys")]
    Cleanup(#[source] CheckError),
}
