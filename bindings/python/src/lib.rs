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
//! outcome.rs   every library outcome -> its Python object, in one match
//! client.rs    Client (connect, close, batch_stats); user scripts are called here
//! options.rs   the settings of connect: RetryPolicy, Replicas, TlsOptions, Batching
//! ratelimit.rs Algorithm, Limit, Policy, RateLimiter
//! decision.rs  Allowed/Limited, LimitStatus, Verdict, RateLimitKeys
//! quota.rs     Quotas, Bounds, Applied/Refused/Raised/Kept; Dedup
//! fenced.rs    Write, FencedWrites, Written/Stale
//! scripts.rs   ScriptSet, Script, ScriptReply
//! lease.rs     what the lease handles share: the slot, Extended/Released/Lost, the handle macro
//! watch.rs     Watched: the watchdog over any lease handle
//! lock.rs      Locks, LockGuard, Held, Locked/Free
//! semaphore.rs Semaphore, Permit, Full, SemaphoreState
//! idempotency.rs Idempotency, Claim, Response, Fingerprint, Replay, InProgress, Mismatch, Stored
//! queue.rs     Queue, Job; queue_admin.rs: the queue's values (enqueue, claim, job states, ...)
//! ```
//!
//! The typed Python layer (`python/redis_atomic`) wraps each native object in a blocking and an
//! asyncio class; the native objects themselves answer in the mode of the client they were made
//! from ([`runtime::Mode`]), so each operation is written once.

mod client;
mod completer;
mod convert;
mod decision;
mod errors;
mod fenced;
mod idempotency;
mod lease;
mod lock;
mod options;
mod outcome;
mod queue;
mod queue_admin;
mod quota;
mod ratelimit;
mod record;
mod runtime;
mod scripts;
mod semaphore;
mod watch;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<client::Client>()?;
    m.add_class::<options::RetryPolicy>()?;
    m.add_class::<options::Replicas>()?;
    m.add_class::<options::TlsOptions>()?;
    m.add_class::<options::Batching>()?;
    m.add_class::<options::BatchStats>()?;
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
    m.add_class::<quota::QuotaKeys>()?;
    m.add_class::<quota::DedupKeys>()?;
    m.add_class::<fenced::Write>()?;
    m.add_class::<fenced::FencedWrites>()?;
    m.add_class::<fenced::Written>()?;
    m.add_class::<fenced::Stale>()?;
    m.add_class::<scripts::ScriptSet>()?;
    m.add_class::<scripts::Script>()?;
    m.add_class::<scripts::ScriptReply>()?;
    leases(m)?;
    m.add("LIBRARY_VERSION", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(errors::classify_server_error, m)?)?;
    Ok(())
}

/// The lease primitives' classes: locks, semaphores, idempotency keys, the queue, the watchdog.
fn leases(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<lease::Lost>()?;
    m.add_class::<lease::Extended>()?;
    m.add_class::<lease::Released>()?;
    m.add_class::<watch::Watched>()?;
    m.add_class::<lock::Locks>()?;
    m.add_class::<lock::LockGuard>()?;
    m.add_class::<lock::Held>()?;
    m.add_class::<lock::Locked>()?;
    m.add_class::<lock::Free>()?;
    m.add_class::<lock::LockKeys>()?;
    m.add_class::<semaphore::Semaphore>()?;
    m.add_class::<semaphore::Permit>()?;
    m.add_class::<semaphore::Full>()?;
    m.add_class::<semaphore::SemaphoreState>()?;
    m.add_class::<semaphore::SemaphoreKeys>()?;
    m.add_class::<idempotency::Idempotency>()?;
    m.add_class::<idempotency::Claim>()?;
    m.add_class::<idempotency::Fingerprint>()?;
    m.add_class::<idempotency::Response>()?;
    m.add_class::<idempotency::Replay>()?;
    m.add_class::<idempotency::InProgress>()?;
    m.add_class::<idempotency::Mismatch>()?;
    m.add_class::<idempotency::Stored>()?;
    m.add_class::<idempotency::IdempotencyKeys>()?;
    m.add_class::<queue::Queue>()?;
    m.add_class::<queue::Job>()?;
    use queue_admin as qa;
    m.add_class::<qa::Enqueued>()?;
    m.add_class::<qa::Exists>()?;
    m.add_class::<qa::Empty>()?;
    m.add_class::<qa::Idle>()?;
    m.add_class::<qa::Acked>()?;
    m.add_class::<qa::Retrying>()?;
    m.add_class::<qa::Dead>()?;
    m.add_class::<qa::Requeued>()?;
    m.add_class::<qa::NotDead>()?;
    m.add_class::<qa::QueueStats>()?;
    m.add_class::<qa::JobQueued>()?;
    m.add_class::<qa::JobRunning>()?;
    m.add_class::<qa::JobDead>()?;
    m.add_class::<qa::JobAcked>()?;
    m.add_class::<qa::JobUnknown>()?;
    m.add_class::<qa::DeadLetter>()?;
    m.add_class::<qa::DeadLetters>()?;
    m.add_class::<qa::Purged>()?;
    m.add_class::<qa::Reaped>()?;
    m.add_class::<qa::QueueKeys>()?;
    Ok(())
}
