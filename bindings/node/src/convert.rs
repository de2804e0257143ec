//! JavaScript numbers, durations and reply values to and from the library's types.
//!
//! **Durations are milliseconds as `number`**, everywhere, in and out (`timeoutMs`, `periodMs`,
//! `retryAfterMs`): what `setTimeout`, `AbortSignal.timeout` and `Date.now()` use. Fractions are
//! allowed and kept to the microsecond (the library's resolution: a GCRA interval of 100 µs is
//! `0.1`); outputs carry fractions too, so round up (`Math.ceil`) for a `Retry-After` header.
//!
//! **Integers are `number`** (counts, costs, bounds, fences): every one the library accepts or
//! returns is below 2^53, so a `number` holds it exactly. A value that is not a finite integer
//! in range is refused here with `BadArgumentError`, never truncated (napi's own `i64`
//! conversion would turn `1.5` into 1 and `NaN` into 0).

use crate::errors::bad;
use napi::bindgen_prelude::{Buffer, Either, Null, Object, ToNapiValue, Unknown};
use napi::Env;
use redis::Value;
use redis_atomic::Error;
use std::time::Duration;

/// Largest magnitude of an integer argument: 2^53 − 1.
pub const MAX_SAFE: f64 = 9_007_199_254_740_991.0;
/// Largest duration accepted, in ms (about 285 years): the library bounds each one far lower.
const MAX_MS: f64 = 9e12;
/// Deepest script reply converted (Lua tables nest at most this deep in practice).
const MAX_DEPTH: usize = 64;

/// `ms` milliseconds as a [`Duration`], to the µs; `what` names it in the error.
pub fn duration(what: &str, ms: f64) -> Result<Duration, Error> {
    if !ms.is_finite() || !(0.0..=MAX_MS).contains(&ms) {
        return Err(bad(format!(
            "{what} must be a finite number of milliseconds in 0..={MAX_MS}, got {ms}"
        )));
    }
    Ok(Duration::from_micros((ms * 1000.0).round() as u64))
}

/// An optional duration.
pub fn opt_duration(what: &str, ms: Option<f64>) -> Result<Option<Duration>, Error> {
    ms.map(|ms| duration(what, ms)).transpose()
}

/// A [`Duration`] as milliseconds (fractions to the µs).
pub fn ms(d: Duration) -> f64 {
    d.as_micros() as f64 / 1000.0
}

/// `n` as an integer within ±(2^53 − 1).
pub fn int(what: &str, n: f64) -> Result<i64, Error> {
    if !n.is_finite() || n.fract() != 0.0 || n.abs() > MAX_SAFE {
        return Err(bad(format!(
            "{what} must be an integer within ±(2^53 - 1), got {n}"
        )));
    }
    Ok(n as i64)
}

/// `n` as a non-negative integer below 2^53.
pub fn uint(what: &str, n: f64) -> Result<u64, Error> {
    let i = int(what, n)?;
    u64::try_from(i).map_err(|_| bad(format!("{what} must not be negative, got {n}")))
}

/// A count the library returns (always below 2^53) as a `number`.
pub fn num(n: u64) -> f64 {
    n as f64
}

/// Bytes from a string (UTF-8) or a `Buffer`.
pub fn bytes(v: &Either<String, Buffer>) -> Vec<u8> {
    match v {
        Either::A(s) => s.as_bytes().to_vec(),
        Either::B(b) => b.to_vec(),
    }
}

/// A script reply as a JavaScript value: `null` for nil; numbers (a `bigint` beyond 2^53);
/// strings for valid UTF-8, `Buffer`s otherwise; arrays; objects for RESP3 maps with string
/// keys (arrays of `[key, value]` pairs otherwise); booleans; a `ServerError` nested in an
/// array as an `Error` value. Check [`too_deep`] first (off the JavaScript thread).
pub fn reply<'env>(env: &'env Env, value: Value) -> napi::Result<Unknown<'env>> {
    reply_at(env, value, 0)
}

