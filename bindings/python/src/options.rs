//! The client's settings, each a named option of `connect`, parsed in one place
//! ([`Settings::config`]) into the library's `ClientConfig`: `RetryPolicy`, `Replicas`,
//! `TlsOptions`, `Batching` (and what it did, `BatchStats`), `delivery`, `pool_size`, ...
//! Every value is checked by the library's own parser or builder where it has one (`delivery`
//! by `Delivery::from_str`); bounds (`pool_size`, `timeout`) are the library's (`ClientConfig::check`).

use crate::convert::{duration, opt_duration, secs, size, uint};
use crate::errors::{bad, raise};
use crate::record::record;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use redis_atomic::{
    BatchStats as LibStats, Batching as LibBatching, ClientConfig, Delivery, RetryPolicy as Policy,
    TlsOptions as Tls,
};
use std::time::Duration;

/// How often, and for how long, a call may be retried.
#[pyclass(frozen, eq, module = "redis_atomic")]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    pub(crate) inner: Policy,
}

#[pymethods]
impl RetryPolicy {
    #[new]
    #[pyo3(signature = (max_attempts=None, deadline=None, base_backoff=None, max_backoff=None))]
    fn new(
        max_attempts: Option<&Bound<'_, PyAny>>,
        deadline: Option<&Bound<'_, PyAny>>,
        base_backoff: Option<&Bound<'_, PyAny>>,
        max_backoff: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let d = Policy::default();
        let attempts =
            max_attempts.map_or(Ok(u64::from(d.max_attempts)), |a| uint(a, "max_attempts"))?;
        let attempts = u32::try_from(attempts).map_err(|_| bad("max_attempts too large"))?;
        let deadline = opt_duration(deadline, "deadline")?.unwrap_or(d.deadline);
        let base = opt_duration(base_backoff, "base_backoff")?.unwrap_or(d.base_backoff);
        let cap = opt_duration(max_backoff, "max_backoff")?.unwrap_or(d.max_backoff);
        Ok(RetryPolicy {
            inner: Policy::new(attempts, deadline).backoff(base, cap),
        })
    }

    /// Never retry.
    #[staticmethod]
    fn none() -> Self {
        RetryPolicy {
            inner: Policy::none(),
        }
    }

    /// The contention default: 16 attempts within 2 s, backoff 1 ms up to 50 ms.
    #[staticmethod]
    fn contention() -> Self {
        RetryPolicy {
            inner: Policy::contention(),
        }
    }

    #[getter]
    fn max_attempts(&self) -> u32 {
        self.inner.max_attempts
    }
    #[getter]
    fn deadline(&self) -> f64 {
        secs(self.inner.deadline)
    }
    #[getter]
    fn base_backoff(&self) -> f64 {
        secs(self.inner.base_backoff)
    }
    #[getter]
    fn max_backoff(&self) -> f64 {
        secs(self.inner.max_backoff)
    }

    fn __repr__(&self) -> String {
        format!(
            "RetryPolicy(max_attempts={}, deadline={:?}, base_backoff={:?}, max_backoff={:?})",
            self.inner.max_attempts,
            secs(self.inner.deadline),
            secs(self.inner.base_backoff),
            secs(self.inner.max_backoff)
        )
    }
}

/// `WAIT`-based durability: every write waits for `count` replicas, up to `timeout`.
#[pyclass(frozen, eq, module = "redis_atomic")]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replicas {
    count: u32,
    timeout: Duration,
}

#[pymethods]
impl Replicas {
    #[new]
    #[pyo3(signature = (count, timeout))]
    fn new(count: &Bound<'_, PyAny>, timeout: &Bound<'_, PyAny>) -> PyResult<Self> {
        let count = u32::try_from(uint(count, "count")?).map_err(|_| bad("count too large"))?;
        Ok(Replicas {
            count,
            timeout: duration(timeout, "timeout")?,
        })
    }
    #[getter]
    fn count(&self) -> u32 {
        self.count
    }
    #[getter]
    fn timeout(&self) -> f64 {
        secs(self.timeout)
    }
    fn __repr__(&self) -> String {
        format!(
            "Replicas(count={}, timeout={:?})",
            self.count,
            secs(self.timeout)
        )
    }
}

