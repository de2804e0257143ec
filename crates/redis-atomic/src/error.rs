//! One error type, classified by what a retry would do.
//!
//! A timeout is not a failure: it is an unknown outcome. Transport and server errors are sorted
//! into three retry classes, by the server's error *code* (the first word of the reply, never the
//! message text, so Redis and Valkey classify alike):
//!
//! * [`Error::NotSent`]: the request never reached a server (connection refused). Safe to retry.
//! * [`Error::Rejected`]: a server refused before running the script (`NOSCRIPT`, `BUSY`,
//!   `LOADING`, `READONLY`, `OOM`, `NOREPLICAS`, `MOVED`, `ASK`, `TRYAGAIN`, `CLUSTERDOWN`, ...).
//!   Nothing ran. Safe to retry or redirect (the client does, for the transient codes).
//! * [`Error::OutcomeUnknown`]: the request may have run (timeout, connection lost after
//!   sending, a reply that could not be parsed). Retried only for scripts whose header says
//!   `retry: safe`.
//!
//! What decides between "nothing ran" and "may have run" is *when* it went wrong: anything that
//! goes wrong after a request was handed to a connection, and is not an error code the server
//! sent, may have run — a timeout, a closed stream, a reply that does not parse
//! ([`Error::OutcomeUnknown`]) or parses into a shape the binding does not know
//! ([`Error::BadReply`]: the request ran, its reply is unusable). Both are resent only when the
//! call is retry-safe. [`Error::Client`] is kept for what fails before anything is sent. A
//! connection whose reply did not parse is out of step with its server: it is discarded, never
//! used again (the next request gets a fresh one).
//!
//! A refusal by the primitive (lock held, rate limited) is not an error but an outcome value.

use redis::RedisError;

/// Everything that can go wrong.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The request never reached a server; nothing ran. Safe to retry.
    ///
    /// The message includes the `redis` error's; it is not also the `source()` (an error names
    /// its cause in one place, or reports print it twice).
    #[error("not sent: {0}")]
    NotSent(RedisError),
    /// A server refused the request before running it; nothing ran.
    #[error("rejected by the server before running ({code}): {message}")]
    Rejected {
        /// The server's error code (`BUSY`, `READONLY`, `OOM`, ...).
        code: String,
        /// The rest of the reply.
        message: String,
    },
    /// The request may or may not have run (timeout, connection lost after sending, a reply
    /// that could not be parsed).
    #[error("outcome unknown after {attempts} attempt(s): {reason}")]
    OutcomeUnknown {
        /// What happened.
        reason: String,
        /// Attempts made, the last of which had this outcome.
        attempts: u32,
        /// Whether the client gave up waiting (the per-request timeout) in any attempt, rather
        /// than the connection failing.
        timed_out: bool,
        /// Whether resending the same call cannot repeat its effect (the script's retry class,
        /// or the call's: a rate-limit call with a request id, a lock acquire with the caller's
        /// own token). Set by the library per call; every face reports it as it is.
        retry_safe: bool,
    },
    /// A key holds a value of another type (or another primitive's data); nothing was changed.
    #[error("wrong type at key: {0}")]
    WrongType(String),
    /// An argument was refused, by this library before sending or by the script.
    #[error("bad argument: {0}")]
    BadArgument(String),
    /// A request costs more than a limit could ever admit at once (its burst): not a wait but a
    /// refusal for good. Nothing was sent.
    #[error("cost {cost} exceeds the burst {burst}: no wait would admit it")]
    CostExceedsBurst {
        /// The request's cost.
        cost: u64,
        /// The largest cost the limits admit.
        burst: u64,
    },
    /// The server answered in a shape the binding does not understand (version skew, or a
    /// reply damaged on the way): the request ran, or may have, and its reply is unusable. Like
    /// [`Error::OutcomeUnknown`], resent only when the call is retry-safe.
    #[error("unexpected reply from script {script}: {detail}")]
    BadReply {
        /// The script.
        script: &'static str,
        /// What was wrong.
        detail: String,
    },
    /// The keys of one call span hash slots; nothing was sent (or the server refused it).
    /// Keys are not kept (they may carry user data): only their slots.
    #[error("keys span more than one hash slot: {slots:?}")]
    CrossSlot {
        /// The slot of each key, in the order given (empty when the server refused the call).
        slots: Vec<u16>,
    },
    /// Any other server error (script runtime error, ACL `NOPERM`, ...).
    #[error("server error ({code}): {message}")]
    Server {
        /// The server's error code.
        code: String,
        /// The rest of the reply.
        message: String,
    },
    /// Could not connect or configure a connection (the message includes the cause's, which is
    /// therefore not also the `source()`).
    #[error("connection: {0}")]
    Connection(RedisError),
    /// TLS could not be set up: a CA, certificate or key that cannot be read or parsed, TLS
    /// options for a URL without TLS, or a handshake that failed (the server's certificate did
    /// not verify, the server wanted a client certificate). Nothing was sent; a retry cannot
    /// help.
    #[error("TLS: {0}")]
    Tls(String),
    /// The client failed on its own side before anything was sent (a misconfiguration, a
    /// watchdog that had already stopped). Never the outcome of a request that was sent: those
    /// are [`Error::OutcomeUnknown`] or [`Error::BadReply`].
    #[error("client: {0}")]
    Client(String),
    /// The script ran and its effect stands on the primary, but fewer replicas than asked
    /// acknowledged it within the timeout ([`crate::ClientConfig::replicas`]): a failover now may
    /// lose it.
    #[error("ran, but only {acked} of {wanted} replica(s) acknowledged it in time")]
    NotReplicated {
        /// Replicas that acknowledged.
        acked: u32,
        /// Replicas asked for.
        wanted: u32,
    },
}

