//! Counting semaphores with fenced permits (`Semaphore`, `Permit`): a binding of the library's
//! `semaphore::Semaphore`, a named instance of a fixed capacity.

use crate::client::Client;
use crate::convert::{duration, uint};
use crate::errors::raise;
use crate::lease::{by_parts, handle, owner_token, released_on_abandon};
use crate::outcome::Outcome;
use crate::record::record;
use crate::runtime::Bridge;
use pyo3::prelude::*;
use redis_atomic::semaphore::{self as sem, SemaphoreConfig};
use redis_atomic::Keyspace;
use std::time::Duration;

released_on_abandon!(sem::Permit, "permit");

record! {
    /// Every permit is taken; the earliest lease ends in `retry_after` seconds (a release may
    /// free one sooner). Falsy.
    Full { retry_after: Duration }
    {
        fn __bool__(&self) -> bool { false }
    }
}

record! {
    /// A semaphore's state: `live` unexpired permits, the earliest ending in `next_expiry`
    /// seconds (0 when none), and the last fence issued.
    SemaphoreState { live: u64, next_expiry: Duration, last_fence: u64 }
    {}
}

record! {
    /// The keys of one semaphore.
    SemaphoreKeys { permits: String, holders: String, fence: String }
    {}
}

handle! {
    /// A held permit. `release()` ends it; `extend(ttl)` renews it; `watch()` renews it in the
    /// background. Dropping it does nothing: the lease runs out.
    Permit(sem::Permit) {}
    {
        /// Gives the permit back if it is still live: `Released` or `Lost`. The handle is ended
        /// either way; after an unknown outcome repeat it by parts
        /// (`Semaphore.release(token, fence)`).
        fn release(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
            self.slot.end_verb(py, |p| p.release(), Outcome::Release)
        }
        fn __repr__(&self) -> String {
            format!("Permit(fence={}, ended={})", self.fence,
                    crate::lease::py_bool(self.slot.is_ended()))
        }
    }
}

/// One named semaphore of a fixed capacity.
#[pyclass(frozen, module = "redis_atomic._native")]
pub struct Semaphore {
    inner: sem::Semaphore,
    bridge: Bridge,
}

#[pymethods]
impl Semaphore {
    #[new]
    #[pyo3(signature = (client, namespace, name, capacity))]
    fn new(
        client: &Bound<'_, Client>,
        namespace: &str,
        name: &str,
        capacity: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let (client, bridge) = client.get().parts(client.py())?;
        let capacity = u32::try_from(uint(capacity, "capacity")?).unwrap_or(u32::MAX);
        let keyspace = Keyspace::new(namespace).map_err(raise)?;
        let inner = sem::Semaphore::new(client, &keyspace, name, SemaphoreConfig::new(capacity))
            .map_err(raise)?;
        Ok(Semaphore { inner, bridge })
    }

    /// Tries once to take a permit for `ttl`: a `Permit` or `Full`. `token`: the caller's owner
    /// token (retry-safe: the same token gets the same permit back while it holds one).
    #[pyo3(signature = (ttl, *, token=None))]
    fn acquire(
        &self,
        py: Python<'_>,
        ttl: &Bound<'_, PyAny>,
        token: Option<&str>,
    ) -> PyResult<Py<PyAny>> {
        let ttl = duration(ttl, "ttl")?;
        let token = owner_token(token)?;
        let s = self.inner.clone();
        let bridge = self.bridge.clone();
        self.bridge.run(py, async move {
            let got = match token {
                Some(token) => s.acquire_with_token(&token, ttl).await?,
                None => s.acquire(ttl).await?,
            };
            Ok::<_, redis_atomic::Error>(Outcome::Permit(got, bridge))
        })
    }

    /// Gives back the permit `token` holds with `fence`: `Released` or `Lost`.
    fn release(
        &self,
        py: Python<'_>,
        token: &str,
        fence: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let (token, fence) = by_parts(token, fence)?;
        let s = self.inner.clone();
        self.bridge.run(py, async move {
            s.release(&token, fence).await.map(Outcome::Release)
        })
    }

    /// Sets the lease of the permit `token` holds with `fence` to end `ttl` from the server's
    /// now: `Extended` or `Lost`.
    fn extend(
        &self,
        py: Python<'_>,
        token: &str,
        fence: &Bound<'_, PyAny>,
        ttl: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let (token, fence) = by_parts(token, fence)?;
        let ttl = duration(ttl, "ttl")?;
        let s = self.inner.clone();
        self.bridge.run(py, async move {
            s.extend(&token, fence, ttl).await.map(Outcome::Extend)
        })
    }

    /// Counts live permits (read-only): a `SemaphoreState`.
    fn inspect(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let s = self.inner.clone();
        self.bridge.run(py, async move {
            let st = s.inspect().await?;
            Ok::<_, redis_atomic::Error>(SemaphoreState {
                live: u64::from(st.live),
                next_expiry: st.next_expiry,
                last_fence: st.last_fence.0,
            })
        })
    }

    /// The keys of this semaphore.
    #[getter]
    fn keys(&self) -> SemaphoreKeys {
        let k = self.inner.keys();
        SemaphoreKeys {
            permits: k.permits.clone(),
            holders: k.holders.clone(),
            fence: k.fence.clone(),
        }
    }

    /// The capacity.
    #[getter]
    fn capacity(&self) -> u32 {
        self.inner.capacity()
    }
}
