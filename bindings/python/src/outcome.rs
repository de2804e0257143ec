//! Every library outcome on its way to Python, in one place: one flat [`Outcome`] of the
//! library's answers, and the one match that turns each into the package's object (a refusal
//! or a success class, a handle, a list of jobs). The classes themselves live with their
//! primitive (`lock.rs`, `queue_admin.rs`, ...); which class answers which library variant is
//! decided here only, so a new outcome word is one arm, and the truthiness of each class (the
//! vocabulary: every refusal falsy, every success truthy) is set where the class is defined.
//!
//! A library enum that gains a variant this package does not know (they are non-exhaustive)
//! raises `ClientError` naming it ([`unknown`]) instead of guessing an answer.

use crate::decision::{Allowed, Decision, Limited};
use crate::fenced::{Stale, Written};
use crate::idempotency::{Claim, InProgress, Mismatch, Replay, Response, Stored};
use crate::lease::{Extended, Lost, Released};
use crate::lock::{Free, Held, LockGuard, Locked};
use crate::queue_admin::{
    Acked, Dead, Empty, Enqueued, Exists, Idle, JobAcked, JobDead, JobQueued, JobRunning,
    JobUnknown, NotDead, Requeued, Retrying,
};
use crate::quota::{Applied, Kept, Raised, Refused};
use crate::runtime::Bridge;
use crate::semaphore::{Full, Permit};
use pyo3::prelude::*;
use pyo3::IntoPyObjectExt;
use redis_atomic::fenced::Fenced;
use redis_atomic::idempotency::{self as idem, Begin, Stored as LibStored};
use redis_atomic::lease::{Extend, Release};
use redis_atomic::lock::{self, LockState};
use redis_atomic::queue::{self as q, Ack, Enqueue, JobState, Nack, Requeue};
use redis_atomic::quota::{Bounded, Raise};
use redis_atomic::ratelimit as rl;
use redis_atomic::semaphore as sem;

/// A library outcome; those that grant a lease carry the bridge its handle answers through.
pub(crate) enum Outcome {
    Decision(rl::Decision),
    Acquire(lock::Acquire, Bridge),
    LockState(LockState),
    Permit(sem::Acquire, Bridge),
    Extend(Extend),
    Release(Release),
    Begin(Begin, Bridge),
    End(idem::Outcome),
    Enqueue(Enqueue),
    Claim(q::Claim, Bridge),
    Ack(Ack),
    Nack(Nack),
    Requeue(Requeue),
    JobState(JobState),
    Bounded(Bounded),
    Raise(Raise),
    Fenced(Fenced),
}

/// A library outcome this package does not know (a newer library): a `ClientError`.
pub(crate) fn unknown(what: &str) -> PyErr {
    crate::errors::raise(redis_atomic::Error::Client(format!(
        "{what}: an outcome this package does not know"
    )))
}

impl From<rl::Decision> for Decision {
    fn from(d: rl::Decision) -> Self {
        match d {
            rl::Decision::Allowed {
                remaining,
                reset_after,
            } => Decision::Allowed(Allowed {
                remaining,
                reset_after,
            }),
            rl::Decision::Limited {
                retry_after,
                reset_after,
            } => Decision::Limited(Limited {
                retry_after,
                reset_after,
            }),
            // Non-exhaustive: a kind a newer library adds (none today) refuses, charging nothing.
            #[allow(unreachable_patterns)]
            _ => Decision::Limited(Limited {
                retry_after: std::time::Duration::ZERO,
                reset_after: std::time::Duration::ZERO,
            }),
        }
    }
}

