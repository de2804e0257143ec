//! Metrics and tracing: one contract for every primitive, recorded on the one call path.
//!
//! Every operation — a script call or a command a primitive sends itself (dedup's `SET`, CAS's
//! `EXEC`, ...) — runs through the client's one call path, which records (the `metrics` facade:
//! install any recorder, e.g. `metrics-exporter-prometheus`):
//!
//! | metric | kind | labels |
//! |---|---|---|
//! | `redis_atomic_ops_total` | counter | `primitive, op, script, version, outcome` |
//! | `redis_atomic_op_seconds` | histogram | `primitive, op, script, version` |
//! | `redis_atomic_retries_total` | counter | `primitive, op, script, version, reason` |
//! | `redis_atomic_timeouts_total` | counter | `primitive, op, script, version` |
//! | `redis_atomic_outcome_unknown_total` | counter | `primitive, op, script, version` |
//! | `redis_atomic_errors_total` | counter | `primitive, op, script, version, kind` |
//! | `redis_atomic_noscript_reloads_total` | counter | `script, version` |
//! | `redis_atomic_server_warnings_total` | counter | `check` |
//! | `redis_atomic_batch_size` | histogram | — |
//!
//! * `primitive`: the module the operation belongs to, named as the module is (`lock`,
//!   `semaphore`, `idempotency`, `queue`, `ratelimit`, `quota`, `fenced`, `cas`, `multi`,
//!   `dedup`; a user's script: its name's prefix);
//! * `outcome`: the reply's status word (`acquired`, `held`, `extended`, `lost`, ...) or the
//!   error's [`Error::label`] (`outcome_unknown`, `rejected`, ...); the watchdog of a lease
//!   (`op="watchdog"`) counts `lost` and `lost_unconfirmed`;
//! * `reason`: why an attempt was retried: the server's refusal code (`busy`, `readonly`,
//!   `moved`, `ask`, `tryagain`, `clusterdown`, `loading`, ...), `timeout`, `not_sent`,
//!   `outcome_unknown`, or `conflict` (an optimistic transaction aborted); `noscript` reloads
//!   are counted on their own;
//! * `kind`: what a failed call ended with: for server errors and refusals the server's code in
//!   lower case (`err`, `noperm`, `oom`, `busy`, ...), otherwise the error's label (`wrong_type`,
//!   `bad_argument`, `bad_reply`, `outcome_unknown`, ...);
//! * `check`: a server setting a connecting client found unsafe for the primitives
//!   (`maxmemory-policy`: an evicting policy with a memory limit, see [`crate::doctor`]);
//! * `redis_atomic_batch_size`: decisions per server call of a batchable script (1 for a
//!   decision that went alone; see [`crate::Batching`]), the one metric recorded per call rather
//!   than per decision;
//! * `script`, `version`: the script (`lock_acquire`, `2`), or for a command a primitive sends
//!   itself, the command in lower case (`set_nx_get`, `get`) and `-`.
//!
//! Tracing: each operation runs in a `redis_atomic` span (debug level) with the same fields and
//! `tag`, and ends with one debug event (target `redis_atomic::op`) carrying `outcome`,
//! `latency_us` and `attempts`. Keys and tokens never appear: `tag` is an 8-hex-digit hash of
//! the key's hash tag, and errors carry slots, not keys.

use crate::keys::hash_tag;
use crate::script::ScriptDef;
use crate::Error;
use std::time::Duration;

/// `redis_atomic_ops_total`.
pub const OPS_TOTAL: &str = "redis_atomic_ops_total";
/// `redis_atomic_op_seconds`.
pub const OP_SECONDS: &str = "redis_atomic_op_seconds";
/// `redis_atomic_retries_total`.
pub const RETRIES_TOTAL: &str = "redis_atomic_retries_total";
/// `redis_atomic_timeouts_total`.
pub const TIMEOUTS_TOTAL: &str = "redis_atomic_timeouts_total";
/// `redis_atomic_outcome_unknown_total`.
pub const OUTCOME_UNKNOWN_TOTAL: &str = "redis_atomic_outcome_unknown_total";
/// `redis_atomic_errors_total`.
pub const ERRORS_TOTAL: &str = "redis_atomic_errors_total";
/// `redis_atomic_noscript_reloads_total`.
pub const NOSCRIPT_RELOADS_TOTAL: &str = "redis_atomic_noscript_reloads_total";

/// `redis_atomic_server_warnings_total`.
pub const SERVER_WARNINGS_TOTAL: &str = "redis_atomic_server_warnings_total";
/// `redis_atomic_batch_size`.
pub const BATCH_SIZE: &str = "redis_atomic_batch_size";

/// What an operation is, for metrics, spans and events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Op {
    /// The primitive (`lock`).
    pub primitive: &'static str,
    /// The operation (`acquire`).
    pub op: &'static str,
    /// The script (`lock_acquire`) or command (`set_nx_get`).
    pub script: &'static str,
    /// The script's version; 0 for a command.
    pub version: u32,
}

