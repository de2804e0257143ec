//! The watchdog: the library's `Watched<L>` over any lease handle, as one Python class.
//!
//! `handle.watch()` lends the handle's lease to the library's watchdog, which renews it every
//! `renew_fraction × ttl` until stopped and says when it is lost. `stop()` hands the lease back
//! to the same handle (its end verbs work again). How the loss reaches Python: `on_lost(callback)`
//! runs a task that awaits the library's `lost()` and calls `callback(reason)` once, from a
//! thread of the binding (with the GIL), with `"not_held"` (the server answered that the lease
//! is gone) or `"unconfirmed"` (no renewal succeeded before the proven lease ended). The Python
//! layer turns that into a `threading.Event` (blocking face) or an `asyncio.Event` set on its
//! loop (`call_soon_threadsafe`). Stopping the watchdog cancels that task: a stopped watchdog
//! reports nothing.

use crate::errors::Error;
use crate::lease::{Abandon, Slot};
use crate::runtime::Bridge;
use pyo3::prelude::*;
use redis_atomic::idempotency::Claim;
use redis_atomic::lease::{LeaseLost, WatchdogConfig, Watched as LibWatched};
use redis_atomic::lock::LockGuard;
use redis_atomic::queue::Job;
use redis_atomic::semaphore::Permit;
use redis_atomic::OwnerToken;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

/// A watched lease of any kind, and the slot it goes back to.
pub(crate) enum AnyWatched {
    Lock(LibWatched<LockGuard>, Arc<Slot<LockGuard>>),
    Permit(LibWatched<Permit>, Arc<Slot<Permit>>),
    Claim(LibWatched<Claim>, Arc<Slot<Claim>>),
    Job(LibWatched<Job>, Arc<Slot<Job>>),
}

/// A lease kind the watchdog takes.
pub(crate) trait Watchable: Abandon + Sized {
    fn wrap(watched: LibWatched<Self>, slot: Arc<Slot<Self>>) -> AnyWatched;
}

macro_rules! watchable {
    ($($ty:ty => $variant:ident),+) => {
        $(impl Watchable for $ty {
            fn wrap(watched: LibWatched<Self>, slot: Arc<Slot<Self>>) -> AnyWatched {
                AnyWatched::$variant(watched, slot)
            }
        })+
    };
}

watchable!(LockGuard => Lock, Permit => Permit, Claim => Claim, Job => Job);

/// `$body` with `$w` bound to the watched lease and `$s` to its slot, whatever the kind.
macro_rules! each {
    ($any:expr, |$w:ident, $s:ident| $body:expr) => {
        match $any {
            AnyWatched::Lock($w, $s) => $body,
            AnyWatched::Permit($w, $s) => $body,
            AnyWatched::Claim($w, $s) => $body,
            AnyWatched::Job($w, $s) => $body,
        }
    };
}

type LostFuture = Pin<Box<dyn Future<Output = LeaseLost> + Send>>;

impl AnyWatched {
    fn lost(&self) -> LostFuture {
        each!(self, |w, _s| Box::pin(w.lost()))
    }
    fn is_held(&self) -> bool {
        each!(self, |w, _s| w.is_held())
    }
    fn failed_renewals(&self) -> u32 {
        each!(self, |w, _s| w.failed_renewals())
    }
    /// Stops the renewals and puts the lease back in its handle's slot.
    async fn stop(self) -> Result<(), redis_atomic::Error> {
        each!(self, |w, s| {
            let lease = w.stop().await?;
            s.restore(lease).await;
            Ok(())
        })
    }
}

/// The reason of a loss, as Python reads it.
fn reason(why: LeaseLost) -> &'static str {
    match why {
        LeaseLost::NotHeld => "not_held",
        _ => "unconfirmed",
    }
}

/// A lease whose renewals a background task makes.
#[pyclass(frozen, module = "redis_atomic._native")]
pub struct Watched {
    inner: Mutex<Option<AnyWatched>>,
    notifier: Mutex<Option<tokio::task::AbortHandle>>,
    fence: u64,
    token: OwnerToken,
    bridge: Bridge,
}

