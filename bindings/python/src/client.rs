//! The client and every `ClientConfig` setting as a named option.
//!
//! One native `Client` class serves both Python faces: `redis_atomic.Client` (blocking) and
//! `redis_atomic.AsyncClient` (asyncio) wrap it with a [`Mode`], and every primitive made from
//! it answers the same way ([`Bridge::run`]). Each setting maps to one `ClientConfig` builder
//! call; URLs are the library's (`redis://`, `rediss://`, `redis+unix://`,
//! `redis+sentinel://`), a list of seed URLs is a Redis Cluster.

use crate::convert::{duration, opt_duration, secs, uint, Value};
use crate::errors::raise;
use crate::runtime::{Bridge, Mode};
use crate::scripts::{Script, ScriptReply};
use pyo3::prelude::*;
use redis_atomic::{ClientConfig, Delivery, RetryPolicy as Policy, TlsOptions as Tls};
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
        let attempts = u32::try_from(attempts).map_err(|_| {
            raise(redis_atomic::Error::BadArgument(
                "max_attempts too large".into(),
            ))
        })?;
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
        let count = u32::try_from(uint(count, "count")?)
            .map_err(|_| raise(redis_atomic::Error::BadArgument("count too large".into())))?;
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
        ca_pem: Option<Vec<u8>>,
        client_cert_file: Option<std::path::PathBuf>,
        client_key_file: Option<std::path::PathBuf>,
        client_cert_pem: Option<Vec<u8>>,
        client_key_pem: Option<Vec<u8>>,
    ) -> PyResult<Self> {
        let bad = |m: &str| raise(redis_atomic::Error::BadArgument(m.into()));
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
    timeout: Option<Bound<'py, PyAny>>,
    retry: Option<Bound<'py, RetryPolicy>>,
    contention: Option<Bound<'py, RetryPolicy>>,
    delivery: Option<String>,
    pool_size: Option<Bound<'py, PyAny>>,
    replicas: Option<Bound<'py, Replicas>>,
    tls: Option<Bound<'py, TlsOptions>>,
    force_lua: Option<bool>,
}

impl Settings<'_> {
    fn config(&self) -> PyResult<ClientConfig> {
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
            c = c.delivery(match d.as_str() {
                "evalsha" => Delivery::Eval,
                "functions" => Delivery::Functions,
                other => {
                    return Err(raise(redis_atomic::Error::BadArgument(format!(
                        "delivery must be \"evalsha\" or \"functions\", got {other:?}"
                    ))))
                }
            });
        }
        if let Some(n) = &self.pool_size {
            let n = usize::try_from(uint(n, "pool_size")?).unwrap_or(usize::MAX);
            if n == 0 || n > 1024 {
                return Err(raise(redis_atomic::Error::BadArgument(format!(
                    "pool_size must be in 1..=1024, got {n}"
                ))));
            }
            c = c.pool_size(n);
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
        Ok(c)
    }
}

/// A connected client: the library's `Client`, and how it answers.
#[pyclass(frozen, module = "redis_atomic._native")]
pub struct Client {
    pub(crate) inner: redis_atomic::Client,
    pub(crate) bridge: Bridge,
}

#[pymethods]
impl Client {
    /// Connects to `target`: one URL, or a list of seed URLs of a Redis Cluster. Blocking
    /// (`is_async` false) returns the client; async returns an awaitable of it.
    #[staticmethod]
    #[pyo3(signature = (target, is_async, *, timeout=None, retry=None, contention=None,
                        delivery=None, pool_size=None, replicas=None, tls=None, force_lua=None))]
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
        bridge.run(py, true, async move {
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
            Ok(Client { inner, bridge })
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
        let keys: Vec<String> = crate::convert::values(keys, "keys")?
            .into_iter()
            .map(|k| String::from_utf8(k.into_bytes()))
            .collect::<Result<_, _>>()
            .map_err(|_| {
                raise(redis_atomic::Error::BadArgument(
                    "keys must be UTF-8".into(),
                ))
            })?;
        let args: Vec<Value> = crate::convert::values(args, "args")?;
        let client = self.inner.clone();
        let safe = def.retry == redis_atomic::RetryClass::Safe;
        self.bridge.run(py, safe, async move {
            let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
            let args: Vec<redis_atomic::Arg<'_>> = args.iter().map(Value::arg).collect();
            let reply = client.call(def, &keys, &args).await?;
            Ok(ScriptReply::of(reply))
        })
    }

    /// Whether this client talks to a Redis Cluster.
    #[getter]
    fn is_cluster(&self) -> bool {
        self.inner.is_cluster()
    }

    /// The per-request timeout, in seconds.
    #[getter]
    fn timeout(&self) -> f64 {
        secs(self.inner.config().timeout)
    }

    /// Whether this client answers with awaitables.
    #[getter]
    fn is_async(&self) -> bool {
        self.bridge.mode == Mode::Async
    }

    fn __repr__(&self) -> String {
        let c = self.inner.config();
        format!(
            "Client(cluster={}, timeout={:?}, delivery={}, pool_size={}, async={})",
            self.inner.is_cluster(),
            secs(c.timeout),
            if c.delivery == Delivery::Functions {
                "functions"
            } else {
                "evalsha"
            },
            c.pool_size,
            self.bridge.mode == Mode::Async
        )
    }
}

/// Where `connect` goes: one URL, or the seeds of a cluster.
enum Target {
    Url(String),
    Seeds(Vec<String>),
}

impl Client {
    /// The library client and bridge for a primitive made from this client.
    pub(crate) fn parts(&self) -> (redis_atomic::Client, Bridge) {
        (self.inner.clone(), self.bridge)
    }
}
