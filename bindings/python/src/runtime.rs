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
//! **Async calls** spawn the future on the runtime and hand asyncio a future of its
//! `JoinHandle` (pyo3-async-runtimes on this module's [`Tokio`] runtime). Cancelling the asyncio
//! task drops only that `JoinHandle`, which detaches the task: **the operation keeps running to
//! its end** (its result is discarded). A request already handed to the server cannot be
//! recalled anyway; finishing it means the library's retry loop, `NOSCRIPT` recovery and
//! connection replacement never stop half-way, and (for the lease primitives to come) a guard
//! granted to a cancelled task can be released by the binding instead of expiring.

use crate::errors::{Error, Failure, IntoError};
use pyo3::prelude::*;
use pyo3::IntoPyObjectExt;
use pyo3_async_runtimes::generic::{self, ContextExt, Runtime as GenericRuntime};
use pyo3_async_runtimes::TaskLocals;
use std::cell::OnceCell;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use tokio::runtime::{Handle, Runtime};

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

    /// Runs `fut` on the runtime without waiting for it (a lease given back after its caller
    /// went away). Nothing happens in a process other than the client's (after a fork).
    pub(crate) fn detach<F>(&self, fut: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        if let Ok(rt) = self.check() {
            drop(rt.spawn(fut));
        }
    }

    /// The runtime, to enter for calls that need one in context (a watchdog).
    pub(crate) fn runtime(&self) -> Result<&'static Runtime, Error> {
        self.check()
    }

    /// Runs `fut` the way this object answers: the converted value, or an awaitable of it.
    /// `retry_safe` says whether resending this very call after an unknown outcome is safe (it
    /// becomes `OutcomeUnknown.retry_safe`).
    pub(crate) fn run<F, T>(&self, py: Python<'_>, retry_safe: bool, fut: F) -> PyResult<Py<PyAny>>
    where
        F: Future<Output = Result<T, redis_atomic::Error>> + Send + 'static,
        T: for<'py> IntoPyObject<'py> + Send + 'static,
    {
        self.run_any(py, retry_safe, fut)
    }

    /// [`Bridge::run`] for a future that fails with a library or a binding error.
    pub(crate) fn run_any<F, T, E>(
        &self,
        py: Python<'_>,
        retry_safe: bool,
        fut: F,
    ) -> PyResult<Py<PyAny>>
    where
        F: Future<Output = Result<T, E>> + Send + 'static,
        T: for<'py> IntoPyObject<'py> + Send + 'static,
        E: IntoError + Send + 'static,
    {
        let rt = self.check().map_err(|e| e.into_py(py))?;
        let fut = async move { fut.await.map_err(|e| e.into_error(retry_safe)) };
        match self.mode {
            Mode::Blocking => {
                let out = py.detach(|| rt.block_on(fut));
                Failure(out).into_py_any(py)
            }
            Mode::Async => {
                let task = rt.spawn(fut);
                let awaited = async move {
                    let out = task
                        .await
                        .unwrap_or_else(|e| Err(Error::Task(e.to_string())));
                    Ok(Failure(out))
                };
                // The running loop, without a copy of the contextvars (`future_into_py` makes
                // one per call): the call never runs Python code, and the result is set
                // without them.
                let locals = TaskLocals::with_running_loop(py)?;
                generic::future_into_py_with_locals::<Tokio, _, _>(py, locals, awaited)
                    .map(Bound::unbind)
            }
        }
    }
}

/// pyo3-async-runtimes' view of [`runtime`]: spawns on this process's runtime.
pub(crate) struct Tokio;

tokio::task_local! {
    static TASK_LOCALS: OnceCell<TaskLocals>;
}

/// A handle to spawn on: the runtime of the calling thread, else this process's.
fn handle() -> Handle {
    match Handle::try_current() {
        Ok(h) => h,
        // Only reachable before any client exists, which is the only way to get here.
        Err(_) => match runtime() {
            Ok(rt) => rt.handle().clone(),
            Err(e) => panic!("redis-atomic: {e:?}"),
        },
    }
}

/// pyo3-async-runtimes hands every finished call's "set the asyncio future's result" to
/// `spawn_blocking`: a closure that takes the GIL. One blocking-pool thread and one GIL
/// acquisition per call made the event loop and the runtime trade the GIL thousands of times a
/// second; instead the closures queue up for one completer thread per process, which runs
/// every closure queued so far under a single acquisition of the GIL.
type Completion = Box<dyn FnOnce() + Send>;

/// The completer's queue and its wake-up.
#[derive(Default)]
struct Completions {
    queue: Mutex<Vec<Completion>>,
    ready: std::sync::Condvar,
}

impl Completions {
    fn push(&self, f: Completion) {
        let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        q.push(f);
        if q.len() == 1 {
            self.ready.notify_one();
        }
    }

    /// The completer thread: waits for closures, runs each batch with the GIL held once.
    fn run(&self) {
        loop {
            let batch = {
                let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
                while q.is_empty() {
                    q = self.ready.wait(q).unwrap_or_else(|p| p.into_inner());
                }
                std::mem::take(&mut *q)
            };
            Python::attach(|_| batch.into_iter().for_each(|f| f()));
        }
    }
}

/// This process's completer (after a fork: a fresh one; the parent's thread is not in the
/// child). `None` only if no thread could be started.
fn completions() -> Option<std::sync::Arc<Completions>> {
    static CURRENT: Mutex<Option<(u32, std::sync::Arc<Completions>)>> = Mutex::new(None);
    let pid = std::process::id();
    let mut current = CURRENT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((owner, c)) = &*current {
        if *owner == pid {
            return Some(c.clone());
        }
    }
    let c = std::sync::Arc::new(Completions::default());
    let worker = c.clone();
    std::thread::Builder::new()
        .name("redis-atomic-completer".into())
        .spawn(move || worker.run())
        .ok()?;
    *current = Some((pid, c.clone()));
    Some(c)
}

/// A spawned task, or a closure handed to the completer (done as far as the caller knows:
/// pyo3-async-runtimes never awaits it).
pub(crate) enum Spawned {
    Task(tokio::task::JoinHandle<()>),
    Queued,
}

impl Future for Spawned {
    type Output = Result<(), tokio::task::JoinError>;
    fn poll(
        self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        match self.get_mut() {
            Spawned::Task(h) => Pin::new(h).poll(cx),
            Spawned::Queued => std::task::Poll::Ready(Ok(())),
        }
    }
}

impl GenericRuntime for Tokio {
    type JoinError = tokio::task::JoinError;
    type JoinHandle = Spawned;

    fn spawn<F>(fut: F) -> Self::JoinHandle
    where
        F: Future<Output = ()> + Send + 'static,
    {
        Spawned::Task(handle().spawn(fut))
    }

    fn spawn_blocking<F>(f: F) -> Self::JoinHandle
    where
        F: FnOnce() + Send + 'static,
    {
        match completions() {
            Some(c) => {
                c.push(Box::new(f));
                Spawned::Queued
            }
            None => Spawned::Task(handle().spawn_blocking(f)),
        }
    }
}

impl ContextExt for Tokio {
    fn scope<F, R>(locals: TaskLocals, fut: F) -> Pin<Box<dyn Future<Output = R> + Send>>
    where
        F: Future<Output = R> + Send + 'static,
    {
        let cell = OnceCell::new();
        let _ = cell.set(locals);
        Box::pin(TASK_LOCALS.scope(cell, fut))
    }

    fn get_task_locals() -> Option<TaskLocals> {
        TASK_LOCALS
            .try_with(|c| c.get().cloned())
            .unwrap_or_default()
    }
}
