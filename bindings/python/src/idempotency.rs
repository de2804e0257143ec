//! Idempotency keys (`Idempotency`, `Claim`, `Response`, `Fingerprint`): a binding of the
//! library's `idempotency::Idempotency`.
//!
//! `begin` answers a `Claim` (run the request, then `complete(response)` or `fail(...)`),
//! `InProgress(retry_after)`, `Replay(response, failed)` or `Mismatch()`. The stored response is
//! the library's (status, headers, body bytes or a reference), encoded and decoded by it.

use crate::client::Client;
use crate::convert::{bytes_of, duration, opt_duration, secs, size, uint, values, Value};
use crate::errors::{bad, raise};
use crate::lease::{by_parts, handle, owner_token, unit, Abandon};
use crate::outcome::Outcome;
use crate::record::record;
use crate::runtime::Bridge;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};
use redis_atomic::idempotency::{self as idem, Body, Failure, IdempotencyConfig};
use redis_atomic::Keyspace;
use std::time::Duration;

impl Abandon for idem::Claim {
    const WHAT: &'static str = "idempotency claim";
    /// Frees the key: no code ran under this claim.
    async fn abandon(self) {
        let _ = self.fail(&Failure::Retryable).await;
    }
}

/// A request digest: equal requests under one key must have equal fingerprints.
#[pyclass(frozen, eq, hash, module = "redis_atomic")]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fingerprint {
    inner: idem::Fingerprint,
}

#[pymethods]
impl Fingerprint {
    /// SHA-256 over the parts (`str` as UTF-8, `bytes`, `int` in decimal), each length-prefixed.
    #[staticmethod]
    #[pyo3(signature = (*parts))]
    fn of(parts: &Bound<'_, PyTuple>) -> PyResult<Self> {
        let parts: Vec<Vec<u8>> = values(parts.as_any(), "parts")?
            .into_iter()
            .map(Value::into_bytes)
            .collect();
        let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
        Ok(Fingerprint {
            inner: idem::Fingerprint::of(&refs),
        })
    }
    fn __repr__(&self) -> &'static str {
        "Fingerprint(...)"
    }
}

/// A fingerprint argument: a `Fingerprint`, or the parts of one.
fn fingerprint_of(obj: &Bound<'_, PyAny>) -> PyResult<idem::Fingerprint> {
    if let Ok(f) = obj.cast::<Fingerprint>() {
        return Ok(f.get().inner);
    }
    let parts: Vec<Vec<u8>> = values(obj, "fingerprint")?
        .into_iter()
        .map(Value::into_bytes)
        .collect();
    let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
    Ok(idem::Fingerprint::of(&refs))
}

/// What replaying a request returns: a status, headers, and a body (bytes) or a reference to
/// where a large body is stored.
#[pyclass(frozen, eq, from_py_object, module = "redis_atomic")]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    pub(crate) inner: idem::Response,
}

#[pymethods]
impl Response {
    #[new]
    #[pyo3(signature = (status, body=None, *, headers=None, reference=None))]
    fn new(
        status: &Bound<'_, PyAny>,
        body: Option<&Bound<'_, PyAny>>,
        headers: Option<&Bound<'_, PyAny>>,
        reference: Option<String>,
    ) -> PyResult<Self> {
        let status = u16::try_from(uint(status, "status")?)
            .map_err(|_| bad("status must be in 0..=65535"))?;
        let body = match (body.filter(|b| !b.is_none()), reference) {
            (Some(_), Some(_)) => return Err(bad("give body or reference, not both")),
            (None, Some(r)) => Body::Reference(r),
            (Some(b), None) => Body::Bytes(bytes_of(b, "body")?),
            (None, None) => Body::Bytes(Vec::new()),
        };
        let mut pairs = Vec::new();
        if let Some(h) = headers.filter(|h| !h.is_none()) {
            for item in h.try_iter()? {
                let (name, value): (String, Bound<'_, PyAny>) = item?.extract()?;
                pairs.push((name, bytes_of(&value, "header value")?));
            }
        }
        Ok(Response {
            inner: idem::Response {
                status,
                headers: pairs,
                body,
            },
        })
    }
    #[getter]
    fn status(&self) -> u16 {
        self.inner.status
    }
    /// The body bytes (`b""` when the body is a reference).
    #[getter]
    fn body<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.inner.body_bytes().unwrap_or_default())
    }
    /// Where the body is stored, when it is a reference.
    #[getter]
    fn reference(&self) -> Option<&str> {
        match &self.inner.body {
            Body::Reference(r) => Some(r),
            _ => None,
        }
    }
    /// `(name, value)` pairs, values as bytes.
    #[getter]
    fn headers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let items = self
            .inner
            .headers
            .iter()
            .map(|(n, v)| (n.as_str(), PyBytes::new(py, v)))
            .collect::<Vec<_>>();
        PyList::new(py, items)
    }
    #[classattr]
    fn __match_args__() -> (&'static str, &'static str) {
        ("status", "body")
    }
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let body = match &self.inner.body {
            Body::Reference(r) => format!("reference={r:?}"),
            _ => format!("body={}", self.body(py).repr()?),
        };
        Ok(format!(
            "Response(status={}, {body}, headers={})",
            self.inner.status,
            self.headers(py)?.repr()?
        ))
    }
}