/// CA and client certificate for `rediss://` URLs, from files or PEM bytes.
#[pyclass(frozen, module = "redis_atomic")]
#[derive(Clone, Debug)]
pub struct TlsOptions {
    inner: Tls,
}

#[pymethods]
impl TlsOptions {
    #[new]
    #[pyo3(signature = (*, ca_file=None, ca_pem=None, client_cert_file=None, client_key_file=None,
                        client_cert_pem=None, client_key_pem=None))]
    fn new(
        ca_file: Option<std::path::PathBuf>,
        ca_pem: Option<Bound<'_, PyBytes>>,
        client_cert_file: Option<std::path::PathBuf>,
        client_key_file: Option<std::path::PathBuf>,
        client_cert_pem: Option<Bound<'_, PyBytes>>,
        client_key_pem: Option<Bound<'_, PyBytes>>,
    ) -> PyResult<Self> {
        let pem = |b: Option<Bound<'_, PyBytes>>| b.map(|b| b.as_bytes().to_vec());
        let (ca_pem, client_cert_pem, client_key_pem) =
            (pem(ca_pem), pem(client_cert_pem), pem(client_key_pem));
        if ca_file.is_some() && ca_pem.is_some() {
            return Err(bad("give ca_file or ca_pem, not both"));
        }
        let mut inner = Tls::new();
        if let Some(f) = ca_file {
            inner = inner.ca_file(f);
        }
        if let Some(p) = ca_pem {
            inner = inner.ca_pem(p);
        }
        inner = match (
            client_cert_file,
            client_key_file,
            client_cert_pem,
            client_key_pem,
        ) {
            (None, None, None, None) => inner,
            (Some(c), Some(k), None, None) => inner.client_cert_files(c, k),
            (None, None, Some(c), Some(k)) => inner.client_cert_pem(c, k),
            _ => {
                return Err(bad(
                    "a client certificate needs its key: client_cert_file with \
                     client_key_file, or client_cert_pem with client_key_pem",
                ))
            }
        };
        Ok(TlsOptions { inner })
    }
}

/// The settings of `connect`, as named options.
pub(crate) struct Settings<'py> {
    pub(crate) timeout: Option<Bound<'py, PyAny>>,
    pub(crate) retry: Option<Bound<'py, RetryPolicy>>,
    pub(crate) contention: Option<Bound<'py, RetryPolicy>>,
    pub(crate) delivery: Option<String>,
    pub(crate) pool_size: Option<Bound<'py, PyAny>>,
    pub(crate) replicas: Option<Bound<'py, Replicas>>,
    pub(crate) tls: Option<Bound<'py, TlsOptions>>,
    pub(crate) force_lua: Option<bool>,
    pub(crate) batching: Option<Bound<'py, PyAny>>,
}

impl Settings<'_> {
    pub(crate) fn config(&self) -> PyResult<ClientConfig> {
        let mut c = ClientConfig::default();
        if let Some(t) = &self.timeout {
            c = c.timeout(duration(t, "timeout")?);
        }
        if let Some(r) = &self.retry {
            c = c.retry(r.get().inner.clone());
        }
        if let Some(r) = &self.contention {
            c = c.contention(r.get().inner.clone());
        }
        if let Some(d) = &self.delivery {
            c = c.delivery(d.parse::<Delivery>().map_err(raise)?);
        }
        if self.pool_size.is_some() {
            // Bounded by the library (`ClientConfig::check`, at connect): set as given.
            c.pool_size = size(self.pool_size.as_ref(), "pool_size", 0)?;
        }
        if let Some(r) = &self.replicas {
            c = c.replicas(r.get().count, r.get().timeout);
        }
        if let Some(t) = &self.tls {
            c = c.tls(t.get().inner.clone());
        }
        if let Some(f) = self.force_lua {
            c = c.force_lua(f);
        }
        if let Some(b) = &self.batching {
            c = c.batching(Batching::of(b)?);
        }
        Ok(c)
    }
}