crate::convert::to_python!(Outcome, |this, py| {
    use Outcome as O;
    match this {
        O::Decision(d) => Decision::from(d).into_bound_py_any(py),
        O::Acquire(lock::Acquire::Acquired(g), bridge) => {
            let resource = g.resource().to_string();
            LockGuard::of(g, bridge, resource).into_bound_py_any(py)
        }
        O::Acquire(lock::Acquire::Held { retry_after }, _) => {
            Held { retry_after }.into_bound_py_any(py)
        }
        O::LockState(LockState::Locked { fence, ttl }) => Locked {
            fence: fence.0,
            ttl,
        }
        .into_bound_py_any(py),
        O::LockState(LockState::Free { last_fence }) => Free {
            last_fence: last_fence.0,
        }
        .into_bound_py_any(py),
        O::Permit(sem::Acquire::Acquired(p), bridge) => Permit::of(p, bridge).into_bound_py_any(py),
        O::Permit(sem::Acquire::Full { retry_after }, _) => {
            Full { retry_after }.into_bound_py_any(py)
        }
        O::Extend(Extend::Extended { fence, ttl }) => Extended {
            fence: fence.0,
            ttl,
        }
        .into_bound_py_any(py),
        O::Release(Release::Released { fence }) => {
            Released { fence: fence.0 }.into_bound_py_any(py)
        }
        O::Extend(Extend::Lost)
        | O::Release(Release::Lost)
        | O::End(idem::Outcome::Lost)
        | O::Ack(Ack::Lost)
        | O::Nack(Nack::Lost) => Lost.into_bound_py_any(py),
        O::Begin(b, bridge) => begun(py, b, bridge),
        O::End(idem::Outcome::Stored) => Stored.into_bound_py_any(py),
        O::Enqueue(Enqueue::Enqueued { due_in }) => Enqueued { due_in }.into_bound_py_any(py),
        O::Enqueue(Enqueue::Exists { status }) => Exists {
            status: status.name().into(),
        }
        .into_bound_py_any(py),
        O::Claim(q::Claim::Claimed(jobs), bridge) => jobs
            .into_iter()
            .map(|j| crate::queue::leased(j, bridge.clone()))
            .collect::<Vec<_>>()
            .into_bound_py_any(py),
        O::Claim(q::Claim::Empty { retry_after }, _) => Empty { retry_after }.into_bound_py_any(py),
        O::Claim(q::Claim::Idle, _) => Idle.into_bound_py_any(py),
        O::Ack(Ack::Acked) => Acked.into_bound_py_any(py),
        O::Nack(Nack::Retrying { retry_after }) => Retrying { retry_after }.into_bound_py_any(py),
        O::Nack(Nack::Dead) => Dead.into_bound_py_any(py),
        O::Requeue(Requeue::Requeued) => Requeued.into_bound_py_any(py),
        O::Requeue(Requeue::NotDead) => NotDead.into_bound_py_any(py),
        O::JobState(s) => job_state(py, s),
        O::Bounded(Bounded::Applied { value }) => Applied { value }.into_bound_py_any(py),
        O::Bounded(Bounded::Refused { value }) => Refused { value }.into_bound_py_any(py),
        O::Raise(Raise::Raised { value }) => Raised { value }.into_bound_py_any(py),
        O::Raise(Raise::Kept { value }) => Kept { value }.into_bound_py_any(py),
        O::Fenced(Fenced::Applied { fence, writes }) => Written {
            fence: fence.0,
            writes: u64::try_from(writes).unwrap_or(u64::MAX),
        }
        .into_bound_py_any(py),
        O::Fenced(Fenced::Stale { highest }) => Stale { highest: highest.0 }.into_bound_py_any(py),
        #[allow(unreachable_patterns)]
        _ => Err(unknown("outcome")),
    }
});

/// What `begin` decided: a `Claim` handle, `InProgress`, `Replay` or `Mismatch`.
fn begun(py: Python<'_>, b: Begin, bridge: Bridge) -> PyResult<Bound<'_, PyAny>> {
    match b {
        Begin::Claimed(c) => {
            let takeover = c.is_takeover();
            Claim::of(c, bridge, takeover).into_bound_py_any(py)
        }
        Begin::InProgress { retry_after } => InProgress { retry_after }.into_bound_py_any(py),
        Begin::Replay(LibStored::Completed(inner)) => Replay {
            response: Response { inner },
            failed: false,
        }
        .into_bound_py_any(py),
        Begin::Replay(LibStored::Failed(inner)) => Replay {
            response: Response { inner },
            failed: true,
        }
        .into_bound_py_any(py),
        Begin::Mismatch => Mismatch.into_bound_py_any(py),
        #[allow(unreachable_patterns)]
        _ => Err(unknown("idempotency begin")),
    }
}

/// One job's state (`Queue.inspect`).
fn job_state(py: Python<'_>, s: JobState) -> PyResult<Bound<'_, PyAny>> {
    match s {
        JobState::Queued {
            due_in,
            deliveries,
            last_fence,
        } => JobQueued {
            due_in,
            deliveries: u64::from(deliveries),
            last_fence: last_fence.0,
        }
        .into_bound_py_any(py),
        JobState::Running {
            fence,
            deliveries,
            ttl,
            worker,
        } => JobRunning {
            fence: fence.0,
            deliveries: u64::from(deliveries),
            ttl,
            worker,
        }
        .into_bound_py_any(py),
        JobState::Dead { deliveries, error } => JobDead {
            deliveries: u64::from(deliveries),
            error,
        }
        .into_bound_py_any(py),
        JobState::Acked { fence } => JobAcked { fence: fence.0 }.into_bound_py_any(py),
        JobState::Unknown => JobUnknown.into_bound_py_any(py),
        #[allow(unreachable_patterns)]
        _ => Err(unknown("job state")),
    }
}