/// The request already finished: `response` is what it stored; `failed` when it was stored as a
/// final failure (`fail(response)`) rather than completed. Truthy.
#[pyclass(frozen, eq, module = "redis_atomic")]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replay {
    pub(crate) response: Response,
    pub(crate) failed: bool,
}

#[pymethods]
impl Replay {
    #[new]
    #[pyo3(signature = (response, failed=false))]
    fn new(response: Response, failed: bool) -> Self {
        Replay { response, failed }
    }
    #[getter]
    fn response(&self) -> Response {
        self.response.clone()
    }
    #[getter]
    fn failed(&self) -> bool {
        self.failed
    }
    fn __bool__(&self) -> bool {
        true
    }
    #[classattr]
    fn __match_args__() -> (&'static str, &'static str) {
        ("response", "failed")
    }
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let r = Bound::new(py, self.response.clone())?.repr()?;
        Ok(format!(
            "Replay(response={r}, failed={})",
            if self.failed { "True" } else { "False" }
        ))
    }
}

record! {
    /// Another executor holds a live claim; its lease ends in `retry_after` seconds. Falsy.
    InProgress { retry_after: Duration }
    {
        fn __bool__(&self) -> bool { false }
    }
}

unit! {
    /// The key was used with a different request (the fingerprints differ). Falsy.
    Mismatch, false
}

unit! {
    /// The claim's end was stored (for a retryable failure: the key freed). Truthy.
    Stored, true
}

record! {
    /// The key of one idempotency record.
    IdempotencyKeys { record: String }
    {}
}

handle! {
    /// A live claim: run the request, then `complete(response)` or `fail(...)` (both end it).
    /// Dropping it does nothing: the lease runs out and the next duplicate takes the key over.
    Claim(idem::Claim) { takeover: bool }
    {
        /// Whether this claim took over an earlier executor's expired lease.
        #[getter]
        fn is_takeover(&self) -> bool {
            self.takeover
        }
        /// Stores `response` for replay: `Stored` or `Lost` (superseded: nothing written).
        fn complete(&self, py: Python<'_>, response: Response) -> PyResult<Py<PyAny>> {
            let complete = move |c: idem::Claim| async move { c.complete(&response.inner).await };
            self.slot.end_verb(py, complete, Outcome::End)
        }
        /// Ends the claim with a failure: without `response` a retryable one (the key is freed:
        /// the next duplicate runs the request), with it a final one (stored for replay as
        /// `Replay(response, failed=True)`): `Stored` or `Lost`.
        #[pyo3(signature = (response=None))]
        fn fail(&self, py: Python<'_>, response: Option<Response>) -> PyResult<Py<PyAny>> {
            let failure = failure(response);
            self.slot.end_verb(py, move |c| async move { c.fail(&failure).await }, Outcome::End)
        }
        fn __repr__(&self) -> String {
            format!("Claim(fence={}, takeover={}, ended={})", self.fence,
                    crate::lease::py_bool(self.takeover), crate::lease::py_bool(self.slot.is_ended()))
        }
    }
}

fn failure(response: Option<Response>) -> Failure {
    match response {
        Some(r) => Failure::Final(r.inner),
        None => Failure::Retryable,
    }
}

/// Idempotency records under one namespace.
#[pyclass(frozen, module = "redis_atomic._native")]
pub struct Idempotency {
    inner: idem::Idempotency,
    bridge: Bridge,
}

fn key_bytes(key: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    bytes_of(key, "key")
}

