//! Metrics and tracing: one contract for every primitive.
//!
//! Metric names (the `metrics` facade; install any recorder):
//! * `redis_atomic_ops_total{primitive,op,outcome}`: outcome is the script's status word
//!   (`acquired`, `held`, ...) or an error label (`outcome_unknown`, `rejected`, ...);
//! * `redis_atomic_op_seconds{primitive,op}`: histogram, retries included;
//! * `redis_atomic_retries_total{primitive,op,reason}`;
//! * `redis_atomic_noscript_reloads_total{script}`;
//! * `redis_atomic_outcome_unknown_total{primitive,op}`.
//!
//! Keys and tokens never appear: spans carry an 8-hex-digit hash of the key's hash tag.

use crate::script::ScriptDef;
use crate::Error;
use redis::Value;
use std::time::Duration;

/// `redis_atomic_ops_total`.
pub const OPS_TOTAL: &str = "redis_atomic_ops_total";
/// `redis_atomic_op_seconds`.
pub const OP_SECONDS: &str = "redis_atomic_op_seconds";
/// `redis_atomic_retries_total`.
pub const RETRIES_TOTAL: &str = "redis_atomic_retries_total";
/// `redis_atomic_noscript_reloads_total`.
pub const NOSCRIPT_RELOADS_TOTAL: &str = "redis_atomic_noscript_reloads_total";
/// `redis_atomic_outcome_unknown_total`.
pub const OUTCOME_UNKNOWN_TOTAL: &str = "redis_atomic_outcome_unknown_total";

/// A short, stable, non-reversible label for a key: SHA1 of its hash tag, 8 hex digits.
pub fn tag_hash(key: &str) -> String {
    let tag = key
        .split_once('{')
        .and_then(|(_, rest)| rest.split_once('}'))
        .map_or(key, |(tag, _)| tag);
    sha1_smol::Sha1::from(tag).digest().to_string()[..8].to_string()
}

pub(crate) fn span(def: &ScriptDef, key: Option<&str>) -> tracing::Span {
    let span = tracing::debug_span!(
        "redis_atomic",
        primitive = def.primitive(),
        op = def.op(),
        tag = tracing::field::Empty
    );
    if !span.is_disabled() {
        if let Some(key) = key {
            span.record("tag", tag_hash(key).as_str());
        }
    }
    span
}

pub(crate) fn record(def: &ScriptDef, result: &Result<Value, Error>, elapsed: Duration) {
    let outcome = match result {
        Ok(value) => status_word(value).unwrap_or("ok").to_string(),
        Err(err) => err.label().to_string(),
    };
    if matches!(result, Err(Error::OutcomeUnknown { .. })) {
        metrics::counter!(OUTCOME_UNKNOWN_TOTAL, "primitive" => def.primitive(), "op" => def.op())
            .increment(1);
    }
    metrics::counter!(OPS_TOTAL, "primitive" => def.primitive(), "op" => def.op(), "outcome" => outcome)
        .increment(1);
    metrics::histogram!(OP_SECONDS, "primitive" => def.primitive(), "op" => def.op())
        .record(elapsed.as_secs_f64());
}

pub(crate) fn retry(def: &ScriptDef, err: &Error) {
    metrics::counter!(RETRIES_TOTAL, "primitive" => def.primitive(), "op" => def.op(), "reason" => err.label())
        .increment(1);
}

pub(crate) fn noscript(def: &ScriptDef) {
    metrics::counter!(NOSCRIPT_RELOADS_TOTAL, "script" => def.name).increment(1);
}

/// The status word a script returns first (`{'acquired', ...}` → `acquired`).
pub fn status_word(value: &Value) -> Option<&str> {
    match value {
        Value::Array(items) => match items.first()? {
            Value::BulkString(b) => std::str::from_utf8(b).ok(),
            Value::SimpleString(s) => Some(s),
            _ => None,
        },
        _ => None,
    }
}
