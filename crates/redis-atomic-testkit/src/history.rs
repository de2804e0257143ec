//! Histories of concurrent operations and checkers for the models redis-atomic claims.
//!
//! Why histories: under faults a test cannot know what happened to a request whose reply was
//! lost, so "no error" proves nothing. Each client records every operation as *invoked*, then
//! *ok*, *failed* (surely did not happen) or *unknown* (may have happened), with times on one
//! monotonic clock. A checker then asks whether *some* resolution of the unknowns explains what
//! the server ended with, in the style of Jepsen/Knossos, but only for the simple models we
//! claim, where that question has a direct answer:
//!
//! * [`check_leases`]: at most `capacity` holders at any instant, fences strictly increasing in
//!   real-time order (locks: capacity 1; semaphores: N; job leases; idempotency claims);
//! * [`check_counter`]: final value = initial + acknowledged deltas + some subset of the unknown
//!   ones;
//! * [`check_admitted`]: admitted ≤ limit in every window;
//! * [`check_exactly_once`]: every acknowledged effect happened exactly once, none twice;
//! * [`check_acked_once`]: every job acknowledged exactly once, none lost.
//!
//! Checkers return a [`Verdict`]: how many operations, how many unknown, and each violation
//! described, so a failing test says what went wrong, not just that something did.

use std::collections::{BTreeMap, HashMap};
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

    fn violation(&mut self, what: String) {
        self.violations.push(what);
    }
}

/// One acknowledged lease (an acquire whose reply said "yours"): on which resource, with which
/// fence, when its acquire was invoked and acknowledged, when its holder started to release it
/// (None: never released; it expired), and its length.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseSpan {
    /// Resource (lock name, semaphore, job id, idempotency key).
    pub resource: String,
    /// The fence the acquire returned.
    pub fence: u64,
    /// Acquire invoked.
    pub acquire_invoked: Duration,
    /// Acquire acknowledged.
    pub acquire_completed: Duration,
    /// Release invoked, if the holder released.
    pub release_invoked: Option<Duration>,
    /// Lease length the acquire asked for (the server's clock may have ended it sooner after a
    /// stall, never later).
    pub lease: Duration,
}

impl LeaseSpan {
    /// The interval in which the holder surely held the lease: from the acknowledgement to the
    /// earlier of the release's invocation and the lease's end counted from the invocation.
    fn surely_held(&self) -> (Duration, Duration) {
        let expiry = self.acquire_invoked + self.lease;
        let end = self.release_invoked.map_or(expiry, |r| r.min(expiry));
        (self.acquire_completed, end)
    }
}

/// At most `capacity` leases of one resource surely held at any instant; fences unique, and
/// strictly increasing between leases whose acquires did not overlap in time.
pub fn check_leases(spans: &[LeaseSpan], capacity: usize) -> Verdict {
    let mut verdict = Verdict {
        operations: spans.len() as u64,
        ..Verdict::default()
    };
    let mut by_resource: BTreeMap<&str, Vec<&LeaseSpan>> = BTreeMap::new();
    for s in spans {
        by_resource.entry(&s.resource).or_default().push(s);
    }
    for (resource, mut spans) in by_resource {
        spans.sort_by_key(|s| s.acquire_completed);
        check_overlap(resource, &spans, capacity, &mut verdict);
        check_fences(resource, &spans, &mut verdict);
    }
    verdict
}

fn check_overlap(resource: &str, spans: &[&LeaseSpan], capacity: usize, verdict: &mut Verdict) {
    // Sweep: +1 at each start, -1 at each end; ends sort before starts at the same instant.
    let mut edges: Vec<(Duration, i32)> = Vec::with_capacity(spans.len() * 2);
    for s in spans {
        let (start, end) = s.surely_held();
        if start < end {
            edges.push((start, 1));
            edges.push((end, -1));
        }
    }
    edges.sort();
    let mut held = 0i64;
    for (at, delta) in edges {
        held += i64::from(delta);
        if usize::try_from(held).is_ok_and(|h| h > capacity) {
            verdict.violation(format!(
                "{resource}: {held} holders at {at:?} (capacity {capacity})"
            ));
        }
    }
}

