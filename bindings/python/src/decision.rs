//! What a rate-limit decision says, as Python values: `Allowed` / `Limited` (truthy exactly
//! when allowed), each limit's `LimitStatus`, the `Verdict` that carries them, and the keys a
//! consume uses.

use crate::record::{record, List};
use pyo3::prelude::*;
use redis_atomic::ratelimit as rl;
use std::time::Duration;

record! {
    /// Admitted and charged.
    Allowed { remaining: u64, reset_after: Duration }
    {
        /// Always true.
        #[getter]
        fn allowed(&self) -> bool { true }
        fn __bool__(&self) -> bool { true }
    }
}

record! {
    /// Refused; nothing was charged. `retry_after`: the earliest time (seconds) the same request
    /// would be admitted, if nothing else is consumed.
    Limited { retry_after: Duration, reset_after: Duration }
    {
        /// Always false.
        #[getter]
        fn allowed(&self) -> bool { false }
        fn __bool__(&self) -> bool { false }
    }
}

record! {
    /// One limit's state after a decision.
    LimitStatus { remaining: u64, reset_after: Duration, retry_after: Duration }
    {}
}

/// A decision on its way to Python.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Decision {
    Allowed(Allowed),
    Limited(Limited),
}

crate::convert::to_python!(Decision, |this, py| {
    match this {
        Decision::Allowed(a) => a.into_bound_py_any(py),
        Decision::Limited(l) => l.into_bound_py_any(py),
    }
});

impl crate::record::Field for Decision {
    fn put(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Self> {
        if let Ok(a) = obj.cast::<Allowed>() {
            return Ok(Decision::Allowed(a.get().clone()));
        }
        if let Ok(l) = obj.cast::<Limited>() {
            return Ok(Decision::Limited(l.get().clone()));
        }
        Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "{name} must be Allowed or Limited"
        )))
    }
    fn get<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.clone().into_pyobject(py)
    }
}

record! {
    /// A decision with each limit's status, in the policy's order. `replayed`: the recorded
    /// decision of an earlier request with the same request id (nothing charged this time).
    Verdict { decision: Decision, limits: List<LimitStatus>, replayed: bool }
    {
        /// As its decision: truthy exactly when allowed.
        fn __bool__(&self) -> bool { matches!(self.decision, Decision::Allowed(_)) }
    }
}

impl From<rl::Verdict> for Verdict {
    fn from(v: rl::Verdict) -> Self {
        let limits = v
            .limits
            .iter()
            .map(|s| LimitStatus {
                remaining: s.remaining,
                reset_after: s.reset_after,
                retry_after: s.retry_after,
            })
            .collect();
        Verdict {
            decision: v.decision.into(),
            limits: List(limits),
            replayed: v.replayed,
        }
    }
}

record! {
    /// The keys a consume uses: each limit's state, and the request record when a request id
    /// is given.
    RateLimitKeys { limits: Vec<String>, request: Option<String> }
    {}
}
