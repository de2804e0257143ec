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
//! **Async calls** spawn the future on the runtime and return an asyncio future the runtime
//! completes when the call ends ([`crate::completer`]). Cancelling the asyncio task cancels only
//! that asyncio future: **the operation keeps running to its end** (its result is discarded). A
//! request already handed to the server cannot be recalled anyway; finishing it means the
//! library's retry loop, `NOSCRIPT` recovery and connection replacement never stop half-way, and
//! a lease granted to a cancelled task is given back by the binding instead of expiring
//! (`lease.rs`).

use crate::completer::{completer, Completions};
use crate::errors::{Error, Failure};
use pyo3::prelude::*;
use pyo3::IntoPyObjectExt;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
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

/// The runtime a client was created on, the process that created it, and whether the client
/// was closed (shared by every primitive and handle made from it).
#[derive(Clone, Debug)]
pub(crate) struct Bridge {
    pid: u32,
    rt: &'static Runtime,
    /// The completer of an async client's calls (`None` for a blocking client).
    completer: Option<&'static Completions>,
    closed: Arc<AtomicBool>,
    pub(crate) mode: Mode,
}

impl Bridge {
    /// Bound to this process's runtime.
    pub(crate) fn current(mode: Mode) -> Result<Bridge, Error> {
        Ok(Bridge {
            pid: std::process::id(),
            rt: runtime()?,
            completer: match mode {
                Mode::Blocking => None,
                Mode::Async => Some(completer()?),
            },
            closed: Arc::default(),
            mode,
        })
    }

    /// Closes the client: every later call through this bridge (the client's, its primitives',
    /// their handles') raises `ClientError`.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Release);
    }

    /// Whether [`Bridge::close`] ran.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// The runtime, unless this process is not the one the client was created in.
    fn owned(&self) -> Result<&'static Runtime, Error> {
        if std::process::id() != self.pid {
            return Err(Error::UsedAfterFork);
        }
        Ok(self.rt)
    }

    /// The runtime for a call: in the client's process, on a client not closed.
    fn check(&self) -> Result<&'static Runtime, Error> {
        let rt = self.owned()?;
        if self.is_closed() {
            return Err(Error::Closed);
        }
        Ok(rt)
    }

    /// Runs `fut` on the runtime without waiting for it (a lease given back after its caller
    /// went away, also after a close). Nothing happens in a process other than the client's
    /// (after a fork).
    pub(crate) fn detach<F>(&self, fut: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        if let Ok(rt) = self.owned() {
            drop(rt.spawn(fut));
        }
    }

    /// The runtime, to enter for calls that need one in context (a watchdog).
    pub(crate) fn runtime(&self) -> Result<&'static Runtime, Error> {
        self.check()
    }

    /// Runs `fut` the way this object answers: the converted value, or an awaitable of it. Its
    /// error keeps every fact the library set on it (whether it ran, whether a resend is safe).
    pub(crate) fn run<F, T>(&self, py: Python<'_>, fut: F) -> PyResult<Py<PyAny>>
    where
        F: Future<Output = Result<T, redis_atomic::Error>> + Send + 'static,
        T: for<'py> IntoPyObject<'py> + Send + 'static,
    {
        self.run_any(py, fut)
    }

    /// [`Bridge::run`] for a future that fails with a library or a binding error.
    pub(crate) fn run_any<F, T, E>(&self, py: Python<'_>, fut: F) -> PyResult<Py<PyAny>>
    where
        F: Future<Output = Result<T, E>> + Send + 'static,
        T: for<'py> IntoPyObject<'py> + Send + 'static,
        E: Into<Error> + Send + 'static,
    {
        let rt = self.check().map_err(|e| e.into_py(py))?;
        // Boxed once, here: a library future is a large state machine, and block_on, spawn and
        // the wrappers below would each copy it otherwise (memmove was 5% of a blocking call's
        // client CPU).
        let fut = Box::pin(fut);
        let fut = async move { fut.await.map_err(Into::into) };
        match self.mode {
            Mode::Blocking => {
                let out = py.detach(|| rt.block_on(fut));
                Failure(out).into_py_any(py)
            }
            Mode::Async => {
                let completer = match self.completer {
                    Some(c) => c,
                    None => completer().map_err(|e| e.into_py(py))?,
                };
                crate::completer::spawn(py, rt, completer, fut)
            }
        }
    }
}
