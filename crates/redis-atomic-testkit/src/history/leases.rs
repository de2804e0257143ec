//! Leases: at most `capacity` holders of a resource at any instant, fences unique and strictly
//! increasing in real-time order. One model for every lease-like primitive: a lock (capacity 1),
//! a semaphore (N), a queue job's claim (1 per job), an idempotency claim (1 per key).
//!
//! A holder cannot see the server's lease, only an interval surely inside it: from the acquire's
//! acknowledgement to the earlier of its release request and the acquire's *invocation* plus the
//! lease (the server started counting later than that, never earlier). More than `capacity` such
//! intervals open at once is therefore more than `capacity` live leases on the server.

use super::Verdict;
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

/// What a holder takes off the lease it asked for when recording its [`LeaseSpan`]: the server
/// ends a lease on its own clock in whole milliseconds (`PX` and stored deadlines are counted from
/// a truncated `mstime`), up to a millisecond before the holder's clock says, and the two clocks
/// tick at slightly different rates. Without it, a claim answered right at the boundary reads as
/// two holders (seen once in a clean queue run under load).
pub const CLOCK_SLACK: Duration = Duration::from_millis(2);

/// One acknowledged lease (an acquire whose reply said "yours"): on which resource, with which
/// fence, when its acquire was invoked and acknowledged, when its holder started to release it
/// (None: never released; it expired), and its length.
///
/// Times are on one clock shared by the whole history (any origin): a local monotonic clock, or
/// the server's when the server reports when each lease began (queue claims).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseSpan {
    /// Resource (lock name, semaphore, job id, idempotency key).
    pub resource: String,
    /// The fence the acquire returned.
    pub fence: u64,
    /// Acquire invoked. When an acquire with an unknown outcome was retried with the same token,
    /// the first attempt's invocation.
    pub acquire_invoked: Duration,
    /// Acquire acknowledged.
    pub acquire_completed: Duration,
    /// Release invoked, if the holder released.
    pub release_invoked: Option<Duration>,
    /// Lease length the acquire asked for (the server's clock may have ended it sooner after a
    /// stall, never later); less [`CLOCK_SLACK`].
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

/// At most `capacity` leases of one resource surely held at any instant (one violation per lease
/// that opened above it); fences unique, and strictly increasing between leases whose acquires
/// did not overlap in time. `capacity = usize::MAX` checks only the fences: what still holds when
/// acknowledged writes may be lost (asynchronous replication, failover).
pub fn check_leases(spans: &[LeaseSpan], capacity: usize) -> Verdict {
    let mut verdict = Verdict::of(spans.len(), 0);
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
    let mut held = 0usize;
    for (at, delta) in edges {
        if delta < 0 {
            held = held.saturating_sub(1);
            continue;
        }
        held += 1;
        if held > capacity {
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

    /// Each lease that opens above capacity is one violation (a semaphore of 2, four holders at
    /// once: two violations); leases on other resources do not count.
    #[test]
    fn capacity_counts_openings() {
        let mut four: Vec<LeaseSpan> = (1..=4).map(|f| span(f, f, f, Some(100))).collect();
        assert_eq!(check_leases(&four, 2).violations.len(), 2);
        assert!(check_leases(&four, 4).ok());
        for (i, s) in four.iter_mut().enumerate() {
            s.resource = format!("r{i}");
        }
        assert!(check_leases(&four, 1).ok());
    }

    /// Unbounded capacity still checks fences (what survives lost writes); a late-acknowledged
    /// acquire that began before an earlier one was acknowledged may carry a smaller fence.
    #[test]
    fn fences_only() {
        let shared = [span(7, 0, 1, Some(50)), span(7, 60, 61, Some(90))];
        assert!(!check_leases(&shared, usize::MAX).ok());
        let concurrent = [span(2, 0, 5, Some(50)), span(1, 1, 9, Some(90))];
        assert!(check_leases(&concurrent, usize::MAX).ok());
    }
}
