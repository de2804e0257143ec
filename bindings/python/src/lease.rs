//! What the lease handles share: the slot a handle keeps its library lease in (and how an end
//! verb runs on it, [`Slot::end_verb`]), the values every lease answers (`Extended`, `Released`,
//! `Lost`, and the other unit values), the arguments of a by-parts call (owner token and fence,
//! [`by_parts`]), and the macros that give each handle class the common shape ([`handle!`]) and
//! a lock or permit its give-back ([`released_on_abandon!`]).
//!
//! **The slot.** A handle (`LockGuard`, `Permit`, `Claim`, `Job`) keeps the library's own handle
//! in a [`Slot`]: held, lent to a watchdog, or ended. The end verbs consume the library handle, so
//! a second end (or an extend after the end) finds the slot ended and raises `HandleEnded`; while a
//! watchdog holds it, the same error says to stop the watchdog first. The fence and token are
//! copied out at creation, so they stay readable after the end (for a repeat by parts).
//!
//! **Delivery.** An asyncio call that wins a lease may find its caller gone: the task was
//! cancelled while the call ran, or between the result arriving and the task resuming. The
//! library call still runs to its end (see `runtime.rs`), so the lease exists; nobody will end
//! it. A handle made for an asyncio caller is therefore *undelivered* until the package's Python
//! layer takes it ([`Slot::taken`], right after the `await` returns, with no suspension point in
//! between). A slot dropped while undelivered, or abandoned by the Python layer on
//! `CancelledError`, gives its lease back at once ([`Abandon`]): a lock or permit is released, an
//! idempotency claim is failed as retryable (frees the key: no code ran under it), a job is
//! nacked for immediate redelivery (the delivery counts). A blocking call's handle is delivered
//! when made. A delivered handle dropped without its end verb does nothing: its lease runs out,
//! as in the library.

use crate::convert::{duration, secs, uint};
use crate::errors::{raise, Error};
use crate::record::record;
use crate::runtime::Bridge;
use pyo3::prelude::*;
use redis_atomic::lease::{Extend, Lease};
use redis_atomic::{Fence, OwnerToken};
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A library lease handle this binding can give back when its caller went away.
pub(crate) trait Abandon: Lease + Send + Sync + 'static {
    /// What the handle is called in errors (`lock guard`, `permit`, ...).
    const WHAT: &'static str;
    /// Gives the lease back: the caller never saw it.
    fn abandon(self) -> impl Future<Output = ()> + Send;
}

/// [`Abandon`] for a lease given back by releasing it (a lock guard, a permit); `$what` names
/// it in errors.
macro_rules! released_on_abandon {
    ($lease:ty, $what:literal) => {
        impl $crate::lease::Abandon for $lease {
            const WHAT: &'static str = $what;
            async fn abandon(self) {
                let _ = self.release().await;
            }
        }
    };
}

pub(crate) use released_on_abandon;

/// Where a handle's library lease is.
pub(crate) enum State<L> {
    Held(L),
    Watched,
    Ended,
}

const HELD: u8 = 0;
const WATCHED: u8 = 1;
const ENDED: u8 = 2;

/// A handle's library lease and what it knows about it without locking.
pub(crate) struct Slot<L: Abandon> {
    state: tokio::sync::Mutex<State<L>>,
    /// Mirrors `state`'s kind, readable without the async lock.
    status: AtomicU8,
    /// `(ttl, expires_by)` as last set, readable while an extend holds the lock.
    local: Mutex<(Duration, Instant)>,
    delivered: AtomicBool,
    pub(crate) bridge: Bridge,
}

impl<L: Abandon> Slot<L> {
    /// A slot holding `lease`; delivered at once for a blocking caller.
    pub(crate) fn new(lease: L, bridge: Bridge) -> Arc<Self> {
        let local = (lease.ttl(), lease.expires_by());
        Arc::new(Slot {
            state: tokio::sync::Mutex::new(State::Held(lease)),
            status: AtomicU8::new(HELD),
            local: Mutex::new(local),
            delivered: AtomicBool::new(bridge.mode == crate::runtime::Mode::Blocking),
            bridge,
        })
    }

    fn ended(&self, status: u8) -> Error {
        Error::Ended(match status {
            WATCHED => format!(
                "this {} is held by a watchdog: stop the watchdog first",
                L::WHAT
            ),
            _ => format!(
                "this {} was already ended (its end verb ran once); repeat an end whose \
                 outcome is unknown by parts, with its token and fence",
                L::WHAT
            ),
        })
    }

    /// The caller has the handle: from now on it ends the lease (or lets it run out).
    pub(crate) fn taken(&self) {
        self.delivered.store(true, Ordering::Release);
    }

    /// Whether the end verb ran (or the lease was given back).
    pub(crate) fn is_ended(&self) -> bool {
        self.status.load(Ordering::Acquire) == ENDED
    }

    /// Whether a watchdog holds the lease now.
    pub(crate) fn is_watched(&self) -> bool {
        self.status.load(Ordering::Acquire) == WATCHED
    }

