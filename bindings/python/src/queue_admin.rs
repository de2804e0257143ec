//! The queue's values: enqueue and claim outcomes, a job's state, stats and dead letters (which
//! library outcome each answers is in `outcome.rs`). The `Queue` methods that answer them are in
//! `queue.rs` (one `#[pymethods]` block per class).

use crate::lease::unit;
use crate::record::{record, List};
use pyo3::prelude::*;
use redis_atomic::queue::{
    DeadLetters as LibDeadLetters, QueueKeys as LibKeys, QueueStats as LibStats,
};
use std::time::Duration;

record! {
    /// Added; due in `due_in` seconds (server time). Truthy.
    Enqueued { due_in: Duration }
    {
        fn __bool__(&self) -> bool { true }
    }
}

record! {
    /// A job with this id exists (or was acked within the dedup window): nothing added.
    /// `status`: `"queued"`, `"running"`, `"dead"` or `"acked"`. Falsy.
    Exists { status: String }
    {
        fn __bool__(&self) -> bool { false }
    }
}

record! {
    /// Nothing is due, but something is queued or running: claim again after `retry_after`
    /// seconds (an enqueue may make a job due sooner). Falsy.
    Empty { retry_after: Duration }
    {
        fn __bool__(&self) -> bool { false }
    }
}

unit! {
    /// The queue holds no queued and no running job: only an enqueue changes that. Falsy.
    Idle, false
}

unit! {
    /// The job is complete. Truthy.
    Acked, true
}

record! {
    /// The job is due again after `retry_after` seconds. Truthy.
    Retrying { retry_after: Duration }
    {
        fn __bool__(&self) -> bool { true }
    }
}

unit! {
    /// Delivered `max_deliveries` times: moved to the dead letters with the error. Truthy (the
    /// nack was applied). (`DeadLettered` is a deprecated alias.)
    Dead, true
}

unit! {
    /// The dead letter is due again, its deliveries reset. Truthy.
    Requeued, true
}

unit! {
    /// The job is not a dead letter (after a retried call: maybe already requeued). Falsy.
    NotDead, false
}

record! {
    /// Counts of a queue's jobs by state.
    QueueStats { ready: u64, scheduled: u64, running: u64, expired: u64, dead: u64, acked: u64 }
    {}
}

record! {
    /// Waiting; due in `due_in` seconds (0 when due now).
    JobQueued { due_in: Duration, deliveries: u64, last_fence: u64 }
    {}
}

record! {
    /// Leased to `worker` with `fence`; `ttl` seconds left on the lease (0 when expired and not
    /// yet returned).
    JobRunning { fence: u64, deliveries: u64, ttl: Duration, worker: String }
    {}
}

record! {
    /// In the dead letters, with its last error.
    JobDead { deliveries: u64, error: String }
    {}
}

record! {
    /// Acked (within the dedup window) by the lease with `fence`.
    JobAcked { fence: u64 }
    {}
}

unit! {
    /// No such job (never enqueued, or acked and forgotten). Falsy.
    JobUnknown, false
}

record! {
    /// A dead letter: its id, when it died (server ms since the epoch), deliveries made, and
    /// the last error.
    DeadLetter { id: String, dead_at_ms: u64, deliveries: u64, error: String }
    {}
}

record! {
    /// One page of dead letters (oldest first) and how many there are in all.
    DeadLetters { total: u64, letters: List<DeadLetter> }
    {}
}

record! {
    /// Dead letters deleted, and how many are left (of any age).
    Purged { purged: u64, remaining: u64 }
    {}
}

record! {
    /// Expired leases returned: jobs due again, and jobs moved to the dead letters.
    Reaped { requeued: u64, dead: u64 }
    {}
}

record! {
    /// Every key of one queue (all under its `{name}` hash tag); `claims` is the prefix of the
    /// claim-id records.
    QueueKeys {
        due: String, inflight: String, dead: String, done: String, meta: String,
        payload: String, errors: String, claims: String
    }
    {}
}

impl From<&LibKeys> for QueueKeys {
    fn from(k: &LibKeys) -> Self {
        QueueKeys {
            due: k.due.clone(),
            inflight: k.inflight.clone(),
            dead: k.dead.clone(),
            done: k.done.clone(),
            meta: k.meta.clone(),
            payload: k.payload.clone(),
            errors: k.errors.clone(),
            claims: k.claims.clone(),
        }
    }
}

impl From<LibStats> for QueueStats {
    fn from(s: LibStats) -> Self {
        QueueStats {
            ready: s.ready,
            scheduled: s.scheduled,
            running: s.running,
            expired: s.expired,
            dead: s.dead,
            acked: s.acked,
        }
    }
}

impl From<LibDeadLetters> for DeadLetters {
    fn from(d: LibDeadLetters) -> Self {
        let letters = d
            .letters
            .into_iter()
            .map(|l| DeadLetter {
                id: l.id,
                dead_at_ms: l.dead_at_ms,
                deliveries: u64::from(l.deliveries),
                error: l.error,
            })
            .collect();
        DeadLetters {
            total: d.total,
            letters: List(letters),
        }
    }
}
