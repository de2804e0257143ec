//! Fenced writes (`FencedWrites`) and the typed writes they apply (`Write`): bindings of the
//! library's `fenced::FencedWrites` and `write::Write`.

use crate::client::Client;
use crate::convert::{duration, opt_duration, strs, uint, values, Value};
use crate::errors::raise;
use crate::outcome::Outcome;
use crate::record::record;
use crate::runtime::Bridge;
use pyo3::prelude::*;
use pyo3::types::PyMapping;
use redis_atomic::fenced;
use redis_atomic::write::Write as LibWrite;
use redis_atomic::{Fence, Keyspace};

/// One idempotent write to one key (`SET`, `HSET`, `HDEL`, `SADD`, `SREM`, `DEL`, `PEXPIRE`).
#[pyclass(frozen, eq, module = "redis_atomic")]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Write {
    inner: LibWrite,
}

fn bytes_list(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<Vec<u8>>> {
    Ok(values(obj, what)?
        .into_iter()
        .map(Value::into_bytes)
        .collect())
}

#[pymethods]
impl Write {
    /// `SET key value [PX ttl]`.
    #[staticmethod]
    #[pyo3(signature = (key, value, *, ttl=None))]
    fn set(
        key: String,
        value: &Bound<'_, PyAny>,
        ttl: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let value = Value::of(value, "value")?.into_bytes();
        let inner = match opt_duration(ttl, "ttl")? {
            Some(t) => LibWrite::set_px(key, value, t),
            None => LibWrite::set(key, value),
        };
        Ok(Write { inner })
    }

    /// `HSET key field value ...` from a mapping of field to value.
    #[staticmethod]
    fn hset(key: String, fields: &Bound<'_, PyMapping>) -> PyResult<Self> {
        let mut pairs = Vec::new();
        for item in fields.items()?.iter() {
            let (f, v): (String, Bound<'_, PyAny>) = item.extract()?;
            pairs.push((f, Value::of(&v, "value")?.into_bytes()));
        }
        Ok(Write {
            inner: LibWrite::hset(key, pairs),
        })
    }

    /// `HDEL key field ...`.
    #[staticmethod]
    fn hdel(key: String, fields: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Write {
            inner: LibWrite::hdel(key, strs(fields, "fields")?),
        })
    }

    /// `SADD key member ...`.
    #[staticmethod]
    fn sadd(key: String, members: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Write {
            inner: LibWrite::sadd(key, bytes_list(members, "members")?),
        })
    }

    /// `SREM key member ...`.
    #[staticmethod]
    fn srem(key: String, members: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Write {
            inner: LibWrite::srem(key, bytes_list(members, "members")?),
        })
    }

    /// `DEL key`.
    #[staticmethod]
    fn delete(key: String) -> Self {
        Write {
            inner: LibWrite::del(key),
        }
    }

    /// `PEXPIRE key ttl` (from the server's now).
    #[staticmethod]
    fn expire(key: String, ttl: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Write {
            inner: LibWrite::expire(key, duration(ttl, "ttl")?),
        })
    }

    /// The key written.
    #[getter]
    fn key(&self) -> &str {
        self.inner.key()
    }

    fn __repr__(&self) -> String {
        format!("Write({:?})", self.inner)
    }
}

record! {
    /// Every write applied; `fence` is now the highest that wrote. Truthy.
    Written { fence: u64, writes: u64 }
    {
        fn __bool__(&self) -> bool { true }
    }
}

record! {
    /// A larger fence has written: nothing applied. `highest`: that fence. Falsy.
    Stale { highest: u64 }
    {
        fn __bool__(&self) -> bool { false }
    }
}

/// Fenced writes under one namespace.
#[pyclass(frozen, module = "redis_atomic._native")]
pub struct FencedWrites {
    inner: fenced::FencedWrites,
    bridge: Bridge,
}

#[pymethods]
impl FencedWrites {
    #[new]
    #[pyo3(signature = (client, namespace, *, retention=None))]
    fn new(
        client: &Bound<'_, Client>,
        namespace: &str,
        retention: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let (client, bridge) = client.get().parts(client.py())?;
        let mut inner = fenced::FencedWrites::new(client, Keyspace::new(namespace).map_err(raise)?);
        if let Some(r) = opt_duration(retention, "retention")? {
            inner = inner.with_retention(r).map_err(raise)?;
        }
        Ok(FencedWrites { inner, bridge })
    }

    /// A data key under `resource`'s hash tag: `<ns>:fenced:v1:{resource}:data:<part>`.
    fn key(&self, resource: &str, part: &str) -> PyResult<String> {
        self.inner.key(resource, part).map_err(raise)
    }

    /// The key of `resource`'s fence record.
    fn fence_key(&self, resource: &str) -> PyResult<String> {
        Ok(self.inner.keys(resource).map_err(raise)?.fence)
    }

    /// Applies `writes` only if `fence` is at least the highest fence that wrote to
    /// `resource`, and records it: `Written` or `Stale`. Retry-safe.
    fn write(
        &self,
        py: Python<'_>,
        resource: String,
        fence: &Bound<'_, PyAny>,
        writes: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let fence = Fence(uint(fence, "fence")?);
        let writes = writes
            .try_iter()?
            .map(|w| Ok(w?.cast::<Write>()?.get().inner.clone()))
            .collect::<PyResult<Vec<_>>>()?;
        let f = self.inner.clone();
        self.bridge.run(py, async move {
            Ok(Outcome::Fenced(
                f.fenced_write(&resource, fence, &writes).await?,
            ))
        })
    }

    /// The highest fence that wrote to `resource` (0 if none is remembered).
    fn highest(&self, py: Python<'_>, resource: String) -> PyResult<Py<PyAny>> {
        let f = self.inner.clone();
        self.bridge
            .run(py, async move { Ok(f.highest(&resource).await?.0) })
    }
}