    /// The ttl as last set, and the seconds left until `expires_by` (0 when past).
    pub(crate) fn local(&self) -> (Duration, f64) {
        let (ttl, by) = *self.local.lock().unwrap_or_else(|p| p.into_inner());
        (ttl, secs(by.saturating_duration_since(Instant::now())))
    }

    fn remember(&self, lease: &L) {
        *self.local.lock().unwrap_or_else(|p| p.into_inner()) = (lease.ttl(), lease.expires_by());
    }

    /// Extends the held lease to `ttl` from the server's now.
    pub(crate) async fn extend(&self, ttl: Duration) -> Result<Extend, Error> {
        let mut state = self.state.lock().await;
        let State::Held(lease) = &mut *state else {
            return Err(self.ended(self.status.load(Ordering::Acquire)));
        };
        let out = lease.extend(ttl).await?;
        self.remember(lease);
        Ok(out)
    }

    /// Takes the lease out for its end verb `end`; the slot is ended from then on.
    pub(crate) async fn end<T, F, Fut>(&self, end: F) -> Result<T, Error>
    where
        F: FnOnce(L) -> Fut,
        Fut: Future<Output = Result<T, redis_atomic::Error>>,
    {
        let lease = {
            let mut state = self.state.lock().await;
            match std::mem::replace(&mut *state, State::Ended) {
                State::Held(lease) => {
                    self.status.store(ENDED, Ordering::Release);
                    lease
                }
                other => {
                    *state = other;
                    return Err(self.ended(self.status.load(Ordering::Acquire)));
                }
            }
        };
        Ok(end(lease).await?)
    }

    /// A handle's end verb from Python: `end` run on the bridge, its answer made Python by
    /// `out`.
    pub(crate) fn end_verb<T, O, F, Fut>(
        self: &Arc<Self>,
        py: Python<'_>,
        end: F,
        out: fn(T) -> O,
    ) -> PyResult<Py<PyAny>>
    where
        F: FnOnce(L) -> Fut + Send + 'static,
        Fut: Future<Output = Result<T, redis_atomic::Error>> + Send,
        T: Send + 'static,
        O: for<'py> IntoPyObject<'py> + Send + 'static,
    {
        let slot = self.clone();
        self.bridge
            .run_any(py, async move { slot.end(end).await.map(out) })
    }

    /// Lends the lease to a watchdog (no await: refused while another call uses it).
    pub(crate) fn lend(&self) -> Result<L, Error> {
        let Ok(mut state) = self.state.try_lock() else {
            return Err(Error::Ended(format!(
                "this {} is in use by another call: watch it once that call returned",
                L::WHAT
            )));
        };
        match std::mem::replace(&mut *state, State::Watched) {
            State::Held(lease) => {
                self.status.store(WATCHED, Ordering::Release);
                Ok(lease)
            }
            other => {
                *state = other;
                Err(self.ended(self.status.load(Ordering::Acquire)))
            }
        }
    }

    /// The lease back from a stopped watchdog.
    pub(crate) async fn restore(&self, lease: L) {
        self.remember(&lease);
        *self.state.lock().await = State::Held(lease);
        self.status.store(HELD, Ordering::Release);
    }

    /// Gives the lease back now if the caller never took the handle (a cancelled asyncio call).
    pub(crate) fn abandon(&self) {
        if self.delivered.swap(true, Ordering::AcqRel) {
            return;
        }
        if let Ok(mut state) = self.state.try_lock() {
            if let State::Held(lease) = std::mem::replace(&mut *state, State::Ended) {
                self.status.store(ENDED, Ordering::Release);
                self.bridge.detach(lease.abandon());
            }
        }
    }
}

impl<L: Abandon> Drop for Slot<L> {
    fn drop(&mut self) {
        if self.delivered.load(Ordering::Acquire) {
            return;
        }
        if let State::Held(lease) = std::mem::replace(self.state.get_mut(), State::Ended) {
            self.bridge.detach(lease.abandon());
        }
    }
}

/// `True` / `False`, as a `repr` shows a bool.
pub(crate) fn py_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

/// The caller's owner token, if given (without one the library's own entry point takes a fresh
/// random token and says a resend is not safe).
pub(crate) fn owner_token(token: Option<&str>) -> PyResult<Option<OwnerToken>> {
    token.map(self::token).transpose()
}

/// A caller's owner token (for a job: the worker).
pub(crate) fn token(token: &str) -> PyResult<OwnerToken> {
    OwnerToken::new(token).map_err(raise)
}

/// The owner token and fence of a by-parts call (release, extend, ack, ... after an unknown
/// outcome, without the handle).
pub(crate) fn by_parts(token: &str, fence: &Bound<'_, PyAny>) -> PyResult<(OwnerToken, Fence)> {
    Ok((self::token(token)?, Fence(uint(fence, "fence")?)))
}

/// Reads a `ttl` argument of an extend.
pub(crate) fn ttl_arg(ttl: &Bound<'_, PyAny>) -> PyResult<Duration> {
    duration(ttl, "ttl")
}