fn check_fences(resource: &str, spans: &[&LeaseSpan], verdict: &mut Verdict) {
    let mut seen = HashMap::new();
    for s in spans {
        if let Some(other) = seen.insert(s.fence, s.acquire_completed) {
            verdict.violation(format!(
                "{resource}: fence {} issued twice (acknowledged at {other:?} and {:?})",
                s.fence, s.acquire_completed
            ));
        }
    }
    // `spans` is sorted by acknowledgement: a prefix maximum of fences answers "the largest
    // fence acknowledged before b was invoked" in O(log n).
    let mut prefix_max = Vec::with_capacity(spans.len());
    let mut max: Option<&LeaseSpan> = None;
    for s in spans {
        if max.is_none_or(|m| s.fence > m.fence) {
            max = Some(s);
        }
        prefix_max.push(max);
    }
    for b in spans {
        let before = spans.partition_point(|a| a.acquire_completed < b.acquire_invoked);
        if let Some(Some(a)) = before.checked_sub(1).map(|i| prefix_max[i]) {
            if a.fence >= b.fence {
                verdict.violation(format!(
                    "{resource}: fence {} acknowledged at {:?} is not below fence {} invoked later at {:?}",
                    a.fence, a.acquire_completed, b.fence, b.acquire_invoked
                ));
            }
        }
    }
}

/// `deltas` are the counter operations with their outcomes (`Some(true)` acknowledged,
/// `Some(false)` surely not applied, `None` unknown). The final value must equal `initial` plus
/// the acknowledged deltas plus some subset of the unknown ones.
pub fn check_counter(initial: i64, final_value: i64, deltas: &[(i64, Option<bool>)]) -> Verdict {
    let mut verdict = Verdict {
        operations: deltas.len() as u64,
        ..Verdict::default()
    };
    let acknowledged: i64 = deltas
        .iter()
        .filter(|(_, r)| *r == Some(true))
        .map(|(d, _)| d)
        .sum();
    let unknown: Vec<i64> = deltas
        .iter()
        .filter(|(_, r)| r.is_none())
        .map(|(d, _)| *d)
        .collect();
    verdict.unknown = unknown.len() as u64;
    let low = initial + acknowledged + unknown.iter().filter(|d| **d < 0).sum::<i64>();
    let high = initial + acknowledged + unknown.iter().filter(|d| **d > 0).sum::<i64>();
    if !(low..=high).contains(&final_value) {
        verdict.violation(format!(
            "final value {final_value} outside [{low}, {high}] (initial {initial}, acknowledged {acknowledged:+}, {} unknown)",
            unknown.len()
        ));
    }
    verdict
}

/// `decisions` are (window, outcome) pairs of admission decisions: `Some(true)` admitted and
/// acknowledged, `Some(false)` refused, `None` unknown. In no window may more than `limit`
/// acknowledged admissions exist.
pub fn check_admitted(decisions: &[(u64, Option<bool>)], limit: u64) -> Verdict {
    let mut verdict = Verdict {
        operations: decisions.len() as u64,
        unknown: decisions.iter().filter(|(_, r)| r.is_none()).count() as u64,
        ..Verdict::default()
    };
    let mut admitted: BTreeMap<u64, u64> = BTreeMap::new();
    for (window, _) in decisions.iter().filter(|(_, r)| *r == Some(true)) {
        *admitted.entry(*window).or_default() += 1;
    }
    for (window, n) in admitted {
        if n > limit {
            verdict.violation(format!("window {window}: {n} admitted, limit {limit}"));
        }
    }
    verdict
}

/// `effects` counts how often each key's side effect happened (as the server recorded it);
/// `outcomes` says, per key, whether its request was acknowledged (`Some(true)`), surely not
/// executed (`Some(false)`) or unknown (`None`). An acknowledged key's effect happened exactly
/// once, an unknown one at most once, a refused one never.
pub fn check_exactly_once(
    effects: &HashMap<String, u64>,
    outcomes: &HashMap<String, Option<bool>>,
) -> Verdict {
    let mut verdict = Verdict {
        operations: outcomes.len() as u64,
        unknown: outcomes.values().filter(|o| o.is_none()).count() as u64,
        ..Verdict::default()
    };
    for (key, outcome) in outcomes {
        let n = effects.get(key).copied().unwrap_or(0);
        let allowed = match outcome {
            Some(true) => 1..=1,
            None => 0..=1,
            Some(false) => 0..=0,
        };
        if !allowed.contains(&n) {
            verdict.violation(format!("{key}: effect happened {n} times ({outcome:?})"));
        }
    }
    for (key, n) in effects {
        if !outcomes.contains_key(key) && *n > 0 {
            verdict.violation(format!("{key}: effect {n} times but never requested"));
        }
    }
    verdict
}

