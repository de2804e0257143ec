//! Python values in and out, in one place: durations, bounded integers, script arguments and
//! replies.
//!
//! **Durations.** In: a `datetime.timedelta` or a number of seconds (`int` or `float`); out:
//! `float` seconds, everywhere. A negative, NaN or infinite number, a bool, or a value too large
//! for a `Duration` is [`redis_atomic::Error::BadArgument`] (a `ValueError`); other types are a
//! `TypeError`. The library then checks each duration against its own bounds (≥ 1 ms, ...).
//!
//! **Integers** declared unsigned (costs, limits) arrive as Python ints of any size: out of
//! range is `BadArgument`, never an `OverflowError` or a wrapped value.
//!
//! **Answers.** Each library answer goes out as one of the binding's classes through
//! [`to_python!`], which writes pyo3's `IntoPyObject` once: an answer type states only which
//! class each library value becomes.

use crate::errors::bad;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDelta, PyDeltaAccess, PyFloat, PyInt, PyString};
use std::time::Duration;

/// `IntoPyObject` for an answer on its way to Python as any Python object:
/// `to_python!(Type, |value, py| body)`, `body` a `PyResult<Bound<'py, PyAny>>` made from
/// `value` (with `IntoPyObjectExt` in scope: `.into_bound_py_any(py)`).
macro_rules! to_python {
    ($ty:ty, |$this:ident, $py:ident| $body:expr) => {
        impl<'py> pyo3::IntoPyObject<'py> for $ty {
            type Target = pyo3::PyAny;
            type Output = pyo3::Bound<'py, pyo3::PyAny>;
            type Error = pyo3::PyErr;

            fn into_pyobject(self, $py: pyo3::Python<'py>) -> pyo3::PyResult<Self::Output> {
                #[allow(unused_imports)]
                use pyo3::IntoPyObjectExt as _;
                let $this = self;
                $body
            }
        }
    };
}

pub(crate) use to_python;