/// Codes of replies that mean "refused before running" and are worth retrying soon.
const TRANSIENT: &[&str] = &[
    "NOSCRIPT",
    "BUSY",
    "LOADING",
    "READONLY",
    "NOREPLICAS",
    "MOVED",
    "ASK",
    "TRYAGAIN",
    "CLUSTERDOWN",
    "MASTERDOWN",
];

/// Codes of replies that mean "refused before running" but will not clear by themselves soon.
const REFUSED: &[&str] = &["OOM", "MISCONF", "NOTBUSY"];

impl Error {
    /// Whether nothing ran, so a retry cannot repeat an effect: the request never reached a
    /// server, a server refused it before running, or the client refused it before sending
    /// (a bad argument, a failed connect or TLS set-up, a misused handle).
    pub fn nothing_ran(&self) -> bool {
        match self {
            Error::NotSent(_)
            | Error::Rejected { .. }
            | Error::CrossSlot { .. }
            | Error::BadArgument(_)
            | Error::CostExceedsBurst { .. }
            | Error::Connection(_)
            | Error::Tls(_)
            | Error::Client(_) => true,
            // A script that failed half-way keeps what it wrote before the failure.
            Error::OutcomeUnknown { .. }
            | Error::BadReply { .. }
            | Error::WrongType(_)
            | Error::Server { .. }
            | Error::NotReplicated { .. } => false,
        }
    }

    /// Whether the request may have run.
    pub fn is_outcome_unknown(&self) -> bool {
        matches!(self, Error::OutcomeUnknown { .. })
    }

    /// Whether resending the same call cannot repeat an effect: nothing ran, or it may have and
    /// the call is retry-safe ([`Error::OutcomeUnknown`]'s `retry_safe`).
    pub fn retry_safe(&self) -> bool {
        match self {
            Error::OutcomeUnknown { retry_safe, .. } => *retry_safe,
            other => other.nothing_ran(),
        }
    }

    /// Whether the client gave up waiting in any attempt: an unknown outcome after a timeout, or
    /// a request or connect that timed out before anything was sent.
    pub fn timed_out(&self) -> bool {
        match self {
            Error::OutcomeUnknown { timed_out, .. } => *timed_out,
            Error::NotSent(e) | Error::Connection(e) => e.is_timeout(),
            _ => false,
        }
    }

    /// Whether the request ran or may have while its reply was lost or unusable
    /// ([`Error::OutcomeUnknown`], [`Error::BadReply`]): resent only when the call is retry-safe.
    pub(crate) fn ran_unseen(&self) -> bool {
        matches!(self, Error::OutcomeUnknown { .. } | Error::BadReply { .. })
    }

    /// Whether a prompt retry of the same request may succeed and cannot repeat an effect: it
    /// was not sent, a server refused it with a code that clears by itself (`BUSY`, `LOADING`,
    /// `READONLY`, ...), or the connection could not be made for a reason of the network
    /// (refused, reset, timed out: a server restarting) rather than of the configuration.
    pub fn is_transient(&self) -> bool {
        match self {
            Error::NotSent(_) => true,
            Error::Rejected { code, .. } => TRANSIENT.contains(&code.as_str()),
            Error::Connection(e) => e.is_io_error() || e.is_connection_refusal() || e.is_timeout(),
            _ => false,
        }
    }