impl Op {
    /// The operation a script performs.
    pub fn script(def: &ScriptDef) -> Op {
        Op {
            primitive: def.primitive(),
            op: def.op(),
            script: def.name,
            version: def.version,
        }
    }

    /// An operation a primitive performs with its own commands.
    pub const fn command(primitive: &'static str, op: &'static str, command: &'static str) -> Op {
        Op {
            primitive,
            op,
            script: command,
            version: 0,
        }
    }

    fn version_label(&self) -> String {
        match self.version {
            0 => "-".to_string(),
            v => v.to_string(),
        }
    }
}

/// A short, stable, non-reversible label for a key: SHA1 of its hash tag, 8 hex digits.
pub(crate) fn tag_hash(key: &str) -> String {
    let tag = hash_tag(key.as_bytes());
    sha1_smol::Sha1::from(tag).digest().to_string()[..8].to_string()
}

/// The span an operation runs in (debug level; the tag is hashed only when it is enabled).
pub(crate) fn span(op: &Op, key: Option<&str>) -> tracing::Span {
    let span = tracing::debug_span!(
        "redis_atomic",
        primitive = op.primitive,
        op = op.op,
        script = op.script,
        version = op.version,
        tag = tracing::field::Empty
    );
    if !span.is_disabled() {
        if let Some(key) = key {
            span.record("tag", tag_hash(key).as_str());
        }
    }
    span
}

/// Records one retried attempt: after `err`, or after a conflict (`None`: an aborted `EXEC`).
pub(crate) fn retry(op: &Op, err: Option<&Error>) {
    let version = op.version_label();
    let reason = err.map_or_else(|| "conflict".to_string(), Error::reason);
    metrics::counter!(RETRIES_TOTAL, "primitive" => op.primitive, "op" => op.op,
        "script" => op.script, "version" => version.clone(), "reason" => reason.clone())
    .increment(1);
    if err.is_some_and(is_timeout) {
        metrics::counter!(TIMEOUTS_TOTAL, "primitive" => op.primitive, "op" => op.op,
            "script" => op.script, "version" => version)
        .increment(1);
    }
    tracing::debug!(target: "redis_atomic::op", reason = %reason, "retrying");
}

fn is_timeout(err: &Error) -> bool {
    matches!(
        err,
        Error::OutcomeUnknown {
            timed_out: true,
            retry_safe: false,
            ..
        }
    )
}

/// Records a finished operation: count by outcome, latency, unknowns, timeouts and errors, and
/// one debug event.
pub(crate) fn finished(op: &Op, outcome: Result<&str, &Error>, elapsed: Duration, attempts: u32) {
    let version = op.version_label();
    let label = match outcome {
        Ok(status) => status.to_string(),
        Err(err) => err.label().to_string(),
    };
    if let Err(err) = outcome {
        if err.is_outcome_unknown() {
            metrics::counter!(OUTCOME_UNKNOWN_TOTAL, "primitive" => op.primitive, "op" => op.op,
                "script" => op.script, "version" => version.clone())
            .increment(1);
        }
        if is_timeout(err) {
            metrics::counter!(TIMEOUTS_TOTAL, "primitive" => op.primitive, "op" => op.op,
                "script" => op.script, "version" => version.clone())
            .increment(1);
        }
        metrics::counter!(ERRORS_TOTAL, "primitive" => op.primitive, "op" => op.op,
            "script" => op.script, "version" => version.clone(), "kind" => error_kind(err))
        .increment(1);
    }
    metrics::counter!(OPS_TOTAL, "primitive" => op.primitive, "op" => op.op,
        "script" => op.script, "version" => version.clone(), "outcome" => label.clone())
    .increment(1);
    metrics::histogram!(OP_SECONDS, "primitive" => op.primitive, "op" => op.op,
        "script" => op.script, "version" => version)
    .record(elapsed.as_secs_f64());
    tracing::debug!(
        target: "redis_atomic::op",
        outcome = %label,
        latency_us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX),
        attempts,
        "operation"
    );
}

/// `kind` of `redis_atomic_errors_total`: the server's code in lower case, or the label.
fn error_kind(err: &Error) -> String {
    match err {
        Error::Server { code, .. } | Error::Rejected { code, .. } => code.to_ascii_lowercase(),
        other => other.label().to_string(),
    }
}

/// Records a server setting found unsafe when a client connected ([`crate::doctor`]).
pub(crate) fn server_warning(check: &'static str) {
    metrics::counter!(SERVER_WARNINGS_TOTAL, "check" => check).increment(1);
}

/// Records a `NOSCRIPT` (or missing Function) reload.
pub(crate) fn noscript(def: &ScriptDef) {
    metrics::counter!(NOSCRIPT_RELOADS_TOTAL, "script" => def.name, "version" => def.version.to_string())
        .increment(1);
}
