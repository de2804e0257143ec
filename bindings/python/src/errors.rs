//! The library's errors as Python exceptions, with the facts the library set on them.
//!
//! The classes live in Python (`redis_atomic/_errors.py`: one hierarchy under
//! `RedisAtomicError`), so they are ordinary, picklable, typed exception classes; this module
//! only maps [`redis_atomic::Error`] onto them, with the GIL held, in one place
//! ([`Error::into_py`]). Every fact an exception carries — `code`, `nothing_ran`, `transient`,
//! `timed_out`, `retry_safe` — is the library's answer for that error (`Error::code()`,
//! `nothing_ran()`, ...), never worked out here: the library sets `retry_safe` per call (a lock
//! acquire with the caller's token is retry-safe, one with a random token is not), so each
//! binding method calls the library entry point that carries its rule. The binding's own errors
//! (a closed client, a handle used after its end, a client used after `fork()`) are client-side
//! refusals: nothing ran.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyModule};
use pyo3::IntoPyObjectExt;

/// What a binding call can fail with.
#[derive(Debug)]
pub(crate) enum Error {
    /// The library's error.
    Library(redis_atomic::Error),
    /// A client used in a process other than the one that created it (after `os.fork()`).
    UsedAfterFork,
    /// A client used after `close()` (or a primitive or handle made from it).
    Closed,
    /// The runtime could not be created (no threads?).
    Runtime(String),
    /// The task running a call ended without an answer (it panicked).
    Task(String),
    /// A folder of scripts could not be loaded.
    Folder(String),
    /// A lease handle whose end verb already ran (or that a watchdog holds) was used again.
    Ended(String),
}

impl From<redis_atomic::Error> for Error {
    fn from(e: redis_atomic::Error) -> Self {
        Error::Library(e)
    }
}

/// A library error raised in a `#[pymethods]` body (argument checks before anything is sent).
pub(crate) fn raise(e: redis_atomic::Error) -> PyErr {
    Python::attach(|py| Error::from(e).into_py(py))
}

/// The exception the package raises for a server's error reply `code message`: the library's
/// classification (`Error::from_server_error`), returned, not raised (the conformance vectors
/// check every error reply through it).
#[pyfunction]
pub(crate) fn classify_server_error(py: Python<'_>, code: &str, message: &str) -> Py<PyAny> {
    let e = Error::from(redis_atomic::Error::from_server_error(code, message));
    e.into_py(py).into_value(py).into_any()
}

/// A `BadArgument` raised in a `#[pymethods]` body.
pub(crate) fn bad(message: impl Into<String>) -> PyErr {
    raise(redis_atomic::Error::BadArgument(message.into()))
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
        let (class, code, message) = match self {
            Error::Library(e) => {
                kw.set_item("nothing_ran", e.nothing_ran())?;
                kw.set_item("transient", e.is_transient())?;
                kw.set_item("timed_out", e.timed_out())?;
                kw.set_item("retry_safe", e.retry_safe())?;
                (library_class(&e, &kw)?, e.code(), e.to_string())
            }
            Error::UsedAfterFork => (
                "UsedAfterFork",
                "used_after_fork",
                "this client was created in another process (before os.fork()): its \
                 connections belong to the parent; create clients after forking"
                    .to_string(),
            ),
            Error::Closed => (
                "ClientError",
                "client",
                "the client is closed: connect a new one".to_string(),
            ),
            Error::Runtime(m) => (
                "ClientError",
                "client",
                format!("could not start the runtime: {m}"),
            ),
            Error::Task(m) => {
                // The call may have been sent before its task failed.
                kw.set_item("nothing_ran", false)?;
                kw.set_item("retry_safe", false)?;
                (
                    "ClientError",
                    "client",
                    format!("the call's task failed: {m}"),
                )
            }
            Error::Folder(m) => ("ScriptFolderError", "script_folder", m),
            Error::Ended(m) => ("HandleEnded", "handle_ended", m),
        };
        if !kw.contains("nothing_ran")? {
            // The binding's own refusals: nothing was sent (as the library's `Client` errors).
            kw.set_item("nothing_ran", true)?;
            kw.set_item("retry_safe", true)?;
        }
        kw.set_item("code", code)?;
        let class = errors(py)?.getattr(class)?;
        let exc = class.call((message,), Some(&kw))?;
        Ok(PyErr::from_value(exc))
    }
}

/// The class of a library error, with the fields of its variant put in `kw`.
fn library_class(e: &redis_atomic::Error, kw: &Bound<'_, PyDict>) -> PyResult<&'static str> {
    use redis_atomic::Error as E;
    Ok(match e {
        E::NotSent(_) => "NotSent",
        E::Rejected { code, .. } => {
            kw.set_item("server_code", code)?;
            "Rejected"
        }
        E::OutcomeUnknown {
            reason, attempts, ..
        } => {
            kw.set_item("reason", reason)?;
            kw.set_item("attempts", attempts)?;
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
        // A kind this package does not know by name (a newer library): its code says it.
        _ => "RedisAtomicError",
    })
}
