//! Rate limits: `Limit` (all six algorithms), `Policy`, `RateLimiter`, and the decision values.
//!
//! Everything is the library's: a `Limit` here is a validated `ratelimit::Limit` (bad sizes are
//! refused at construction with `BadArgument`), a consume is `RateLimiter::consume_detailed`.
//! A refusal is a value (`Limited`), never an exception.

use crate::client::Client;
use crate::convert::{duration, opt_duration, secs, uint};
use crate::decision::{RateLimitKeys, Verdict};
use crate::errors::raise;
use crate::outcome::Outcome;
use crate::runtime::Bridge;
use pyo3::prelude::*;
use redis_atomic::ratelimit::{self as rl, Algorithm as A};
use redis_atomic::Keyspace;

/// A rate-limiting algorithm.
#[pyclass(
    frozen,
    eq,
    hash,
    module = "redis_atomic",
    rename_all = "SCREAMING_SNAKE_CASE"
)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    FixedWindow,
    AnchoredWindow,
    SlidingLog,
    SlidingWindow,
    TokenBucket,
    Gcra,
}

impl Algorithm {
    fn lib(self) -> A {
        match self {
            Algorithm::FixedWindow => A::FixedWindow,
            Algorithm::AnchoredWindow => A::AnchoredWindow,
            Algorithm::SlidingLog => A::SlidingLog,
            Algorithm::SlidingWindow => A::SlidingWindow,
            Algorithm::TokenBucket => A::TokenBucket,
            Algorithm::Gcra => A::Gcra,
        }
    }

    fn of(a: A) -> Algorithm {
        match a {
            A::FixedWindow => Algorithm::FixedWindow,
            A::AnchoredWindow => Algorithm::AnchoredWindow,
            A::SlidingLog => Algorithm::SlidingLog,
            A::SlidingWindow => Algorithm::SlidingWindow,
            A::TokenBucket => Algorithm::TokenBucket,
            // The library's enum is non-exhaustive; every algorithm it has today is above.
            _ => Algorithm::Gcra,
        }
    }

    /// From an `Algorithm` or its name (`"fixed-window"`, ..., `"gcra"`).
    fn from_py(obj: &Bound<'_, PyAny>) -> PyResult<Algorithm> {
        if let Ok(a) = obj.cast::<Algorithm>() {
            return Ok(*a.get());
        }
        let name: String = obj.extract()?;
        name.parse::<A>().map(Algorithm::of).map_err(raise)
    }
}

#[pymethods]
impl Algorithm {
    /// The name (`fixed-window`, `anchored-window`, `sliding-log`, `sliding-window`,
    /// `token-bucket`, `gcra`).
    #[getter]
    fn name(&self) -> &'static str {
        self.lib().name()
    }
    /// Whether the algorithm has a burst distinct from its limit.
    #[getter]
    fn has_burst(&self) -> bool {
        self.lib().has_burst()
    }
    fn __str__(&self) -> &'static str {
        self.lib().name()
    }
}

/// Every algorithm, in the library's order.
pub(crate) fn all_algorithms() -> Vec<Algorithm> {
    A::ALL.into_iter().map(Algorithm::of).collect()
}

/// One limit: `limit` units per `period` under an algorithm.
#[pyclass(frozen, eq, hash, module = "redis_atomic")]
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Limit {
    pub(crate) inner: rl::Limit,
}

fn build(
    algorithm: A,
    limit: &Bound<'_, PyAny>,
    period: &Bound<'_, PyAny>,
    burst: Option<&Bound<'_, PyAny>>,
    name: Option<&str>,
) -> PyResult<Limit> {
    let mut l = rl::Limit::new(
        algorithm,
        uint(limit, "limit")?,
        duration(period, "period")?,
    )
    .map_err(raise)?;
    if let Some(b) = burst.filter(|b| !b.is_none()) {
        l = l.with_burst(uint(b, "burst")?).map_err(raise)?;
    }
    if let Some(n) = name {
        l = l.named(n).map_err(raise)?;
    }
    Ok(Limit { inner: l })
}

macro_rules! constructors {
    ($($fn:ident => $alg:ident),+) => {
        #[pymethods]
        impl Limit {
            #[new]
            #[pyo3(signature = (algorithm, limit, period, *, burst=None, name=None))]
            fn new(
                algorithm: &Bound<'_, PyAny>,
                limit: &Bound<'_, PyAny>,
                period: &Bound<'_, PyAny>,
                burst: Option<&Bound<'_, PyAny>>,
                name: Option<&str>,
            ) -> PyResult<Self> {
                build(Algorithm::from_py(algorithm)?.lib(), limit, period, burst, name)
            }
            $(
                #[staticmethod]
                #[pyo3(signature = (limit, period, *, burst=None, name=None))]
                fn $fn(
                    limit: &Bound<'_, PyAny>,
                    period: &Bound<'_, PyAny>,
                    burst: Option<&Bound<'_, PyAny>>,
                    name: Option<&str>,
                ) -> PyResult<Self> {
                    build(A::$alg, limit, period, burst, name)
                }
            )+
            #[getter]
            fn name(&self) -> &str {
                self.inner.name()
            }
            #[getter]
            fn algorithm(&self) -> Algorithm {
                Algorithm::of(self.inner.algorithm())
            }
            #[getter]
            fn limit(&self) -> u64 {
                self.inner.limit()
            }
            /// The period, in seconds.
            #[getter]
            fn period(&self) -> f64 {
                secs(self.inner.period())
            }
            /// The largest cost one request may have.
            #[getter]
            fn burst(&self) -> u64 {
                self.inner.burst()
            }
            /// Time per unit for the bucket algorithms, in seconds.
            #[getter]
            fn interval(&self) -> f64 {
                secs(self.inner.interval())
            }
            fn __repr__(&self) -> String {
                let l = &self.inner;
                format!(
                    "Limit({:?}, {}, {:?}, burst={}, name={:?})",
                    l.algorithm().name(),
                    l.limit(),
                    secs(l.period()),
                    l.burst(),
                    l.name()
                )
            }
        }
    };
}

