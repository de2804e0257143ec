//! Quotas and counters (`Quotas`), and event dedup (`Dedup`): thin bindings of the library's
//! `quota::Quotas` and `dedup::Dedup`.

use crate::client::Client;
use crate::convert::{bytes_of, duration, int, opt_duration, secs, strs};
use crate::errors::raise;
use crate::lease::owner_token;
use crate::outcome::Outcome;
use crate::record::record;
use crate::runtime::Bridge;
use pyo3::prelude::*;
use redis_atomic::dedup::Dedup as LibDedup;
use redis_atomic::quota;
use redis_atomic::Keyspace;

/// Inclusive bounds of a counter.
#[pyclass(frozen, eq, module = "redis_atomic")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    inner: quota::Bounds,
}

#[pymethods]
impl Bounds {
    /// `[min, max]`, with `min <= max`, both within ±(2^53 - 1).
    #[new]
    #[pyo3(signature = (min, max))]
    fn new(min: &Bound<'_, PyAny>, max: &Bound<'_, PyAny>) -> PyResult<Self> {
        let inner = quota::Bounds::new(int(min, "min")?, int(max, "max")?).map_err(raise)?;
        Ok(Bounds { inner })
    }
    /// `[0, max]`: a quota that refunds never take below zero.
    #[staticmethod]
    fn up_to(max: &Bound<'_, PyAny>) -> PyResult<Self> {
        let inner = quota::Bounds::up_to(int(max, "max")?).map_err(raise)?;
        Ok(Bounds { inner })
    }
    #[getter]
    fn min(&self) -> i64 {
        self.inner.min()
    }
    #[getter]
    fn max(&self) -> i64 {
        self.inner.max()
    }
    #[classattr]
    fn __match_args__() -> (&'static str, &'static str) {
        ("min", "max")
    }
    fn __repr__(&self) -> String {
        format!("Bounds(min={}, max={})", self.inner.min(), self.inner.max())
    }
}

record! {
    /// The add applied (clamped, for `add_clamped`); `value` is the counter after it. Truthy.
    Applied { value: i64 }
    {
        fn __bool__(&self) -> bool { true }
    }
}

record! {
    /// The add was refused: it would have left the bounds. Nothing changed; `value` is the
    /// unchanged counter. Falsy.
    Refused { value: i64 }
    {
        fn __bool__(&self) -> bool { false }
    }
}

record! {
    /// The value was below the candidate and now equals it. Truthy.
    Raised { value: i64 }
    {
        fn __bool__(&self) -> bool { true }
    }
}

record! {
    /// The value already held at least the candidate; unchanged. Falsy.
    Kept { value: i64 }
    {
        fn __bool__(&self) -> bool { false }
    }
}

record! {
    /// The keys of one counter: its value, and the record of a request id's first answer.
    QuotaKeys { value: String, request: Option<String> }
    {}
}

record! {
    /// The key of one event id's first sighting.
    DedupKeys { seen: String }
    {}
}

fn bounds_of(obj: &Bound<'_, PyAny>) -> PyResult<quota::Bounds> {
    if let Ok(b) = obj.cast::<Bounds>() {
        return Ok(b.get().inner);
    }
    let (min, max): (Bound<'_, PyAny>, Bound<'_, PyAny>) = obj.extract().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err("bounds must be Bounds or a (min, max) tuple")
    })?;
    quota::Bounds::new(int(&min, "min")?, int(&max, "max")?).map_err(raise)
}

/// Counters and sorted sets under one namespace.
#[pyclass(frozen, module = "redis_atomic._native")]
pub struct Quotas {
    inner: quota::Quotas,
    bridge: Bridge,
}

#[pymethods]
impl Quotas {
    #[new]
    #[pyo3(signature = (client, namespace, *, request_ttl=None))]
    fn new(
        client: &Bound<'_, Client>,
        namespace: &str,
        request_ttl: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let (client, bridge) = client.get().parts(client.py())?;
        let mut inner = quota::Quotas::new(client, Keyspace::new(namespace).map_err(raise)?);
        if let Some(ttl) = opt_duration(request_ttl, "request_ttl")? {
            inner = inner.with_request_ttl(ttl).map_err(raise)?;
        }
        Ok(Quotas { inner, bridge })
    }

    /// Adds `delta` within `bounds`: `Applied` or `Refused` (clamped into them when `clamp`).
    /// `ttl` is set when the counter is created and never extended. With `request_id` the add
    /// is retry-safe: a repeat returns the first answer and adds nothing.
    #[pyo3(signature = (name, delta, bounds, *, ttl=None, request_id=None, clamp=false))]
    #[allow(clippy::too_many_arguments)]
    fn add(
        &self,
        py: Python<'_>,
        name: String,
        delta: &Bound<'_, PyAny>,
        bounds: &Bound<'_, PyAny>,
        ttl: Option<&Bound<'_, PyAny>>,
        request_id: Option<String>,
        clamp: bool,
    ) -> PyResult<Py<PyAny>> {
        let delta = int(delta, "delta")?;
        let bounds = bounds_of(bounds)?;
        let ttl = opt_duration(ttl, "ttl")?;
        let q = self.inner.clone();
        self.bridge.run(py, async move {
            let out = match (request_id, clamp) {
                (None, false) => q.add(&name, delta, bounds, ttl).await?,
                (None, true) => q.add_clamped(&name, delta, bounds, ttl).await?,
                (Some(id), false) => q.add_with_id(&name, delta, bounds, ttl, &id).await?,
                (Some(id), true) => {
                    q.add_clamped_with_id(&name, delta, bounds, ttl, &id)
                        .await?
                }
            };
            Ok(Outcome::Bounded(out))
        })
    }

