//! The one tokio runtime of a process, and the one bridge from a library future to Python.
//!
//! **One runtime per process, created lazily.** The first client built in a process creates a
//! multi-thread runtime; every later one shares it. A forked child inherits the parent's memory
//! but none of its threads, so the parent's runtime is dead there: the runtime is keyed by the
//! process id, a child's first client creates a fresh one, and the parent's is leaked (its
//! threads do not exist to be joined). A client remembers the process that created it
//! ([`Bridge`]) and refuses to run in another ([`Error::UsedAfterFork`]): its connections were
//! the parent's sockets, shared with the parent after the fork.
//!
//! **Blocking calls** run the future with `Runtime::block_on` on the calling thread with the GIL
//! released (`Python::detach`), so other Python threads run meanwhile; every call is bounded by
//! the client's timeout and retry policy.
//!
//! **Async calls** spawn the future on the runtime and hand asyncio a future that the event
//! loop's own thread resolves when it finishes ([`crate::sink`]). Cancelling the asyncio task
//! cancels only that asyncio future: **the operation keeps running to its end** (its result is
//! discarded). A request already handed to the server cannot be
//! recalled anyway; finishing it means the library's retry loop, `NOSCRIPT` recovery and
//! connection replacement never stop half-way, and (for the lease primitives to come) a guard
//! granted to a cancelled task can be released by the binding instead of expiring.

use crate::errors::{Error, Failure};
use pyo3::prelude::*;
use pyo3::IntoPyObjectExt;
use std::future::Future;
use std::sync::Mutex;
use tokio::runtime::Runtime;

/// The runtime of the process that created it: `(pid, runtime)`.
static CURRENT: Mutex<Option<(u32, &'static Runtime)>> = Mutex::new(None);

/// This process's runtime, created on first use (after a fork: a fresh one for the child).
pub(crate) fn runtime() -> Result<&'static Runtime, Error> {
    let pid = std::process::id();
    let mut current = CURRENT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((owner, rt)) = *current {
        if owner == pid {
            return Ok(rt);
        }
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("redis-atomic")
        .build()
        .map_err(|e| Error::Runtime(e.to_string()))?;
    // Leaked on purpose: one per process (per fork), alive as long as the process.
    let rt: &'static Runtime = Box::leak(Box::new(rt));
    *current = Some((pid, rt));
    Ok(rt)
}

/// How a native object answers: a value (blocking) or an asyncio awaitable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Block the calling thread (GIL released) until the value is there.
    Blocking,
    /// Return an asyncio future of the value.
    Async,
}

/// The runtime a client was created on, and the process that created it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bridge {
    pid: u32,
    rt: &'static Runtime,
    pub(crate) mode: Mode,
}

impl Bridge {
    /// Bound to this process's runtime.
    pub(crate) fn current(mode: Mode) -> Result<Bridge, Error> {
        Ok(Bridge {
            pid: std::process::id(),
            rt: runtime()?,
            mode,
        })
    }

    /// The runtime, unless this process is not the one the client was created in.
    fn check(&self) -> Result<&'static Runtime, Error> {
        if std::process::id() != self.pid {
            return Err(Error::UsedAfterFork);
        }
        Ok(self.rt)
    }

    /// Runs `fut` the way this object answers: the converted value, or an awaitable of it.
    /// `retry_safe` says whether resending this very call after an unknown outcome is safe (it
    /// becomes `OutcomeUnknown.retry_safe`).
    pub(crate) fn run<F, T>(&self, py: Python<'_>, retry_safe: bool, fut: F) -> PyResult<Py<PyAny>>
    where
        F: Future<Output = Result<T, redis_atomic::Error>> + Send + 'static,
        T: for<'py> IntoPyObject<'py> + Send + 'static,
    {
        let rt = self.check().map_err(|e| e.into_py(py))?;
        let fut = async move { fut.await.map_err(|e| Error::Library(e, retry_safe)) };
        match self.mode {
            Mode::Blocking => {
                let out = py.detach(|| rt.block_on(fut));
                Failure(out).into_py_any(py)
            }
            Mode::Async => crate::sink::spawn(py, rt, fut),
        }
    }
}