/// A duration from a `timedelta` or seconds. `what` names it in errors.
pub(crate) fn duration(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Duration> {
    if let Ok(delta) = obj.cast::<PyDelta>() {
        let days = i64::from(delta.get_days());
        let secs = days * 86_400 + i64::from(delta.get_seconds());
        let micros = u32::try_from(delta.get_microseconds()).unwrap_or(0);
        let secs = u64::try_from(secs).map_err(|_| bad(format!("{what} must not be negative")))?;
        return Ok(Duration::from_secs(secs) + Duration::from_micros(u64::from(micros)));
    }
    if obj.is_instance_of::<PyBool>()
        || !(obj.is_instance_of::<PyInt>() || obj.is_instance_of::<PyFloat>())
    {
        return Err(PyTypeError::new_err(format!(
            "{what} must be seconds (int or float) or a datetime.timedelta, got {}",
            obj.get_type().name()?
        )));
    }
    let secs: f64 = obj
        .extract()
        .map_err(|_| bad(format!("{what} is too large")))?;
    Duration::try_from_secs_f64(secs).map_err(|_| {
        bad(format!(
            "{what} must be a finite, non-negative number of seconds, got {secs}"
        ))
    })
}

/// An optional duration (None stays None).
pub(crate) fn opt_duration(
    obj: Option<&Bound<'_, PyAny>>,
    what: &str,
) -> PyResult<Option<Duration>> {
    match obj {
        Some(o) if !o.is_none() => duration(o, what).map(Some),
        _ => Ok(None),
    }
}

/// Seconds as Python sees durations coming back.
pub(crate) fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// An unsigned integer in `0..=u64::MAX` from any Python int.
pub(crate) fn uint(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
    int_of(obj, what)?
        .extract::<u64>()
        .map_err(|_| bad(format!("{what} must be in 0..=2^64-1, got {obj}")))
}

/// A size or count (`usize`, saturating: the library bounds it) from an optional Python int.
pub(crate) fn size(obj: Option<&Bound<'_, PyAny>>, what: &str, default: usize) -> PyResult<usize> {
    match obj.filter(|o| !o.is_none()) {
        Some(o) => Ok(usize::try_from(uint(o, what)?).unwrap_or(usize::MAX)),
        None => Ok(default),
    }
}

/// A signed integer in the range of `i64` from any Python int.
pub(crate) fn int(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<i64> {
    int_of(obj, what)?
        .extract::<i64>()
        .map_err(|_| bad(format!("{what} must be in -2^63..=2^63-1, got {obj}")))
}

fn int_of<'a, 'py>(obj: &'a Bound<'py, PyAny>, what: &str) -> PyResult<&'a Bound<'py, PyAny>> {
    if obj.is_instance_of::<PyBool>() || !obj.is_instance_of::<PyInt>() {
        return Err(PyTypeError::new_err(format!(
            "{what} must be an int, got {}",
            obj.get_type().name()?
        )));
    }
    Ok(obj)
}

/// One script argument or value: `str` (UTF-8), `bytes`, or `int` (sent in decimal).
#[derive(Clone, Debug)]
pub(crate) enum Value {
    /// Bytes (a `str` as UTF-8).
    Bytes(Vec<u8>),
    /// An integer.
    Int(i64),
}

impl Value {
    pub(crate) fn of(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
        if let Ok(s) = obj.cast::<PyString>() {
            return Ok(Value::Bytes(s.to_cow()?.as_bytes().to_vec()));
        }
        if let Ok(b) = obj.cast::<PyBytes>() {
            return Ok(Value::Bytes(b.as_bytes().to_vec()));
        }
        if obj.is_instance_of::<PyInt>() && !obj.is_instance_of::<PyBool>() {
            return int(obj, what).map(Value::Int);
        }
        Err(PyTypeError::new_err(format!(
            "{what} must be str, bytes or int, got {}",
            obj.get_type().name()?
        )))
    }

    /// The library's argument.
    pub(crate) fn arg(&self) -> redis_atomic::Arg<'_> {
        match self {
            Value::Bytes(b) => redis_atomic::Arg::Bytes(b),
            Value::Int(n) => redis_atomic::Arg::Int(*n),
        }
    }

    /// As bytes (an int in decimal).
    pub(crate) fn into_bytes(self) -> Vec<u8> {
        match self {
            Value::Bytes(b) => b,
            Value::Int(n) => n.to_string().into_bytes(),
        }
    }
}

/// A list of strings, bytes or ints from any iterable.
pub(crate) fn values(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<Value>> {
    items(obj, what, Value::of)
}

/// Bytes from a `str` (UTF-8) or `bytes`; anything else (an `int` too) is a `TypeError`, as
/// the stubs say.
pub(crate) fn bytes_of(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<u8>> {
    if obj.is_instance_of::<PyString>() || obj.is_instance_of::<PyBytes>() {
        return Value::of(obj, what).map(Value::into_bytes);
    }
    Err(PyTypeError::new_err(format!(
        "{what} must be str or bytes, got {}",
        obj.get_type().name()?
    )))
}

/// A list of `str` or `bytes` from any iterable, each as UTF-8 text (keys).
pub(crate) fn texts(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<String>> {
    items(obj, what, |item, what| {
        String::from_utf8(bytes_of(item, what)?).map_err(|_| bad(format!("{what} must be UTF-8")))
    })
}

/// A list of `str` only from any iterable (ids and field names).
pub(crate) fn strs(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<String>> {
    items(obj, what, |item, what| {
        item.extract::<String>().map_err(|_| {
            PyTypeError::new_err(format!(
                "{what} must be a list of str, got an item of another type"
            ))
        })
    })
}

/// Each item of an iterable (not a single `str` or `bytes`) converted by `one`.
fn items<T>(
    obj: &Bound<'_, PyAny>,
    what: &str,
    one: impl Fn(&Bound<'_, PyAny>, &str) -> PyResult<T>,
) -> PyResult<Vec<T>> {
    if obj.is_instance_of::<PyString>() || obj.is_instance_of::<PyBytes>() {
        return Err(PyTypeError::new_err(format!(
            "{what} must be a list of values, not a single str or bytes"
        )));
    }
    obj.try_iter()?.map(|item| one(&item?, what)).collect()
}

/// A reply from a server, converted to native values: integers to `int`, bulk strings to
/// `bytes`, status replies to `str`, arrays and sets to `list`, maps to `dict`, nil to `None`,
/// doubles to `float`, booleans to `bool`, verbatim strings to `str`. Depth-limited by the
/// `redis` crate's parser; nothing here allocates by a number in the reply.
pub(crate) struct Reply(pub(crate) redis::Value);

to_python!(Reply, |this, py| reply(py, this.0));

fn reply(py: Python<'_>, value: redis::Value) -> PyResult<Bound<'_, PyAny>> {
    use pyo3::IntoPyObjectExt;
    use redis::Value as V;
    match value {
        V::Nil => Ok(py.None().into_bound(py)),
        V::Int(n) => n.into_bound_py_any(py),
        V::BulkString(b) => PyBytes::new(py, &b).into_bound_py_any(py),
        V::SimpleString(s) => s.into_bound_py_any(py),
        V::Okay => "OK".into_bound_py_any(py),
        V::Double(d) => d.into_bound_py_any(py),
        V::Boolean(b) => b.into_bound_py_any(py),
        V::VerbatimString { text, .. } => text.into_bound_py_any(py),
        V::BigNumber(digits) => py
            .get_type::<PyInt>()
            .call1((String::from_utf8_lossy(&digits).into_owned(),)),
        V::Array(items) | V::Set(items) => {
            let items = items
                .into_iter()
                .map(|v| reply(py, v))
                .collect::<PyResult<Vec<_>>>()?;
            items.into_bound_py_any(py)
        }
        V::Map(pairs) => {
            let dict = pyo3::types::PyDict::new(py);
            for (k, v) in pairs {
                dict.set_item(reply(py, k)?, reply(py, v)?)?;
            }
            dict.into_bound_py_any(py)
        }
        V::Attribute { data, .. } => reply(py, *data),
        V::Push { data, .. } => data
            .into_iter()
            .map(|v| reply(py, v))
            .collect::<PyResult<Vec<_>>>()?
            .into_bound_py_any(py),
        V::ServerError(e) => e.to_string().into_bound_py_any(py),
        other => format!("{other:?}").into_bound_py_any(py),
    }
}
