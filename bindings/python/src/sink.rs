//! Finishing asyncio calls on the event loop's own thread, without the runtime's threads ever
//! taking the GIL.
//!
//! Each event loop gets one [`Sink`]: a queue of finished calls and a socket pair whose read end
//! the loop watches (`loop.add_reader`). A runtime thread that finishes a call pushes the
//! asyncio future and the call's result onto the queue and, when the queue was empty, writes one
//! byte; the loop then runs [`Sink::drain`] on its thread, with the GIL it already holds, and
//! sets every queued future's result in one go. Measured on the 2-core VM (peer-bench, asyncio,
//! 16 tasks): completing each call from a runtime thread through `call_soon_threadsafe`, which
//! takes the GIL once per call (pyo3-async-runtimes' `future_into_py`), was the bottleneck.
//!
//! The order matters in [`Sink::drain`]: read the wake-up bytes first, then take the queue, so a
//! push between the two is either taken now or has written a byte of its own.

use crate::errors::{Error, Failure};
use futures::FutureExt;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::IntoPyObjectExt;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};

/// Converts a finished call's result to Python, on the loop's thread.
type Convert = Box<dyn FnOnce(Python<'_>) -> PyResult<Py<PyAny>> + Send>;

/// What runtime threads share with one loop: finished calls, and the socket that wakes it.
struct Inner {
    done: Mutex<Vec<(Py<PyAny>, Convert)>>,
    wake: UnixStream,
}

impl Inner {
    fn push(&self, future: Py<PyAny>, convert: Convert) {
        let mut done = self.done.lock().unwrap_or_else(|p| p.into_inner());
        done.push((future, convert));
        if done.len() == 1 {
            // Non-blocking: a full socket already holds a wake-up the loop has yet to read.
            let _ = (&self.wake).write(&[1]);
        }
    }
}

/// One event loop's sink (see the module doc). Made by `redis_atomic._loop.sink()`.
#[pyclass(frozen, module = "redis_atomic._native")]
pub struct Sink {
    inner: Arc<Inner>,
    read: UnixStream,
}

#[pymethods]
impl Sink {
    /// A sink for one loop; the caller registers `fileno()` with `add_reader(…, drain)`.
    #[new]
    fn new() -> PyResult<Self> {
        let (read, wake) = UnixStream::pair()?;
        read.set_nonblocking(true)?;
        wake.set_nonblocking(true)?;
        Ok(Sink {
            inner: Arc::new(Inner {
                done: Mutex::new(Vec::new()),
                wake,
            }),
            read,
        })
    }

    /// The descriptor the loop watches.
    fn fileno(&self) -> i32 {
        self.read.as_raw_fd()
    }

    /// Sets the result (or exception) of every finished call; a cancelled future is skipped
    /// (its call ran to its end regardless).
    fn drain(&self, py: Python<'_>) -> PyResult<()> {
        let mut buf = [0u8; 256];
        while matches!((&self.read).read(&mut buf), Ok(n) if n > 0) {}
        let done = std::mem::take(&mut *self.inner.done.lock().unwrap_or_else(|p| p.into_inner()));
        for (future, convert) in done {
            let future = future.bind(py);
            if future.call_method0("cancelled")?.is_truthy()? {
                continue;
            }
            match convert(py) {
                Ok(value) => future.call_method1("set_result", (value,))?,
                Err(e) => future.call_method1("set_exception", (e.into_value(py),))?,
            };
        }
        Ok(())
    }
}

/// The running loop and its sink (`redis_atomic._loop.sink`, imported once).
fn sink(py: Python<'_>) -> PyResult<(Bound<'_, PyAny>, Bound<'_, Sink>)> {
    static SINK: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let f = SINK.get_or_try_init(py, || {
        py.import("redis_atomic._loop")?
            .getattr("sink")
            .map(Bound::unbind)
    })?;
    let (event_loop, sink): (Bound<'_, PyAny>, Bound<'_, PyAny>) = f.bind(py).call0()?.extract()?;
    Ok((event_loop, sink.cast_into::<Sink>()?))
}

/// Spawns `fut` on `rt` and returns an asyncio future of its result, set on the running loop's
/// thread when it finishes. Cancelling the asyncio future does not stop `fut`.
pub(crate) fn spawn<F, T>(
    py: Python<'_>,
    rt: &tokio::runtime::Runtime,
    fut: F,
) -> PyResult<Py<PyAny>>
where
    F: std::future::Future<Output = Result<T, Error>> + Send + 'static,
    T: for<'py> IntoPyObject<'py> + Send + 'static,
{
    let (event_loop, sink) = sink(py)?;
    let future = event_loop.call_method0("create_future")?;
    let inner = sink.get().inner.clone();
    let handle = future.clone().unbind();
    rt.spawn(async move {
        // A panic (none is expected) still answers the future, as an error.
        let out = std::panic::AssertUnwindSafe(fut)
            .catch_unwind()
            .await
            .unwrap_or_else(|_| Err(Error::Task("the call panicked".into())));
        inner.push(handle, Box::new(move |py| Failure(out).into_py_any(py)));
    });
    Ok(future.unbind())
}
