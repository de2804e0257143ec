//! Histories of concurrent operations and checkers for the models redis-atomic claims.
//!
//! Why histories: under faults a test cannot know what happened to a request whose reply was
//! lost, so "no error" proves nothing. Each client records every operation as *invoked*, then
//! *ok*, *failed* (surely did not happen) or *unknown* (may have happened), with times on one
//! monotonic clock. A checker then asks whether *some* resolution of the unknowns explains what
//! the server ended with, in the style of Jepsen/Knossos, but only for the simple models we
//! claim, where that question has a direct answer. The same checkers judge our tests and
//! `redis-atomic verify`, so a model is written down once:
//!
//! * [`check_leases`]: at most `capacity` holders at any instant, fences unique and strictly
//!   increasing in real-time order (locks: capacity 1; semaphores: N; job leases; idempotency
//!   claims); with `usize::MAX`, only the fences (what survives a failover);
//! * [`check_counter`]: final value = initial + acknowledged deltas + some subset of the unknown
//!   ones; [`check_counter_lossy`] when acknowledged writes may be lost (only: nothing
//!   invented); [`check_within`]: every observed value within bounds;
//! * [`check_admitted`]: admitted ≤ limit in every window;
//! * rate limiters, per algorithm, from spans or exact window positions: [`check_windows`]
//!   (fixed window, sliding window counter), [`check_in_any_period`] (sliding log),
//!   [`check_rate`] (token bucket, GCRA);
//! * [`check_executed_once`] (and its one-request form [`check_exactly_once`]): a side effect
//!   happened once per key, whatever the duplicates and unknown outcomes;
//! * [`check_accepted_once`] (jobs' acks: [`check_acked_once`]; dedup's "first" answers): one
//!   winner per key, none lost; [`check_none_lost`] when winners may repeat;
//! * [`check_fenced_writes`]: a fenced register never goes back to an older fence and ends on the
//!   newest; [`check_fenced_writes_lossy`] when acknowledged writes may be lost.
//!
//! Checkers return a [`Verdict`]: how many operations, how many unknown, and each violation
//! described, so a failing test says what went wrong, not just that something did.

mod counter;
mod fenced;
mod leases;
mod once;
mod rates;

pub use counter::{check_admitted, check_counter, check_counter_lossy, check_within};
pub use fenced::{check_fenced_writes, check_fenced_writes_lossy, FencedWrite};
pub use leases::{check_leases, LeaseSpan, CLOCK_SLACK};
pub use once::{
    check_accepted_once, check_acked_once, check_exactly_once, check_executed_once, check_none_lost,
};
pub use rates::{
    check_anchored_windows, check_in_any_period, check_rate, check_windows, WindowPosition,
    RATE_SLACK,
};

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How an operation ended.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum OpResult<O> {
    /// Not completed (yet).
    Pending,
    /// Acknowledged with this output.
    Ok(O),
    /// Surely did not take effect (refused before running, or an error that says nothing ran).
    Fail(String),
    /// May or may not have taken effect (timeout, connection lost after sending).
    Unknown(String),
}

/// One operation: who, what, when invoked, when completed, how it ended.
#[derive(Clone, Debug)]
pub struct Op<I, O> {
    /// The client (task) that ran it; one operation at a time per process.
    pub process: usize,
    /// What was asked.
    pub input: I,
    /// When it was invoked, since the history started.
    pub invoked: Duration,
    /// When it completed (None while pending).
    pub completed: Option<Duration>,
    /// How it ended.
    pub result: OpResult<O>,
}

/// A concurrent, append-only log of operations. Share it by reference (`Arc<History<..>>`).
#[derive(Debug)]
pub struct History<I, O> {
    start: Instant,
    ops: Mutex<Vec<Op<I, O>>>,
}

impl<I: Clone, O: Clone> Default for History<I, O> {
    fn default() -> Self {
        Self::new()
    }
}

impl<I: Clone, O: Clone> History<I, O> {
    /// An empty history whose clock starts now.
    pub fn new() -> Self {
        History {
            start: Instant::now(),
            ops: Mutex::new(Vec::new()),
        }
    }

    /// Time since the history started.
    pub fn now(&self) -> Duration {
        self.start.elapsed()
    }

    /// Records an invocation; returns its id for [`History::complete`].
    pub fn invoke(&self, process: usize, input: I) -> usize {
        let invoked = self.now();
        let mut ops = self.ops.lock().unwrap_or_else(|p| p.into_inner());
        ops.push(Op {
            process,
            input,
            invoked,
            completed: None,
            result: OpResult::Pending,
        });
        ops.len() - 1
    }

    /// Records how operation `id` ended.
    pub fn complete(&self, id: usize, result: OpResult<O>) {
        let completed = self.now();
        let mut ops = self.ops.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(op) = ops.get_mut(id) {
            op.completed = Some(completed);
            op.result = result;
        }
    }

    /// A copy of every operation so far, in invocation order.
    pub fn ops(&self) -> Vec<Op<I, O>> {
        self.ops.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// What a checker found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Verdict {
    /// Operations examined.
    pub operations: u64,
    /// Of which the outcome was unknown.
    pub unknown: u64,
    /// Each violation, described.
    pub violations: Vec<String>,
}

impl Verdict {
    /// Whether the model held.
    pub fn ok(&self) -> bool {
        self.violations.is_empty()
    }

    /// A verdict on observations judged on the spot, where one reply alone contradicts the model
    /// (a replay with another request's body, a release of a lease that was surely live).
    pub fn observed(operations: u64, violations: Vec<String>) -> Verdict {
        Verdict {
            operations,
            unknown: 0,
            violations,
        }
    }

    /// An empty verdict on `operations`, `unknown` of them with an unknown outcome.
    pub(crate) fn of(operations: usize, unknown: usize) -> Verdict {
        Verdict {
            operations: operations as u64,
            unknown: unknown as u64,
            violations: Vec::new(),
        }
    }

    pub(crate) fn violation(&mut self, what: String) {
        self.violations.push(what);
    }
}