/// How decisions of batchable scripts may leave together (the library's `Batching`): on by
/// default; `Batching.off()` (or `batching=False`) sends every decision as a call of its own.
#[pyclass(frozen, eq, module = "redis_atomic")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Batching {
    inner: LibBatching,
}

impl Batching {
    /// From `batching=`: a `Batching`, or a bool (the default settings, or off).
    fn of(obj: &Bound<'_, PyAny>) -> PyResult<LibBatching> {
        if let Ok(b) = obj.cast::<Batching>() {
            return Ok(b.get().inner);
        }
        if obj.is_instance_of::<pyo3::types::PyBool>() {
            let on: bool = obj.extract()?;
            return Ok(if on {
                LibBatching::default()
            } else {
                LibBatching::off()
            });
        }
        Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "batching must be a bool or a Batching, got {}",
            obj.get_type().name()?
        )))
    }
}

#[pymethods]
impl Batching {
    /// The library's defaults, with any of them changed (each clamped by the library as its
    /// builder says: `in_flight` and `max_decisions` at least 1, `min_batch` at least 2).
    #[new]
    #[pyo3(signature = (*, enabled=true, in_flight=None, max_decisions=None, max_bytes=None,
                        min_batch=None))]
    fn new(
        enabled: bool,
        in_flight: Option<&Bound<'_, PyAny>>,
        max_decisions: Option<&Bound<'_, PyAny>>,
        max_bytes: Option<&Bound<'_, PyAny>>,
        min_batch: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let d = LibBatching::default();
        let mut inner = d
            .in_flight(size(in_flight, "in_flight", d.in_flight)?)
            .max(
                size(max_decisions, "max_decisions", d.max_decisions)?,
                size(max_bytes, "max_bytes", d.max_bytes)?,
            )
            .min_batch(size(min_batch, "min_batch", d.min_batch)?);
        inner.enabled = enabled;
        Ok(Batching { inner })
    }
    /// Every decision a call of its own.
    #[staticmethod]
    fn off() -> Self {
        Batching {
            inner: LibBatching::off(),
        }
    }
    #[getter]
    fn enabled(&self) -> bool {
        self.inner.enabled
    }
    #[getter]
    fn in_flight(&self) -> usize {
        self.inner.in_flight
    }
    #[getter]
    fn max_decisions(&self) -> usize {
        self.inner.max_decisions
    }
    #[getter]
    fn max_bytes(&self) -> usize {
        self.inner.max_bytes
    }
    #[getter]
    fn min_batch(&self) -> usize {
        self.inner.min_batch
    }
    fn __repr__(&self) -> String {
        let b = &self.inner;
        format!(
            "Batching(enabled={}, in_flight={}, max_decisions={}, max_bytes={}, min_batch={})",
            crate::lease::py_bool(b.enabled),
            b.in_flight,
            b.max_decisions,
            b.max_bytes,
            b.min_batch
        )
    }
}

record! {
    /// What a client's batching did so far (`Client.batch_stats()`): decisions of batchable
    /// scripts, those that went out at once and alone, batch calls sent, decisions that left in
    /// them, and decisions that waited and left as separate calls.
    BatchStats { decisions: u64, alone: u64, batches: u64, batched: u64, separate: u64 }
    {}
}

impl From<LibStats> for BatchStats {
    fn from(s: LibStats) -> Self {
        BatchStats {
            decisions: s.decisions,
            alone: s.alone,
            batches: s.batches,
            batched: s.batched,
            separate: s.separate,
        }
    }
}