    /// The stable error code every face spells the same way (`docs/vocabulary.md`):
    /// `not_sent`, `rejected`, `outcome_unknown`, ... Also the metrics label.
    pub fn code(&self) -> &'static str {
        self.label()
    }

    /// A short stable label for metrics (`outcome="..."`, `reason="..."`).
    pub fn label(&self) -> &'static str {
        match self {
            Error::NotSent(_) => "not_sent",
            Error::Rejected { .. } => "rejected",
            Error::OutcomeUnknown { .. } => "outcome_unknown",
            Error::WrongType(_) => "wrong_type",
            Error::BadArgument(_) => "bad_argument",
            Error::CostExceedsBurst { .. } => "cost_exceeds_burst",
            Error::BadReply { .. } => "bad_reply",
            Error::CrossSlot { .. } => "cross_slot",
            Error::Server { .. } => "server_error",
            Error::Connection(_) => "connection",
            Error::Tls(_) => "tls",
            Error::NotReplicated { .. } => "not_replicated",
            Error::Client(_) => "client",
        }
    }

    /// Why a call was retried, for `redis_atomic_retries_total{reason}`: the server's refusal
    /// code in lower case (`busy`, `readonly`, `moved`, `ask`, `tryagain`, ...), `timeout`, or
    /// the error's [`Error::label`].
    pub(crate) fn reason(&self) -> String {
        match self {
            Error::Rejected { code, .. } => code.to_ascii_lowercase(),
            Error::OutcomeUnknown {
                timed_out: true, ..
            } => "timeout".into(),
            other => other.label().into(),
        }
    }

    /// Classifies an error the `redis` crate returned for a request that was handed to a
    /// connection: a refused connection means nothing was sent, a server's error code is
    /// classified by its code, and anything else — a timeout, a broken or closed stream, a
    /// reply that does not parse — may have run ([`Error::OutcomeUnknown`]).
    pub(crate) fn from_redis(err: RedisError) -> Error {
        if err.is_connection_refusal() || err.kind() == redis::ErrorKind::ClusterConnectionNotFound
        {
            return Error::NotSent(err);
        }
        if let Some(code) = err.code().map(str::to_string) {
            let message = err.detail().unwrap_or_default().to_string();
            return Self::from_code(code, message);
        }
        let reason = if err.kind() == redis::ErrorKind::Parse {
            format!("the reply could not be parsed ({err}); the connection is discarded")
        } else {
            err.to_string()
        };
        Error::OutcomeUnknown {
            reason,
            attempts: 1,
            timed_out: err.is_timeout(),
            retry_safe: false,
        }
    }

    /// Classifies a server error reply by its code. The message is read in one case only: our
    /// own scripts' refusal of an argument, `ERR redis-atomic: ...` (the scripts' documented
    /// protocol, see docs/scripts.md), which is [`Error::BadArgument`].
    pub fn from_server_error(code: &str, message: &str) -> Error {
        Self::from_code(code.to_string(), message.to_string())
    }

    /// Marks an unknown outcome as retry-safe or not, for the call that failed (see
    /// [`Error::retry_safe`]); other errors are returned as they are.
    pub(crate) fn retry_safe_if(self, safe: bool) -> Error {
        match self {
            Error::OutcomeUnknown {
                reason,
                attempts,
                timed_out,
                ..
            } => Error::OutcomeUnknown {
                reason,
                attempts,
                timed_out,
                retry_safe: safe,
            },
            other => other,
        }
    }

    /// [`Error::from_server_error`] on owned strings.
    pub(crate) fn from_code(code: String, message: String) -> Error {
        if TRANSIENT.contains(&code.as_str()) || REFUSED.contains(&code.as_str()) {
            return Error::Rejected { code, message };
        }
        match code.as_str() {
            "WRONGTYPE" => Error::WrongType(message),
            "CROSSSLOT" => Error::CrossSlot { slots: Vec::new() },
            "ERR" if message.starts_with("redis-atomic:") => Error::BadArgument(
                message
                    .trim_start_matches("redis-atomic:")
                    .trim()
                    .to_string(),
            ),
            _ => Error::Server { code, message },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Codes, not messages, decide the class.
    #[test]
    fn classify_codes() {
        let e = Error::from_code("BUSY".into(), "Redis is busy running a script".into());
        assert!(e.is_transient() && e.nothing_ran());
        let e = Error::from_code("OOM".into(), "command not allowed".into());
        assert!(!e.is_transient() && e.nothing_ran());
        assert!(matches!(
            Error::from_code("WRONGTYPE".into(), "x".into()),
            Error::WrongType(_)
        ));
        assert!(matches!(
            Error::from_code("ERR".into(), "redis-atomic: ttl_ms must be".into()),
            Error::BadArgument(m) if m == "ttl_ms must be"
        ));
        assert!(matches!(
            Error::from_code("ERR".into(), "user_script:1: boom".into()),
            Error::Server { .. }
        ));
    }

    /// After a request was handed to a connection, whatever is not a server's code may have
    /// run: a parse error, a closed stream, a client-side failure of the `redis` crate; only a
    /// refused connection surely sent nothing.
    #[test]
    fn sent_requests_that_fail_may_have_run() {
        use redis::ErrorKind;
        let parse = redis::parse_redis_value(b"?garbage\r\n").unwrap_err();
        assert_eq!(parse.kind(), ErrorKind::Parse);
        let closed = RedisError::from(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        let internal = RedisError::from((ErrorKind::Client, "internal failure"));
        for err in [parse, closed, internal] {
            let e = Error::from_redis(err);
            assert!(e.is_outcome_unknown() && !e.nothing_ran(), "{e:?}");
            assert!(e.ran_unseen());
        }
        let refused = RedisError::from(std::io::Error::from(std::io::ErrorKind::ConnectionRefused));
        assert!(Error::from_redis(refused).nothing_ran());
        let bad = Error::BadReply {
            script: "s",
            detail: "d".into(),
        };
        assert!(bad.ran_unseen() && !bad.nothing_ran() && !bad.is_outcome_unknown());
    }
}