#[pymethods]
impl Idempotency {
    #[new]
    #[pyo3(signature = (client, namespace, *, ttl=None, result_ttl=None, max_response_bytes=None))]
    fn new(
        client: &Bound<'_, Client>,
        namespace: &str,
        ttl: Option<&Bound<'_, PyAny>>,
        result_ttl: Option<&Bound<'_, PyAny>>,
        max_response_bytes: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let (client, bridge) = client.get().parts(client.py())?;
        let mut config = IdempotencyConfig::default();
        if let Some(t) = opt_duration(ttl, "ttl")? {
            config = config.ttl(t);
        }
        if let Some(t) = opt_duration(result_ttl, "result_ttl")? {
            config = config.result_ttl(t);
        }
        if max_response_bytes.is_some_and(|n| !n.is_none()) {
            let n = size(max_response_bytes, "max_response_bytes", 0)?;
            config = config.max_response_bytes(n);
        }
        let inner = idem::Idempotency::new(client, Keyspace::new(namespace).map_err(raise)?)
            .with_config(config)
            .map_err(raise)?;
        Ok(Idempotency { inner, bridge })
    }

    /// Claims (`scope`, `key`) for a request with `fingerprint` (a `Fingerprint`, or its parts):
    /// `Claim`, `InProgress`, `Replay` or `Mismatch`. `token`: the caller's owner token
    /// (retry-safe: the same token gets the same claim back while it is live).
    #[pyo3(signature = (scope, key, fingerprint, *, token=None))]
    fn begin(
        &self,
        py: Python<'_>,
        scope: String,
        key: &Bound<'_, PyAny>,
        fingerprint: &Bound<'_, PyAny>,
        token: Option<&str>,
    ) -> PyResult<Py<PyAny>> {
        let key = key_bytes(key)?;
        let fp = fingerprint_of(fingerprint)?;
        let token = owner_token(token)?;
        let store = self.inner.clone();
        let bridge = self.bridge.clone();
        self.bridge.run(py, async move {
            let b = match token {
                Some(token) => store.begin_with_token(&scope, &key, fp, &token).await?,
                None => store.begin(&scope, &key, fp).await?,
            };
            Ok::<_, redis_atomic::Error>(Outcome::Begin(b, bridge))
        })
    }

    /// Sets the lease of the claim `token` holds on (`scope`, `key`) with `fence` to end `ttl`
    /// from the server's now: `Extended` or `Lost`.
    fn extend(
        &self,
        py: Python<'_>,
        scope: String,
        key: &Bound<'_, PyAny>,
        token: &str,
        fence: &Bound<'_, PyAny>,
        ttl: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let key = key_bytes(key)?;
        let (token, fence) = by_parts(token, fence)?;
        let ttl = duration(ttl, "ttl")?;
        let store = self.inner.clone();
        self.bridge.run(py, async move {
            store
                .extend(&scope, &key, &token, fence, ttl)
                .await
                .map(Outcome::Extend)
        })
    }

    /// Stores `response` as the result of the claim `token` holds with `fence`: `Stored` or
    /// `Lost`. Repeating it is safe.
    fn complete(
        &self,
        py: Python<'_>,
        scope: String,
        key: &Bound<'_, PyAny>,
        token: &str,
        fence: &Bound<'_, PyAny>,
        response: Response,
    ) -> PyResult<Py<PyAny>> {
        let key = key_bytes(key)?;
        let (token, fence) = by_parts(token, fence)?;
        let store = self.inner.clone();
        self.bridge.run(py, async move {
            store
                .complete(&scope, &key, &token, fence, &response.inner)
                .await
                .map(Outcome::End)
        })
    }

    /// Ends the claim `token` holds with `fence` with a failure (retryable without `response`,
    /// final with it): `Stored` or `Lost`.
    #[pyo3(signature = (scope, key, token, fence, response=None))]
    fn fail(
        &self,
        py: Python<'_>,
        scope: String,
        key: &Bound<'_, PyAny>,
        token: &str,
        fence: &Bound<'_, PyAny>,
        response: Option<Response>,
    ) -> PyResult<Py<PyAny>> {
        let key = key_bytes(key)?;
        let (token, fence) = by_parts(token, fence)?;
        let failure = failure(response);
        let store = self.inner.clone();
        self.bridge.run(py, async move {
            store
                .fail(&scope, &key, &token, fence, &failure)
                .await
                .map(Outcome::End)
        })
    }

    /// The key of (`scope`, `key`)'s record.
    fn keys(&self, scope: &str, key: &Bound<'_, PyAny>) -> PyResult<IdempotencyKeys> {
        let k = self.inner.keys(scope, &key_bytes(key)?).map_err(raise)?;
        Ok(IdempotencyKeys { record: k.record })
    }

    /// The claim's lease, in seconds.
    #[getter]
    fn ttl(&self) -> f64 {
        secs(self.inner.config().ttl)
    }

    /// How long a stored result is kept, in seconds.
    #[getter]
    fn result_ttl(&self) -> f64 {
        secs(self.inner.config().result_ttl)
    }
}