/// Whether `value` nests deeper than [`MAX_DEPTH`] levels (then it is refused as `BadReply`
/// rather than converted: the conversion recurses).
pub fn too_deep(value: &Value) -> bool {
    fn depth(value: &Value, at: usize) -> bool {
        if at > MAX_DEPTH {
            return true;
        }
        match value {
            Value::Array(items) | Value::Set(items) => items.iter().any(|v| depth(v, at + 1)),
            Value::Map(pairs) => pairs
                .iter()
                .any(|(k, v)| depth(k, at + 1) || depth(v, at + 1)),
            Value::Attribute { data, .. } => depth(data, at + 1),
            _ => false,
        }
    }
    depth(value, 0)
}

fn reply_at<'env>(env: &'env Env, value: Value, depth: usize) -> napi::Result<Unknown<'env>> {
    if depth > MAX_DEPTH {
        return Err(napi::Error::from_reason("script reply nested too deep"));
    }
    let next = depth + 1;
    match value {
        Value::Nil => Null.into_unknown(env),
        Value::Int(n) if (n as f64).abs() <= MAX_SAFE => (n as f64).into_unknown(env),
        Value::Int(n) => napi::bindgen_prelude::BigInt::from(n).into_unknown(env),
        Value::BulkString(b) => text_or_buffer(env, b),
        Value::SimpleString(s) => s.into_unknown(env),
        Value::Okay => "OK".into_unknown(env),
        Value::VerbatimString { text, .. } => text.into_unknown(env),
        Value::Double(d) => d.into_unknown(env),
        Value::Boolean(b) => b.into_unknown(env),
        Value::BigNumber(n) => String::from_utf8_lossy(&n).into_owned().into_unknown(env),
        Value::Array(items) | Value::Set(items) => array(env, items, next),
        Value::Map(pairs) => map(env, pairs, next),
        Value::Attribute { data, .. } => reply_at(env, *data, next),
        Value::ServerError(e) => {
            let message = format!("{}: {}", e.code(), e.details().unwrap_or_default());
            env.create_error(napi::Error::from_reason(message))?
                .into_unknown(env)
        }
        // Pushes never come back from a script; anything newer is passed on as text.
        other => format!("{other:?}").into_unknown(env),
    }
}

fn text_or_buffer(env: &Env, b: Vec<u8>) -> napi::Result<Unknown<'_>> {
    match String::from_utf8(b) {
        Ok(s) => s.into_unknown(env),
        Err(e) => Buffer::from(e.into_bytes()).into_unknown(env),
    }
}

fn array(env: &Env, items: Vec<Value>, depth: usize) -> napi::Result<Unknown<'_>> {
    let len = u32::try_from(items.len()).map_err(|e| napi::Error::from_reason(e.to_string()))?;
    let mut out = env.create_array(len)?;
    for (i, item) in (0..len).zip(items) {
        out.set(i, reply_at(env, item, depth)?)?;
    }
    out.into_unknown(env)
}

fn map(env: &Env, pairs: Vec<(Value, Value)>, depth: usize) -> napi::Result<Unknown<'_>> {
    let keys: Option<Vec<String>> = pairs
        .iter()
        .map(|(k, _)| match k {
            Value::BulkString(b) => String::from_utf8(b.clone()).ok(),
            Value::SimpleString(s) => Some(s.clone()),
            _ => None,
        })
        .collect();
    let Some(keys) = keys else {
        let items = pairs
            .into_iter()
            .map(|(k, v)| Value::Array(vec![k, v]))
            .collect();
        return array(env, items, depth);
    };
    let mut out = Object::new(env)?;
    for (key, (_, v)) in keys.iter().zip(pairs) {
        out.set(key, reply_at(env, v, depth)?)?;
    }
    out.into_unknown(env)
}
