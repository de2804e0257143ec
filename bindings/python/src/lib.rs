//! `redis_atomic._native`: the Python package's native module, a thin binding of the
//! `redis-atomic` library (PyO3).
//!
//! The library is the single source of truth: every operation here is one library call, its
//! arguments converted in ([`convert`]), its result converted out ([`record`]), its error mapped
//! onto the package's exception classes ([`errors`]). No logic of a primitive lives here.
//!
//! ```text
//! runtime.rs   the process's tokio runtime (fork-aware) and the one bridge: block or await
//! errors.rs    library errors -> redis_atomic._errors classes
//! convert.rs   durations, integers, script arguments and replies
//! record.rs    the frozen, dataclass-like result classes (one macro)
//! client.rs    Client, RetryPolicy, Replicas, TlsOptions; user scripts are called here
//! ratelimit.rs Algorithm, Limit, Policy, RateLimiter
//! decision.rs  Allowed/Limited, LimitStatus, Verdict, RateLimitKeys
//! quota.rs     Quotas, Bounds, Applied/Refused/Raised/Kept; Dedup
//! fenced.rs    Write, FencedWrites, Written/Stale
//! scripts.rs   ScriptSet, Script, ScriptReply
//! ```
//!
//! The typed Python layer (`python/redis_atomic`) wraps each native object in a blocking and an
//! asyncio class; the native objects themselves answer in the mode of the client they were made
//! from ([`runtime::Mode`]), so each operation is written once.

mod client;
mod convert;
mod decision;
mod errors;
mod fenced;
mod quota;
mod ratelimit;
mod record;
mod runtime;
mod scripts;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<client::Client>()?;
    m.add_class::<client::RetryPolicy>()?;
    m.add_class::<client::Replicas>()?;
    m.add_class::<client::TlsOptions>()?;
    m.add_class::<ratelimit::Algorithm>()?;
    m.add_class::<ratelimit::Limit>()?;
    m.add_class::<ratelimit::Policy>()?;
    m.add_class::<ratelimit::RateLimiter>()?;
    m.add_class::<decision::Allowed>()?;
    m.add_class::<decision::Limited>()?;
    m.add_class::<decision::LimitStatus>()?;
    m.add_class::<decision::Verdict>()?;
    m.add_class::<decision::RateLimitKeys>()?;
    m.add("ALGORITHMS", ratelimit::all_algorithms())?;
    m.add_class::<quota::Bounds>()?;
    m.add_class::<quota::Quotas>()?;
    m.add_class::<quota::Applied>()?;
    m.add_class::<quota::Refused>()?;
    m.add_class::<quota::Raised>()?;
    m.add_class::<quota::Kept>()?;
    m.add_class::<quota::Dedup>()?;
    m.add_class::<fenced::Write>()?;
    m.add_class::<fenced::FencedWrites>()?;
    m.add_class::<fenced::Written>()?;
    m.add_class::<fenced::Stale>()?;
    m.add_class::<scripts::ScriptSet>()?;
    m.add_class::<scripts::Script>()?;
    m.add_class::<scripts::ScriptReply>()?;
    m.add("LIBRARY_VERSION", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