/// Result classes with no fields: `Lost()`, `Idle()`, ... — compared by class, truthy or falsy as
/// `$truthy` says, matched with `case ra.Lost():`.
macro_rules! unit {
    ($(#[doc = $doc:literal])* $name:ident, $truthy:literal) => {
        $(#[doc = $doc])*
        #[pyclass(frozen, eq, hash, module = "redis_atomic")]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        pub struct $name;

        #[pymethods]
        impl $name {
            #[new]
            fn py_new() -> Self {
                $name
            }
            fn __bool__(&self) -> bool {
                $truthy
            }
            fn __repr__(&self) -> &'static str {
                concat!(stringify!($name), "()")
            }
            #[classattr]
            fn __match_args__(py: Python<'_>) -> Bound<'_, pyo3::types::PyTuple> {
                pyo3::types::PyTuple::empty(py)
            }
        }
    };
}

pub(crate) use unit;

unit! {
    /// The handle no longer holds its lease (expired and taken over, released, acked, ...):
    /// nothing changed. Falsy.
    Lost, false
}

record! {
    /// The lease now ends `ttl` seconds from the server's now (absolute, never added to what was
    /// left); `fence` is the lease's unchanged fence. Truthy.
    Extended { fence: u64, ttl: Duration }
    {
        fn __bool__(&self) -> bool { true }
    }
}

record! {
    /// The lease was held by this token and fence and is now free. Truthy.
    Released { fence: u64 }
    {
        fn __bool__(&self) -> bool { true }
    }
}

/// A handle class over a [`Slot`] of `$lease`: its fence and token, the lease's local view
/// (`ttl`, `expires_in`), `extend`, `watch`, `ended`, the delivery calls of the Python layer, and
/// the class's own methods in braces after it.
macro_rules! handle {
    (
        $(#[doc = $doc:literal])*
        $name:ident($lease:ty) { $($field:ident : $fty:ty),* $(,)? }
        { $($extra:tt)* }
    ) => {
        $(#[doc = $doc])*
        #[pyclass(frozen, module = "redis_atomic._native")]
        pub struct $name {
            pub(crate) slot: std::sync::Arc<$crate::lease::Slot<$lease>>,
            pub(crate) fence: u64,
            pub(crate) token: redis_atomic::OwnerToken,
            $(pub(crate) $field: $fty),*
        }

        impl $name {
            /// A handle over a granted `lease`, answering through `bridge`.
            pub(crate) fn of(
                lease: $lease,
                bridge: $crate::runtime::Bridge
                $(, $field: $fty)*
            ) -> Self {
                $name {
                    fence: lease.fence().0,
                    token: lease.token().clone(),
                    slot: $crate::lease::Slot::new(lease, bridge),
                    $($field),*
                }
            }
        }

        #[pymethods]
        impl $name {
            /// The lease's fence: pass it to every write the lease protects.
            #[getter]
            fn fence(&self) -> u64 {
                self.fence
            }
            /// The owner token (for a job: the worker).
            #[getter]
            fn token(&self) -> &str {
                self.token.as_str()
            }
            /// The lease's length as last set (by the take or the last confirmed extend), s.
            #[getter]
            fn ttl(&self) -> f64 {
                $crate::convert::secs(self.slot.local().0)
            }
            /// Seconds until the lease surely ends by the local clock (0 once past).
            #[getter]
            fn expires_in(&self) -> f64 {
                self.slot.local().1
            }
            /// Whether the end verb ran.
            #[getter]
            fn ended(&self) -> bool {
                self.slot.is_ended()
            }
            /// Whether a watchdog holds the lease now.
            #[getter]
            fn watched(&self) -> bool {
                self.slot.is_watched()
            }
            /// Sets the lease to end `ttl` from the server's now: `Extended` or `Lost`.
            fn extend(&self, py: Python<'_>, ttl: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
                let ttl = $crate::lease::ttl_arg(ttl)?;
                let slot = self.slot.clone();
                self.slot.bridge.run_any(py, async move {
                    slot.extend(ttl).await.map($crate::outcome::Outcome::Extend)
                })
            }
            /// Lends the lease to a watchdog that renews it until stopped.
            #[pyo3(signature = (renew_fraction=None, margin_fraction=None))]
            fn watch(
                &self,
                renew_fraction: Option<f64>,
                margin_fraction: Option<f64>,
            ) -> PyResult<$crate::watch::Watched> {
                $crate::watch::Watched::start(
                    &self.slot,
                    self.fence,
                    &self.token,
                    renew_fraction,
                    margin_fraction,
                )
            }
            /// The Python layer has the handle (asyncio calls; see `lease.rs`).
            fn _taken(&self) {
                self.slot.taken();
            }
            /// The Python layer's caller went away before taking it: give the lease back.
            fn _abandon(&self) {
                self.slot.abandon();
            }
            $($extra)*
        }
    };
}

pub(crate) use handle;