/// `acks` lists, per job that was enqueued, its acks' outcomes (`Some(true)` accepted,
/// `Some(false)` refused as stale, `None` unknown). Every job is accepted at most once, and
/// every job is accepted once unless an unknown ack may have been the one.
pub fn check_acked_once(acks: &HashMap<String, Vec<Option<bool>>>) -> Verdict {
    let mut verdict = Verdict {
        operations: acks.values().map(|a| a.len() as u64).sum(),
        unknown: acks.values().flatten().filter(|a| a.is_none()).count() as u64,
        ..Verdict::default()
    };
    for (job, outcomes) in acks {
        let accepted = outcomes.iter().filter(|o| **o == Some(true)).count();
        let unknown = outcomes.iter().filter(|o| o.is_none()).count();
        if accepted > 1 {
            verdict.violation(format!("{job}: acked {accepted} times"));
        }
        if accepted == 0 && unknown == 0 {
            verdict.violation(format!("{job}: never acked (lost)"));
        }
    }
    verdict
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn span(fence: u64, inv: u64, ack: u64, rel: Option<u64>) -> LeaseSpan {
        LeaseSpan {
            resource: "r".into(),
            fence,
            acquire_invoked: ms(inv),
            acquire_completed: ms(ack),
            release_invoked: rel.map(ms),
            lease: ms(1000),
        }
    }

    /// Back-to-back leases pass; overlapping ones and non-increasing fences are caught.
    #[test]
    fn leases() {
        let good = [span(1, 0, 1, Some(10)), span(2, 5, 11, Some(20))];
        assert!(check_leases(&good, 1).ok());
        let overlap = [span(1, 0, 1, Some(10)), span(2, 2, 3, Some(20))];
        assert_eq!(check_leases(&overlap, 1).violations.len(), 1);
        assert!(check_leases(&overlap, 2).ok());
        let backwards = [span(5, 0, 1, Some(10)), span(4, 11, 12, Some(20))];
        assert!(!check_leases(&backwards, 1).ok());
        let repeated = [span(5, 0, 1, Some(2)), span(5, 0, 3, Some(4))];
        assert!(!check_leases(&repeated, 1).ok());
        // An unreleased lease ends at invocation + lease: a successor after that is fine.
        let expired = [span(1, 0, 1, None), span(2, 1001, 1002, Some(1010))];
        assert!(check_leases(&expired, 1).ok());
    }

    /// Unknown deltas widen the allowed range; anything outside it is caught.
    #[test]
    fn counter() {
        let ops = [(1, Some(true)), (1, None), (1, Some(false)), (-1, None)];
        assert!(check_counter(0, 0, &ops).ok());
        assert!(check_counter(0, 2, &ops).ok());
        assert!(!check_counter(0, 3, &ops).ok());
        assert!(!check_counter(0, -1, &ops).ok());
    }

    /// Admissions above the limit in one window are caught; unknowns are not counted.
    #[test]
    fn admitted() {
        let d = [(1, Some(true)), (1, Some(true)), (1, None), (2, Some(true))];
        assert!(check_admitted(&d, 2).ok());
        assert!(!check_admitted(&d, 1).ok());
    }

    /// Twice, never, and unrequested effects are caught.
    #[test]
    fn exactly_once() {
        let outcomes: HashMap<String, Option<bool>> = [
            ("a".to_string(), Some(true)),
            ("b".to_string(), None),
            ("c".to_string(), Some(false)),
        ]
        .into();
        let good: HashMap<String, u64> = [("a".to_string(), 1)].into();
        assert!(check_exactly_once(&good, &outcomes).ok());
        let twice: HashMap<String, u64> = [("a".to_string(), 2)].into();
        assert!(!check_exactly_once(&twice, &outcomes).ok());
        let lost: HashMap<String, u64> = HashMap::new();
        assert!(!check_exactly_once(&lost, &outcomes).ok());
        let stray: HashMap<String, u64> = [("a".to_string(), 1), ("z".to_string(), 1)].into();
        assert!(!check_exactly_once(&stray, &outcomes).ok());
    }

    /// Double acks and lost jobs are caught; an unknown ack may stand for the accepted one.
    #[test]
    fn acked_once() {
        let acks: HashMap<String, Vec<Option<bool>>> = [
            ("j1".to_string(), vec![Some(true)]),
            ("j2".to_string(), vec![None, Some(false)]),
        ]
        .into();
        assert!(check_acked_once(&acks).ok());
        let double: HashMap<String, Vec<Option<bool>>> =
            [("j".to_string(), vec![Some(true), Some(true)])].into();
        assert!(!check_acked_once(&double).ok());
        let lost: HashMap<String, Vec<Option<bool>>> =
            [("j".to_string(), vec![Some(false)])].into();
        assert!(!check_acked_once(&lost).ok());
    }
}