    /// The counter's value (0 when absent).
    fn get(&self, py: Python<'_>, name: String) -> PyResult<Py<PyAny>> {
        let q = self.inner.clone();
        self.bridge.run(py, async move { q.get(&name).await })
    }

    /// Sets the counter's TTL only if it has none: whether it was set.
    fn expire_once(
        &self,
        py: Python<'_>,
        name: String,
        ttl: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let ttl = duration(ttl, "ttl")?;
        let q = self.inner.clone();
        self.bridge
            .run(py, async move { q.expire_once(&name, ttl).await })
    }

    /// Moves the counter's expiry to `ttl` from now only if that is later: whether it moved.
    fn extend_ttl(
        &self,
        py: Python<'_>,
        name: String,
        ttl: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let ttl = duration(ttl, "ttl")?;
        let q = self.inner.clone();
        self.bridge
            .run(py, async move { q.extend_ttl(&name, ttl).await })
    }

    /// Raises the value to `candidate` unless it already holds at least that: `Raised` or
    /// `Kept` (a monotonic max).
    fn raise_to(
        &self,
        py: Python<'_>,
        name: String,
        candidate: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let candidate = int(candidate, "candidate")?;
        let q = self.inner.clone();
        self.bridge.run(py, async move {
            Ok(Outcome::Raise(q.raise(&name, candidate).await?))
        })
    }

    /// `ZADD GT CH` of `(score, member)` pairs: adds new members and raises smaller scores,
    /// never lowering one. How many were added or raised.
    fn add_unless_smaller(
        &self,
        py: Python<'_>,
        set: String,
        entries: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let mut pairs = Vec::new();
        for item in entries.try_iter()? {
            let (score, member): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract()?;
            let member = bytes_of(&member, "member")?;
            pairs.push((int(&score, "score")?, member));
        }
        let q = self.inner.clone();
        self.bridge.run(py, async move {
            let entries: Vec<(i64, &[u8])> =
                pairs.iter().map(|(s, m)| (*s, m.as_slice())).collect();
            q.add_unless_smaller(&set, &entries).await
        })
    }

    /// The keys of counter `name` (with `request_id`: its record too).
    #[pyo3(signature = (name, request_id=None))]
    fn keys(&self, name: &str, request_id: Option<&str>) -> PyResult<QuotaKeys> {
        let k = self.inner.keys(name, request_id).map_err(raise)?;
        Ok(QuotaKeys {
            value: k.value,
            request: k.request,
        })
    }

    /// How long request ids are remembered, in seconds.
    #[getter]
    fn request_ttl(&self) -> f64 {
        secs(self.inner.request_ttl())
    }
}

/// Event dedup under one namespace.
#[pyclass(frozen, module = "redis_atomic._native")]
pub struct Dedup {
    inner: LibDedup,
    bridge: Bridge,
}

#[pymethods]
impl Dedup {
    #[new]
    fn new(client: &Bound<'_, Client>, namespace: &str) -> PyResult<Self> {
        let (client, bridge) = client.get().parts(client.py())?;
        let inner = LibDedup::new(client, Keyspace::new(namespace).map_err(raise)?);
        Ok(Dedup { inner, bridge })
    }

    /// The key of `event_id`'s sighting.
    fn keys(&self, event_id: &str) -> PyResult<DedupKeys> {
        let k = self.inner.keys(event_id).map_err(raise)?;
        Ok(DedupKeys { seen: k.seen })
    }

    /// Whether this is the first sighting of `event_id` within `ttl`. With `token`, asking
    /// again with the same token gives the same answer (use it after an unknown outcome).
    #[pyo3(signature = (event_id, ttl, *, token=None))]
    fn first_seen(
        &self,
        py: Python<'_>,
        event_id: String,
        ttl: &Bound<'_, PyAny>,
        token: Option<&str>,
    ) -> PyResult<Py<PyAny>> {
        let ttl = duration(ttl, "ttl")?;
        let token = owner_token(token)?;
        let d = self.inner.clone();
        self.bridge.run(py, async move {
            match token {
                Some(token) => d.first_seen_as(&event_id, ttl, &token).await,
                None => d.first_seen(&event_id, ttl).await,
            }
        })
    }

    /// `first_seen` for many ids (at most 1000), answers in order; an id repeated in one batch
    /// is true at most once. Not atomic across ids.
    #[pyo3(signature = (event_ids, ttl, *, token=None))]
    fn first_seen_many(
        &self,
        py: Python<'_>,
        event_ids: &Bound<'_, PyAny>,
        ttl: &Bound<'_, PyAny>,
        token: Option<&str>,
    ) -> PyResult<Py<PyAny>> {
        let ids = strs(event_ids, "event_ids")?;
        let ttl = duration(ttl, "ttl")?;
        let token = owner_token(token)?;
        let d = self.inner.clone();
        self.bridge.run(py, async move {
            let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
            match token {
                Some(token) => d.first_seen_many_as(&ids, ttl, &token).await,
                None => d.first_seen_many(&ids, ttl).await,
            }
        })
    }
}