constructors!(
    fixed_window => FixedWindow,
    anchored_window => AnchoredWindow,
    sliding_log => SlidingLog,
    sliding_window => SlidingWindow,
    token_bucket => TokenBucket,
    gcra => Gcra
);

/// Several limits decided together, all or nothing.
#[pyclass(frozen, eq, module = "redis_atomic")]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    inner: rl::Policy,
}

#[pymethods]
impl Policy {
    #[new]
    #[pyo3(signature = (limits))]
    fn new(limits: &Bound<'_, PyAny>) -> PyResult<Self> {
        let limits = limits
            .try_iter()?
            .map(|l| Ok(l?.cast::<Limit>()?.get().inner.clone()))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(Policy {
            inner: rl::Policy::new(limits).map_err(raise)?,
        })
    }
    /// The limits, in decision order.
    #[getter]
    fn limits(&self) -> Vec<Limit> {
        self.inner
            .limits()
            .iter()
            .map(|l| Limit { inner: l.clone() })
            .collect()
    }
    /// The largest cost any request may have (the smallest burst).
    #[getter]
    fn max_cost(&self) -> u64 {
        self.inner.max_cost()
    }
    fn __repr__(&self) -> String {
        let names: Vec<&str> = self.inner.limits().iter().map(rl::Limit::name).collect();
        format!("Policy(limits={names:?})")
    }
}

fn policy_of(obj: &Bound<'_, PyAny>) -> PyResult<rl::Policy> {
    if let Ok(l) = obj.cast::<Limit>() {
        return Ok(l.get().inner.clone().into());
    }
    if let Ok(p) = obj.cast::<Policy>() {
        return Ok(p.get().inner.clone());
    }
    Err(pyo3::exceptions::PyTypeError::new_err(
        "policy must be a Limit or a Policy",
    ))
}

/// Rate limits under one namespace: one policy applied per identity.
#[pyclass(frozen, module = "redis_atomic._native")]
pub struct RateLimiter {
    inner: rl::RateLimiter,
    bridge: Bridge,
}

impl RateLimiter {
    /// One consume (the library makes it retry-safe with a request id), its verdict shaped for
    /// Python by `out`: what `consume` and `consume_detailed` share.
    fn charge<T>(
        &self,
        py: Python<'_>,
        key: String,
        cost: Option<&Bound<'_, PyAny>>,
        request_id: Option<String>,
        out: fn(rl::Verdict) -> T,
    ) -> PyResult<Py<PyAny>>
    where
        T: for<'py> IntoPyObject<'py> + Send + 'static,
    {
        let cost = cost.map_or(Ok(1), |c| uint(c, "cost"))?;
        let limiter = self.inner.clone();
        self.bridge.run(py, async move {
            let v = limiter
                .consume_detailed(&key, cost, request_id.as_deref())
                .await?;
            Ok(out(v))
        })
    }
}

#[pymethods]
impl RateLimiter {
    #[new]
    #[pyo3(signature = (client, namespace, policy, *, request_ttl=None))]
    fn new(
        client: &Bound<'_, Client>,
        namespace: &str,
        policy: &Bound<'_, PyAny>,
        request_ttl: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let (client, bridge) = client.get().parts(client.py())?;
        let keyspace = Keyspace::new(namespace).map_err(raise)?;
        let mut inner = rl::RateLimiter::new(client, keyspace, policy_of(policy)?);
        if let Some(ttl) = opt_duration(request_ttl, "request_ttl")? {
            inner = inner.with_request_ttl(ttl).map_err(raise)?;
        }
        Ok(RateLimiter { inner, bridge })
    }

    /// Charges `cost` to every limit of `key`'s policy, or to none: `Allowed` or `Limited`.
    #[pyo3(signature = (key, cost=None, *, request_id=None))]
    fn consume(
        &self,
        py: Python<'_>,
        key: String,
        cost: Option<&Bound<'_, PyAny>>,
        request_id: Option<String>,
    ) -> PyResult<Py<PyAny>> {
        self.charge(py, key, cost, request_id, |v| Outcome::Decision(v.decision))
    }

    /// Like `consume`, with each limit's status and whether it was a replay: a `Verdict`.
    #[pyo3(signature = (key, cost=None, *, request_id=None))]
    fn consume_detailed(
        &self,
        py: Python<'_>,
        key: String,
        cost: Option<&Bound<'_, PyAny>>,
        request_id: Option<String>,
    ) -> PyResult<Py<PyAny>> {
        self.charge(py, key, cost, request_id, Verdict::from)
    }

    /// The keys a consume for `identity` (with `request_id`, if any) uses.
    #[pyo3(signature = (identity, request_id=None))]
    fn keys(&self, identity: &str, request_id: Option<&str>) -> PyResult<RateLimitKeys> {
        let k = self.inner.keys(identity, request_id).map_err(raise)?;
        Ok(RateLimitKeys {
            limits: k.limits,
            request: k.request,
        })
    }

    /// How long request ids are remembered, in seconds.
    #[getter]
    fn request_ttl(&self) -> f64 {
        secs(self.inner.request_ttl())
    }

    /// The policy.
    #[getter]
    fn policy(&self) -> Policy {
        Policy {
            inner: self.inner.policy().clone(),
        }
    }
}
