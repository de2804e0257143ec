//! Testkit errors: each says what to do about it.

use std::path::PathBuf;

/// Why a server or cluster could not be provided.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TestkitError {
    /// No server binary.
    #[error("redis-server not found: install Debian's `redis-server` package (apt-get install redis-server) or set REDIS_ATOMIC_SERVER_BIN")]
    BinaryMissing,
    /// `REDIS_ATOMIC_SERVER_BIN` points nowhere.
    #[error("REDIS_ATOMIC_SERVER_BIN={0:?} does not exist")]
    BinaryNotFound(PathBuf),
    /// Spawning or file I/O failed. (The message names the cause, so it is not also the
    /// `source()`: a report would print it twice.)
    #[error("{what}: {cause}")]
    Io {
        /// What was being done.
        what: String,
        /// The I/O error.
        cause: std::io::Error,
    },
    /// The server did not answer PING in time (or exited); the log tail says why.
    #[error("redis-server did not become ready: {reason}\n--- server log (tail) ---\n{log}")]
    NotReady {
        /// What happened.
        reason: String,
        /// Last lines of the server log.
        log: String,
    },
    /// The cluster did not converge.
    #[error("cluster did not become ready: {0}")]
    Cluster(String),
    /// The clock shim ([`crate::ServerOptions::clock`]) could not be built.
    #[error("clock shim: {0}")]
    ClockShim(String),
    /// TLS material could not be generated.
    #[error("TLS material: {0}")]
    Tls(String),
    /// Sentinels did not agree (on each other, the replica, a new primary) in time.
    #[error("sentinel group: {0}")]
    Sentinel(String),
    /// A Redis command failed during set-up (the message includes the cause's).
    #[error("redis: {0}")]
    Redis(redis::RedisError),
}

impl From<redis::RedisError> for TestkitError {
    fn from(e: redis::RedisError) -> Self {
        TestkitError::Redis(e)
    }
}

pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> TestkitError {
    let what = what.into();
    move |cause| TestkitError::Io { what, cause }
}
