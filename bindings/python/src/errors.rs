//! The library's errors as Python exceptions, keeping what a retry would do.
//!
//! The classes live in Python (`redis_atomic/_errors.py`: one hierarchy under
//! `RedisAtomicError`, each with a stable `code` and `nothing_ran`), so they are ordinary,
//! picklable, typed exception classes; this module only maps [`redis_atomic::Error`] onto them,
//! with the GIL held, in one place ([`Error::into_py`]). Whether resending a call after an
//! unknown outcome is safe depends on the call, not on the error: each binding says so
//! ([`crate::runtime::Bridge::run`]'s `retry_safe`) and it becomes `OutcomeUnknown.retry_safe`.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyModule};
use pyo3::IntoPyObjectExt;

/// What a binding call can fail with.
#[derive(Debug)]
pub(crate) enum Error {
    /// The library's error, and whether resending the same call is safe.
    Library(redis_atomic::Error, bool),
    /// A client used in a process other than the one that created it (after `os.fork()`).
    UsedAfterFork,
    /// The runtime could not be created (no threads?).
    Runtime(String),
    /// The task running a call ended without an answer (it panicked).
    Task(String),
    /// A folder of scripts could not be loaded.
    Folder(String),
    /// A lease handle whose end verb already ran (or that a watchdog holds) was used again.
    Ended(String),
}

/// What a call's future may fail with, and how it becomes an [`Error`]: a library error learns
/// whether resending the call is safe; the binding's own errors are already complete.
pub(crate) trait IntoError {
    fn into_error(self, retry_safe: bool) -> Error;
}

impl IntoError for redis_atomic::Error {
    fn into_error(self, retry_safe: bool) -> Error {
        Error::Library(self, retry_safe)
    }
}

impl IntoError for Error {
    fn into_error(self, retry_safe: bool) -> Error {
        match self {
            Error::Library(e, _) => Error::Library(e, retry_safe),
            other => other,
        }
    }
}

impl From<redis_atomic::Error> for Error {
    /// Errors raised before anything is sent (argument checks): a resend is as safe as the call.
    fn from(e: redis_atomic::Error) -> Self {
        Error::Library(e, false)
    }
}

/// A library error raised in a `#[pymethods]` body (argument checks before anything is sent).
pub(crate) fn raise(e: redis_atomic::Error) -> PyErr {
    Python::attach(|py| Error::from(e).into_py(py))
}

/// The result of a call on its way to Python: the value, or the exception raised by converting
/// it (so an async call's error becomes the asyncio future's exception).
pub(crate) struct Failure<T>(pub(crate) Result<T, Error>);

impl<'py, T: IntoPyObject<'py>> IntoPyObject<'py> for Failure<T> {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self.0 {
            Ok(v) => v.into_bound_py_any(py),
            Err(e) => Err(e.into_py(py)),
        }
    }
}

/// `redis_atomic._errors`, imported once.
fn errors(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    MODULE
        .get_or_try_init(py, || {
            PyModule::import(py, "redis_atomic._errors").map(Bound::unbind)
        })
        .map(|m| m.bind(py))
}

impl Error {
    /// The Python exception for this error.
    pub(crate) fn into_py(self, py: Python<'_>) -> PyErr {
        match self.build(py) {
            Ok(e) => e,
            Err(e) => e,
        }
    }

    fn build(self, py: Python<'_>) -> PyResult<PyErr> {
        let kw = PyDict::new(py);
        let (class, message) = match self {
            Error::Library(e, retry_safe) => {
                let message = e.to_string();
                kw.set_item("nothing_ran", e.nothing_ran())?;
                (library_class(&e, retry_safe, &kw)?, message)
            }
            Error::UsedAfterFork => (
                "UsedAfterFork",
                "this client was created in another process (before os.fork()): its \
                 connections belong to the parent; create clients after forking"
                    .to_string(),
            ),
            Error::Runtime(m) => ("ClientError", format!("could not start the runtime: {m}")),
            Error::Task(m) => ("ClientError", format!("the call's task failed: {m}")),
            Error::Folder(m) => ("ScriptFolderError", m),
            Error::Ended(m) => ("LeaseEnded", m),
        };
        let class = errors(py)?.getattr(class)?;
        let exc = class.call((message,), Some(&kw))?;
        Ok(PyErr::from_value(exc))
    }
}

/// The class of a library error, with its attributes put in `kw`.
fn library_class(
    e: &redis_atomic::Error,
    retry_safe: bool,
    kw: &Bound<'_, PyDict>,
) -> PyResult<&'static str> {
    use redis_atomic::Error as E;
    Ok(match e {
        E::NotSent(_) => "NotSent",
        E::Rejected { code, .. } => {
            kw.set_item("server_code", code)?;
            "Rejected"
        }
        E::OutcomeUnknown {
            reason,
            attempts,
            timed_out,
            ..
        } => {
            kw.set_item("reason", reason)?;
            kw.set_item("attempts", attempts)?;
            kw.set_item("timed_out", timed_out)?;
            kw.set_item("retry_safe", retry_safe)?;
            "OutcomeUnknown"
        }
        E::WrongType(_) => "WrongType",
        E::BadArgument(_) => "BadArgument",
        E::CostExceedsBurst { cost, burst } => {
            kw.set_item("cost", cost)?;
            kw.set_item("burst", burst)?;
            "CostExceedsBurst"
        }
        E::BadReply { script, detail } => {
            kw.set_item("script", script)?;
            kw.set_item("detail", detail)?;
            "BadReply"
        }
        E::CrossSlot { slots } => {
            kw.set_item("slots", slots.clone())?;
            "CrossSlot"
        }
        E::Server { code, .. } => {
            kw.set_item("server_code", code)?;
            "ServerError"
        }
        E::Connection(_) => "ConnectionError",
        E::Tls(_) => "TlsError",
        E::Client(_) => "ClientError",
        E::NotReplicated { acked, wanted } => {
            kw.set_item("acked", acked)?;
            kw.set_item("wanted", wanted)?;
            "NotReplicated"
        }
        other => {
            kw.set_item("code", other.label())?;
            "RedisAtomicError"
        }
    })
}
