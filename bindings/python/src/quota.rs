//! Quotas and counters (`Quotas`), and event dedup (`Dedup`): thin bindings of the library's
//! `quota::Quotas` and `dedup::Dedup`.

use crate::client::Client;
use crate::convert::{duration, int, opt_duration, secs, unknown, values};
use crate::errors::raise;
use crate::record::record;
use crate::runtime::Bridge;
use pyo3::prelude::*;
use redis_atomic::dedup::Dedup as LibDedup;
use redis_atomic::lease::OwnerToken;
use redis_atomic::quota::{self, Bounded, Raise};
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
    /// The add applied (clamped, for `add_clamped`); `value` is the counter after it.
    Applied { value: i64 }
    {}
}

record! {
    /// The add was refused: it would have left the bounds. Nothing changed; `value` is the
    /// unchanged counter.
    Refused { value: i64 }
    {}
}

record! {
    /// The value was below the candidate and now equals it.
    Raised { value: i64 }
    {}
}

record! {
    /// The value already held at least the candidate; unchanged.
    Kept { value: i64 }
    {}
}

/// A bounded add's result on its way to Python.
struct BoundedOut(Bounded);

crate::convert::to_python!(BoundedOut, |this, py| {
    match this.0 {
        Bounded::Refused { value } => Refused { value }.into_bound_py_any(py),
        Bounded::Applied { value } => Applied { value }.into_bound_py_any(py),
        _ => Err(unknown("bounded add")),
    }
});

/// A monotonic max's result on its way to Python.
struct RaiseOut(Raise);

crate::convert::to_python!(RaiseOut, |this, py| {
    match this.0 {
        Raise::Raised { value } => Raised { value }.into_bound_py_any(py),
        Raise::Kept { value } => Kept { value }.into_bound_py_any(py),
        _ => Err(unknown("raise")),
    }
});

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
        let (client, bridge) = client.get().parts();
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
        self.bridge.run(py, request_id.is_some(), async move {
            let out = match (request_id, clamp) {
                (None, false) => q.add(&name, delta, bounds, ttl).await?,
                (None, true) => q.add_clamped(&name, delta, bounds, ttl).await?,
                (Some(id), false) => q.add_with_id(&name, delta, bounds, ttl, &id).await?,
                (Some(id), true) => {
                    q.add_clamped_with_id(&name, delta, bounds, ttl, &id)
                        .await?
                }
            };
            Ok(BoundedOut(out))
        })
    }

    /// The counter's value (0 when absent).
    fn get(&self, py: Python<'_>, name: String) -> PyResult<Py<PyAny>> {
        let q = self.inner.clone();
        self.bridge.run(py, true, async move { q.get(&name).await })
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
            .run(py, true, async move { q.expire_once(&name, ttl).await })
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
            .run(py, true, async move { q.extend_ttl(&name, ttl).await })
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
        self.bridge.run(py, true, async move {
            Ok(RaiseOut(q.raise(&name, candidate).await?))
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
            let member = crate::convert::Value::of(&member, "member")?.into_bytes();
            pairs.push((int(&score, "score")?, member));
        }
        let q = self.inner.clone();
        self.bridge.run(py, true, async move {
            let entries: Vec<(i64, &[u8])> =
                pairs.iter().map(|(s, m)| (*s, m.as_slice())).collect();
            q.add_unless_smaller(&set, &entries).await
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

fn token_of(token: Option<&str>) -> PyResult<(OwnerToken, bool)> {
    match token {
        Some(t) => Ok((OwnerToken::new(t).map_err(raise)?, true)),
        None => Ok((OwnerToken::random(), false)),
    }
}

#[pymethods]
impl Dedup {
    #[new]
    fn new(client: &Bound<'_, Client>, namespace: &str) -> PyResult<Self> {
        let (client, bridge) = client.get().parts();
        let inner = LibDedup::new(client, Keyspace::new(namespace).map_err(raise)?);
        Ok(Dedup { inner, bridge })
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
        let (token, safe) = token_of(token)?;
        let d = self.inner.clone();
        self.bridge.run(py, safe, async move {
            d.first_seen_as(&event_id, ttl, &token).await
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
        let ids: Vec<String> = values(event_ids, "event_ids")?
            .into_iter()
            .map(|v| String::from_utf8(v.into_bytes()))
            .collect::<Result<_, _>>()
            .map_err(|_| {
                raise(redis_atomic::Error::BadArgument(
                    "event ids must be UTF-8".into(),
                ))
            })?;
        let ttl = duration(ttl, "ttl")?;
        let (token, safe) = token_of(token)?;
        let d = self.inner.clone();
        self.bridge.run(py, safe, async move {
            let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
            d.first_seen_many_as(&ids, ttl, &token).await
        })
    }
}
