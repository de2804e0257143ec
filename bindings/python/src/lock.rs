//! Locks with fencing tokens (`Locks`, `LockGuard`): a binding of the library's `lock::Locks`.
//!
//! `acquire` answers a `LockGuard` (the lease handle: `fence`, `token`, `extend`, `release`,
//! `watch`) or `Held(retry_after)`; with `wait` it is the library's `acquire_timeout` (retries
//! under the client's contention policy). The by-parts calls (`release`, `extend` with token and
//! fence) and `inspect` are methods of `Locks`.

use crate::client::Client;
use crate::convert::{duration, opt_duration};
use crate::errors::{bad, raise};
use crate::lease::{by_parts, handle, owner_token, released_on_abandon};
use crate::outcome::Outcome;
use crate::record::record;
use crate::runtime::Bridge;
use pyo3::prelude::*;
use redis_atomic::lock;
use redis_atomic::Keyspace;
use std::time::Duration;

released_on_abandon!(lock::LockGuard, "lock guard");

record! {
    /// Someone else holds the lock; its lease ends in `retry_after` seconds (a release may free
    /// it sooner). Falsy.
    Held { retry_after: Duration }
    {
        fn __bool__(&self) -> bool { false }
    }
}

record! {
    /// The lock is held with `fence` for about `ttl` more seconds.
    Locked { fence: u64, ttl: Duration }
    {}
}

record! {
    /// The lock is free; `last_fence` is the last fence issued (0 if none is remembered).
    Free { last_fence: u64 }
    {}
}

record! {
    /// The keys of one resource's lock: the lock itself and its fence counter.
    LockKeys { lock: String, fence: String }
    {}
}

handle! {
    /// A held lock. `release()` ends it; `extend(ttl)` renews it; `watch()` renews it in the
    /// background. Dropping it does nothing: the lease runs out.
    LockGuard(lock::LockGuard) { resource: String }
    {
        /// The locked resource.
        #[getter]
        fn resource(&self) -> &str {
            &self.resource
        }
        /// Releases the lock if this lease still holds it: `Released` or `Lost`. The handle is
        /// ended either way; after an unknown outcome repeat it by parts
        /// (`Locks.release(resource, token, fence)`).
        fn release(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
            self.slot.end_verb(py, |g| g.release(), Outcome::Release)
        }
        fn __repr__(&self) -> String {
            format!("LockGuard(resource={:?}, fence={}, ended={})", self.resource, self.fence,
                    crate::lease::py_bool(self.slot.is_ended()))
        }
    }
}

/// Locks under one namespace.
#[pyclass(frozen, module = "redis_atomic._native")]
pub struct Locks {
    inner: lock::Locks,
    bridge: Bridge,
}

#[pymethods]
impl Locks {
    #[new]
    fn new(client: &Bound<'_, Client>, namespace: &str) -> PyResult<Self> {
        let (client, bridge) = client.get().parts(client.py())?;
        let inner = lock::Locks::new(client, Keyspace::new(namespace).map_err(raise)?);
        Ok(Locks { inner, bridge })
    }

    /// Tries once to take `resource` for `ttl` (with `wait`: retries until `wait` runs out):
    /// a `LockGuard` or `Held`. `token`: the caller's owner token (retry-safe: the same token
    /// gets the same lease back while it holds it); not with `wait`.
    #[pyo3(signature = (resource, ttl, *, wait=None, token=None))]
    fn acquire(
        &self,
        py: Python<'_>,
        resource: String,
        ttl: &Bound<'_, PyAny>,
        wait: Option<&Bound<'_, PyAny>>,
        token: Option<&str>,
    ) -> PyResult<Py<PyAny>> {
        let ttl = duration(ttl, "ttl")?;
        let wait = opt_duration(wait, "wait")?;
        if wait.is_some() && token.is_some() {
            return Err(bad("acquire takes wait or token, not both"));
        }
        let token = owner_token(token)?;
        let locks = self.inner.clone();
        let bridge = self.bridge.clone();
        // Each form is the library's own entry point, which says whether a resend is safe.
        self.bridge.run(py, async move {
            let got = match (wait, token) {
                (Some(wait), _) => locks.acquire_timeout(&resource, ttl, wait).await?,
                (None, Some(token)) => locks.acquire_with_token(&resource, &token, ttl).await?,
                (None, None) => locks.acquire(&resource, ttl).await?,
            };
            Ok::<_, redis_atomic::Error>(Outcome::Acquire(got, bridge))
        })
    }

    /// Releases `resource` if `token` holds it with `fence`: `Released` or `Lost`.
    fn release(
        &self,
        py: Python<'_>,
        resource: String,
        token: &str,
        fence: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let (token, fence) = by_parts(token, fence)?;
        let locks = self.inner.clone();
        self.bridge.run(py, async move {
            locks
                .release(&resource, &token, fence)
                .await
                .map(Outcome::Release)
        })
    }

    /// Sets the lease `fence` of `token` on `resource` to end `ttl` from the server's now:
    /// `Extended` or `Lost`.
    fn extend(
        &self,
        py: Python<'_>,
        resource: String,
        token: &str,
        fence: &Bound<'_, PyAny>,
        ttl: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let (token, fence) = by_parts(token, fence)?;
        let ttl = duration(ttl, "ttl")?;
        let locks = self.inner.clone();
        self.bridge.run(py, async move {
            let out = locks.extend(&resource, &token, fence, ttl).await?;
            Ok::<_, redis_atomic::Error>(Outcome::Extend(out))
        })
    }

    /// The lock's state, read without changing it: `Locked(fence, ttl)` or `Free(last_fence)`.
    fn inspect(&self, py: Python<'_>, resource: String) -> PyResult<Py<PyAny>> {
        let locks = self.inner.clone();
        self.bridge.run(py, async move {
            Ok::<_, redis_atomic::Error>(Outcome::LockState(locks.inspect(&resource).await?))
        })
    }

    /// The keys of `resource`'s lock.
    fn keys(&self, resource: &str) -> PyResult<LockKeys> {
        let k = self.inner.keys(resource).map_err(raise)?;
        Ok(LockKeys {
            lock: k.lock,
            fence: k.fence,
        })
    }
}
