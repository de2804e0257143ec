//! The client: one native `Client` class serves both Python faces, `redis_atomic.Client`
//! (blocking) and `redis_atomic.AsyncClient` (asyncio), which wrap it with a [`Mode`]; every
//! primitive made from it answers the same way ([`Bridge::run`]). Its settings are parsed in
//! `options.rs`; URLs are the library's (`redis://`, `rediss://`, `redis+unix://`,
//! `redis+sentinel://`), a list of seed URLs is a Redis Cluster.
//!
//! **Closing.** `close()` marks the client's bridge closed — every later call of the client,
//! of a primitive made from it or of a handle they granted raises `ClientError` — and drops the
//! client's own handle on the library's pool: its connections close once the primitives made
//! from it are dropped too.

use crate::convert::{secs, Value};
use crate::errors::Error;
use crate::options::{BatchStats, Replicas, RetryPolicy, Settings, TlsOptions};
use crate::runtime::{Bridge, Mode};
use crate::scripts::{Script, ScriptReply};
use pyo3::prelude::*;
use redis_atomic::ClientConfig;
use std::sync::Mutex;

/// A connected client: the library's `Client` (until closed), and how it answers.
#[pyclass(frozen, module = "redis_atomic._native")]
pub struct Client {
    inner: Mutex<Option<redis_atomic::Client>>,
    config: ClientConfig,
    cluster: bool,
    bridge: Bridge,
}

impl Client {
    fn new(inner: redis_atomic::Client, bridge: Bridge) -> Self {
        Client {
            config: inner.config().clone(),
            cluster: inner.is_cluster(),
            inner: Mutex::new(Some(inner)),
            bridge,
        }
    }

    /// The library client, unless closed.
    fn library(&self) -> Result<redis_atomic::Client, Error> {
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.clone().ok_or(Error::Closed)
    }

    /// The library client and bridge for a primitive made from this client.
    pub(crate) fn parts(&self, py: Python<'_>) -> PyResult<(redis_atomic::Client, Bridge)> {
        let client = self.library().map_err(|e| e.into_py(py))?;
        Ok((client, self.bridge.clone()))
    }
}

#[pymethods]
impl Client {
    /// Connects to `target`: one URL, or a list of seed URLs of a Redis Cluster. Blocking
    /// (`is_async` false) returns the client; async returns an awaitable of it.
    #[staticmethod]
    #[pyo3(signature = (target, is_async, *, timeout=None, retry=None, contention=None,
                        delivery=None, pool_size=None, replicas=None, tls=None, force_lua=None,
                        batching=None))]
    #[allow(clippy::too_many_arguments)]
    fn connect<'py>(
        py: Python<'py>,
        target: &Bound<'py, PyAny>,
        is_async: bool,
        timeout: Option<Bound<'py, PyAny>>,
        retry: Option<Bound<'py, RetryPolicy>>,
        contention: Option<Bound<'py, RetryPolicy>>,
        delivery: Option<String>,
        pool_size: Option<Bound<'py, PyAny>>,
        replicas: Option<Bound<'py, Replicas>>,
        tls: Option<Bound<'py, TlsOptions>>,
        force_lua: Option<bool>,
        batching: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let settings = Settings {
            timeout,
            retry,
            contention,
            delivery,
            pool_size,
            replicas,
            tls,
            force_lua,
            batching,
        };
        let config = settings.config()?;
        let target = match target.extract::<String>() {
            Ok(url) => Target::Url(url),
            Err(_) => Target::Seeds(target.extract()?),
        };
        let mode = if is_async {
            Mode::Async
        } else {
            Mode::Blocking
        };
        let bridge = Bridge::current(mode).map_err(|e| e.into_py(py))?;
        bridge.clone().run(py, async move {
            let inner = match target {
                Target::Url(url) => redis_atomic::Client::connect(&url, config).await?,
                Target::Seeds(seeds) if seeds.is_empty() => {
                    return Err(redis_atomic::Error::BadArgument(
                        "a cluster needs at least one seed URL".into(),
                    ))
                }
                Target::Seeds(seeds) => {
                    redis_atomic::Client::connect_cluster(&seeds, config).await?
                }
            };
            Ok(Client::new(inner, bridge))
        })
    }

    /// Runs a script of a `ScriptSet` with `keys` and `args` (str, bytes or int each): its reply
    /// as a `ScriptReply`. Retried by the script's header (`retry: safe|unsafe`).
    #[pyo3(signature = (script, keys, args))]
    fn call(
        &self,
        py: Python<'_>,
        script: &Bound<'_, Script>,
        keys: &Bound<'_, PyAny>,
        args: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let def = script.get().def;
        let keys = crate::convert::texts(keys, "keys")?;
        let args: Vec<Value> = crate::convert::values(args, "args")?;
        let (client, bridge) = self.parts(py)?;
        bridge.run(py, async move {
            let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
            let args: Vec<redis_atomic::Arg<'_>> = args.iter().map(Value::arg).collect();
            let reply = client.call(def, &keys, &args).await?;
            Ok::<_, redis_atomic::Error>(ScriptReply::of(reply))
        })
    }

    /// What batching did so far (counters since the client connected).
    fn batch_stats(&self, py: Python<'_>) -> PyResult<BatchStats> {
        Ok(self.parts(py)?.0.batch_stats().into())
    }

    /// Closes the client: every later call of it, of a primitive made from it or of a handle
    /// they granted raises `ClientError`. A second close does nothing.
    fn close(&self) {
        self.bridge.close();
        drop(self.inner.lock().unwrap_or_else(|p| p.into_inner()).take());
    }

    /// Whether `close()` ran.
    #[getter]
    fn closed(&self) -> bool {
        self.bridge.is_closed()
    }

    /// Whether this client talks to a Redis Cluster.
    #[getter]
    fn is_cluster(&self) -> bool {
        self.cluster
    }

    /// The per-request timeout, in seconds.
    #[getter]
    fn timeout(&self) -> f64 {
        secs(self.config.timeout)
    }

    /// Whether this client answers with awaitables.
    #[getter]
    fn is_async(&self) -> bool {
        self.bridge.mode == Mode::Async
    }

    fn __repr__(&self) -> String {
        let c = &self.config;
        format!(
            "Client(cluster={}, timeout={:?}, delivery={}, pool_size={}, async={}, closed={})",
            crate::lease::py_bool(self.cluster),
            secs(c.timeout),
            c.delivery.name(),
            c.pool_size,
            crate::lease::py_bool(self.bridge.mode == Mode::Async),
            crate::lease::py_bool(self.bridge.is_closed()),
        )
    }
}

/// Where `connect` goes: one URL, or the seeds of a cluster.
enum Target {
    Url(String),
    Seeds(Vec<String>),
}
