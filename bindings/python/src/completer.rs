//! How an asyncio call gets its answer: one tokio task per call, one completer thread per
//! process, one `call_soon_threadsafe` per event loop per batch of finished calls.
//!
//! An async call creates its asyncio future on the running loop (`loop.create_future()`) and
//! spawns one task that runs the library future to its end, then queues the result here. The
//! completer thread takes everything queued so far, converts each result to a Python value
//! under a single acquisition of the GIL, and hands each loop its share of the batch in one
//! `call_soon_threadsafe(deliver, batch)`: the loop then sets every future's result in one
//! callback. So a burst of answers costs one GIL acquisition by a foreign thread and one wake-up
//! of the loop, not one of each per answer (what a per-call bridge costs: a spawn of a
//! blocking-pool closure, a GIL acquisition and a self-pipe write per call).
//!
//! **No lost answers.** A task that ends without a value (a panic in the call, or the runtime
//! dropping it) still completes its asyncio future, with a `ClientError` ([`Pending`]'s drop):
//! an awaiting task never hangs. One future that cannot be set does not keep the rest of its
//! batch from being set (the error goes to `sys.unraisablehook`).
//!
//! **Cancellation.** A future the loop already cancelled (its task was cancelled) is skipped by
//! `deliver`: the call ran to its end anyway (the runtime's rule) and its value is dropped, which
//! gives back a lease the caller never received (`lease.rs`). A closed loop refuses the batch:
//! its values are dropped the same way.

use crate::errors::{Error, Failure};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyList, PyTuple};
use pyo3::IntoPyObjectExt;
use std::future::Future;
use std::sync::{Condvar, Mutex};
use tokio::runtime::Runtime;

/// A finished call's value, converted under the GIL.
type Convert = Box<dyn FnOnce(Python<'_>) -> PyResult<Py<PyAny>> + Send>;

/// One finished call: its loop, its future, its value.
struct Done {
    event_loop: Py<PyAny>,
    future: Py<PyAny>,
    value: Convert,
}

/// A spawned call's asyncio future, not yet answered. Answered once: with the call's value
/// ([`Pending::finish`]), or, if the task ends without one (dropped: a panic, a runtime shut
/// down), with a `ClientError` on drop.
struct Pending {
    completer: &'static Completions,
    target: Option<(Py<PyAny>, Py<PyAny>)>,
}

impl Pending {
    fn answer(&mut self, value: Convert) {
        if let Some((event_loop, future)) = self.target.take() {
            self.completer.push(Done {
                event_loop,
                future,
                value,
            });
        }
    }

    fn finish(mut self, value: Convert) {
        self.answer(value);
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        self.answer(Box::new(|py| {
            let lost: Result<(), Error> =
                Err(Error::Task("the call ended without an answer".into()));
            Failure(lost).into_py_any(py)
        }));
    }
}

/// The completer's queue and its wake-up.
#[derive(Default)]
pub(crate) struct Completions {
    queue: Mutex<Vec<Done>>,
    ready: Condvar,
}

impl std::fmt::Debug for Completions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Completions")
    }
}

impl Completions {
    fn push(&self, done: Done) {
        let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        q.push(done);
        if q.len() == 1 {
            self.ready.notify_one();
        }
    }

    /// The completer thread: waits for finished calls, delivers each batch.
    fn run(&self) {
        loop {
            let batch = {
                let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
                while q.is_empty() {
                    q = self.ready.wait(q).unwrap_or_else(|p| p.into_inner());
                }
                std::mem::take(&mut *q)
            };
            Python::attach(|py| deliver_batch(py, batch));
        }
    }
}