impl Watched {
    /// Lends `slot`'s lease to a new watchdog.
    pub(crate) fn start<L: Watchable>(
        slot: &Arc<Slot<L>>,
        fence: u64,
        token: &OwnerToken,
        renew_fraction: Option<f64>,
        margin_fraction: Option<f64>,
    ) -> PyResult<Watched> {
        let bridge = slot.bridge.clone();
        let py_err = |e: Error| Python::attach(|py| e.into_py(py));
        let rt = bridge.runtime().map_err(py_err)?;
        let mut config = WatchdogConfig::default();
        if let Some(f) = renew_fraction {
            config = config.renew_fraction(f);
        }
        if let Some(f) = margin_fraction {
            config = config.margin_fraction(f);
        }
        // The library checks the fractions too, but only after taking the lease: checked here
        // first, so a bad config leaves the handle as it was.
        let (renew, margin) = (config.renew_fraction, config.margin_fraction);
        if !(renew > 0.0 && renew < 1.0 && margin >= 0.0 && margin < renew) {
            return Err(crate::errors::bad(format!(
                "watchdog fractions must satisfy 0 <= margin < renew < 1, got margin {margin} \
                 renew {renew}"
            )));
        }
        let lease = slot.lend().map_err(py_err)?;
        let _entered = rt.enter();
        let watched = LibWatched::with_config(lease, config).map_err(crate::errors::raise)?;
        Ok(Watched {
            inner: Mutex::new(Some(L::wrap(watched, slot.clone()))),
            notifier: Mutex::new(None),
            fence,
            token: token.clone(),
            bridge,
        })
    }

    fn with<T>(&self, f: impl FnOnce(&AnyWatched) -> T) -> Option<T> {
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.as_ref().map(f)
    }
}

#[pymethods]
impl Watched {
    /// The lease's fence.
    #[getter]
    fn fence(&self) -> u64 {
        self.fence
    }

    /// The owner token.
    #[getter]
    fn token(&self) -> &str {
        self.token.as_str()
    }

    /// Whether the lease is provably held now (false once stopped).
    #[getter]
    fn is_held(&self) -> bool {
        self.with(AnyWatched::is_held).unwrap_or(false)
    }

    /// Renewals that failed so far (each retried while the lease lasted).
    #[getter]
    fn failed_renewals(&self) -> u32 {
        self.with(AnyWatched::failed_renewals).unwrap_or(0)
    }

    /// Whether `stop` was called.
    #[getter]
    fn stopped(&self) -> bool {
        self.with(|_| ()).is_none()
    }

    /// Calls `callback(reason)` once when the lease is lost (`"not_held"` or `"unconfirmed"`),
    /// from a thread of the binding; never after `stop`.
    fn on_lost(&self, callback: Py<PyAny>) -> PyResult<()> {
        let Some(lost) = self.with(AnyWatched::lost) else {
            return Ok(());
        };
        let rt = self
            .bridge
            .runtime()
            .map_err(|e| Python::attach(|py| e.into_py(py)))?;
        let task = rt.spawn(async move {
            let why = reason(lost.await);
            let _ = tokio::task::spawn_blocking(move || {
                Python::attach(|py| {
                    if let Err(e) = callback.call1(py, (why,)) {
                        e.write_unraisable(py, None);
                    }
                })
            })
            .await;
        });
        let mut notifier = self.notifier.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(old) = notifier.replace(task.abort_handle()) {
            old.abort();
        }
        Ok(())
    }

    /// Stops the renewals and hands the lease back to its handle. Blocking: returns when done;
    /// asyncio: an awaitable. A second call does nothing.
    fn stop(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        if let Some(n) = self
            .notifier
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            n.abort();
        }
        let taken = self.inner.lock().unwrap_or_else(|p| p.into_inner()).take();
        self.bridge.run(py, async move {
            match taken {
                Some(w) => w.stop().await,
                None => Ok(()),
            }
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "Watched(fence={}, held={}, stopped={})",
            self.fence,
            crate::lease::py_bool(self.is_held()),
            crate::lease::py_bool(self.stopped())
        )
    }
}

impl Drop for Watched {
    /// Dropping the watchdog without `stop` ends the renewals (the library's rule) and the
    /// notifier; the lease then runs out, and its handle stays "watched" (unusable).
    fn drop(&mut self) {
        if let Some(n) = self
            .notifier
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            n.abort();
        }
    }
}