/// Converts a batch and hands each loop its share in one `call_soon_threadsafe`.
fn deliver_batch(py: Python<'_>, batch: Vec<Done>) {
    let mut per_loop: Vec<(Py<PyAny>, Vec<Bound<'_, PyTuple>>)> = Vec::new();
    for done in batch {
        let (ok, value) = match (done.value)(py) {
            Ok(v) => (true, v),
            Err(e) => (false, e.into_value(py).into_any()),
        };
        let ok = pyo3::types::PyBool::new(py, ok)
            .to_owned()
            .into_any()
            .unbind();
        let Ok(item) = PyTuple::new(py, [done.future, ok, value]) else {
            continue;
        };
        match per_loop
            .iter_mut()
            .find(|(l, _)| l.as_ptr() == done.event_loop.as_ptr())
        {
            Some((_, items)) => items.push(item),
            None => per_loop.push((done.event_loop, vec![item])),
        }
    }
    let Ok(deliver) = deliver_fn(py) else { return };
    for (event_loop, items) in per_loop {
        let Ok(items) = PyList::new(py, items) else {
            continue;
        };
        // A closed loop raises: nobody waits for these answers any more.
        let _ = event_loop.call_method1(
            py,
            pyo3::intern!(py, "call_soon_threadsafe"),
            (deliver, items),
        );
    }
}

/// Sets the result (or exception) of every future of a batch the loop has not cancelled. Runs
/// on the loop's thread.
#[pyfunction]
fn deliver(items: &Bound<'_, PyList>) -> PyResult<()> {
    for item in items.iter() {
        if let Err(e) = deliver_one(&item) {
            e.write_unraisable(items.py(), Some(&item));
        }
    }
    Ok(())
}

/// Sets one `(future, ok, value)`, unless its future is already done (cancelled).
fn deliver_one(item: &Bound<'_, PyAny>) -> PyResult<()> {
    let py = item.py();
    let item = item.cast::<PyTuple>()?;
    let future = item.get_item(0)?;
    if future
        .call_method0(pyo3::intern!(py, "done"))?
        .is_truthy()?
    {
        return Ok(());
    }
    let value = item.get_item(2)?;
    let method = if item.get_item(1)?.is_truthy()? {
        pyo3::intern!(py, "set_result")
    } else {
        pyo3::intern!(py, "set_exception")
    };
    future.call_method1(method, (value,))?;
    Ok(())
}

fn deliver_fn(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static DELIVER: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    DELIVER
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(wrap_pyfunction!(deliver, py)?.into_any().unbind())
        })
        .map(|f| f.bind(py))
}

/// This process's completer, started on first use (after a fork: a fresh one; the parent's
/// thread is not in the child). Leaked on purpose, like the runtime: one per process. An async
/// client looks it up once, when it is created ([`crate::runtime::Bridge`]), not per call.
pub(crate) fn completer() -> Result<&'static Completions, Error> {
    static CURRENT: Mutex<Option<(u32, &'static Completions)>> = Mutex::new(None);
    let pid = std::process::id();
    let mut current = CURRENT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((owner, c)) = *current {
        if owner == pid {
            return Ok(c);
        }
    }
    let c: &'static Completions = Box::leak(Box::default());
    std::thread::Builder::new()
        .name("redis-atomic-completer".into())
        .spawn(move || c.run())
        .map_err(|e| Error::Runtime(format!("could not start the completer thread: {e}")))?;
    *current = Some((pid, c));
    Ok(c)
}

/// `asyncio.get_running_loop`, looked up once.
fn running_loop(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    static GET: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let get = GET.get_or_try_init(py, || {
        Ok::<_, PyErr>(py.import("asyncio")?.getattr("get_running_loop")?.unbind())
    })?;
    get.bind(py).call0()
}

/// Runs `fut` on `rt` and returns an asyncio future of its converted value, on the running
/// loop (a `RuntimeError` outside one, as asyncio says).
pub(crate) fn spawn<F, T>(
    py: Python<'_>,
    rt: &'static Runtime,
    completer: &'static Completions,
    fut: F,
) -> PyResult<Py<PyAny>>
where
    F: Future<Output = Result<T, Error>> + Send + 'static,
    T: for<'py> IntoPyObject<'py> + Send + 'static,
{
    let event_loop = running_loop(py)?;
    let future = event_loop.call_method0(pyo3::intern!(py, "create_future"))?;
    let pending = Pending {
        completer,
        target: Some((event_loop.unbind(), future.clone().unbind())),
    };
    drop(rt.spawn(async move {
        let out = fut.await;
        pending.finish(Box::new(move |py| Failure(out).into_py_any(py)));
    }));
    Ok(future.unbind())
}
