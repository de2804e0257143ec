//! Fenced writes: a register that only accepts a write whose fence is at least the highest that
//! wrote. Its history never goes back (no write applied with a fence below one whose write was
//! acknowledged before it was sent), and its final value is the newest write: the largest
//! acknowledged fence, or a larger one whose write had an unknown outcome.

use super::Verdict;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

/// One write of a fence to a resource's register (each holder writes its own fence as the value,
/// so the final value names the write that landed last).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FencedWrite {
    /// Resource (the register) written.
    pub resource: String,
    /// The writer's fence, also the value written.
    pub fence: u64,
    /// Write invoked (on the history's clock).
    pub invoked: Duration,
    /// Write completed.
    pub completed: Duration,
    /// `Some(true)` applied and acknowledged, `Some(false)` refused as stale or surely not run,
    /// `None` unknown.
    pub applied: Option<bool>,
}

/// Per resource: no acknowledged write applied with a fence below one acknowledged before it was
/// invoked (one violation per such write), and the final value (`finals`, absent: no value) is
/// the largest acknowledged fence, or a larger one whose write had an unknown outcome.
pub fn check_fenced_writes(writes: &[FencedWrite], finals: &HashMap<String, u64>) -> Verdict {
    let mut verdict = Verdict::of(writes.len(), unknown(writes));
    for (resource, writes) in by_resource(writes, finals) {
        check_went_back(resource, &writes, &mut verdict);
        let top = writes
            .iter()
            .filter(|w| w.applied == Some(true))
            .map(|w| w.fence)
            .max();
        let stored = finals.get(resource).copied();
        let newest = match (stored, top) {
            (None, top) => top.is_none(),
            (Some(v), Some(top)) if v == top => true,
            (Some(v), top) => v > top.unwrap_or(0) && carried(&writes, v, None),
        };
        if !newest {
            verdict.violation(format!(
                "{resource}: final value {stored:?}, largest acknowledged fence {top:?}"
            ));
        }
    }
    verdict
}

/// [`check_fenced_writes`] when acknowledged writes may be lost (asynchronous replication): the
/// fence record may go back with them, so only the final value is checked, and only for being a
/// fence some write that may have applied carried (nothing invented); no value only when no write
/// was acknowledged.
pub fn check_fenced_writes_lossy(writes: &[FencedWrite], finals: &HashMap<String, u64>) -> Verdict {
    let mut verdict = Verdict::of(writes.len(), unknown(writes));
    for (resource, writes) in by_resource(writes, finals) {
        let stored = finals.get(resource).copied();
        let ok = match stored {
            None => writes.iter().all(|w| w.applied != Some(true)),
            Some(v) => carried(&writes, v, Some(true)) || carried(&writes, v, None),
        };
        if !ok {
            verdict.violation(format!(
                "{resource}: final value {stored:?} was carried by no write that may have applied"
            ));
        }
    }
    verdict
}

fn unknown(writes: &[FencedWrite]) -> usize {
    writes.iter().filter(|w| w.applied.is_none()).count()
}

/// Whether a write with `outcome` carried fence `v`.
fn carried(writes: &[&FencedWrite], v: u64, outcome: Option<bool>) -> bool {
    writes.iter().any(|w| w.fence == v && w.applied == outcome)
}

/// Writes grouped by resource, resources with only a final value included.
fn by_resource<'a>(
    writes: &'a [FencedWrite],
    finals: &'a HashMap<String, u64>,
) -> BTreeMap<&'a str, Vec<&'a FencedWrite>> {
    let names: BTreeSet<&str> = finals.keys().map(String::as_str).collect();
    let mut by: BTreeMap<&str, Vec<&FencedWrite>> =
        names.into_iter().map(|n| (n, Vec::new())).collect();
    for w in writes {
        by.entry(w.resource.as_str()).or_default().push(w);
    }
    by
}

fn check_went_back(resource: &str, writes: &[&FencedWrite], verdict: &mut Verdict) {
    let mut acked: Vec<&FencedWrite> = writes
        .iter()
        .copied()
        .filter(|w| w.applied == Some(true))
        .collect();
    acked.sort_by_key(|w| w.completed);
    // Prefix maximum of fences by acknowledgement: "the largest fence acknowledged before b was
    // invoked" in O(log n).
    let prefix_max: Vec<u64> = acked
        .iter()
        .scan(0, |max, w| {
            *max = (*max).max(w.fence);
            Some(*max)
        })
        .collect();
    for b in &acked {
        let before = acked.partition_point(|a| a.completed < b.invoked);
        if let Some(&floor) = before.checked_sub(1).map(|i| &prefix_max[i]) {
            if floor > b.fence {
                verdict.violation(format!(
                    "{resource}: fence {} applied at {:?} after fence {floor} was acknowledged",
                    b.fence, b.completed
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(fence: u64, inv: u64, done: u64, applied: Option<bool>) -> FencedWrite {
        FencedWrite {
            resource: "r".into(),
            fence,
            invoked: Duration::from_millis(inv),
            completed: Duration::from_millis(done),
            applied,
        }
    }

    fn finals(v: Option<u64>) -> HashMap<String, u64> {
        v.map(|v| ("r".to_string(), v)).into_iter().collect()
    }

    /// Increasing writes ending on the largest pass; a zombie's write refused as stale passes.
    #[test]
    fn newest_wins() {
        let h = [
            w(1, 0, 1, Some(true)),
            w(3, 2, 3, Some(true)),
            w(2, 4, 5, Some(false)),
        ];
        assert!(check_fenced_writes(&h, &finals(Some(3))).ok());
        assert!(check_fenced_writes(&[], &finals(None)).ok());
    }

    /// A write applied with a fence below an acknowledged one is caught (the state went back),
    /// and so is a final value that is not the newest.
    #[test]
    fn going_back_is_caught() {
        let zombie = [w(5, 0, 1, Some(true)), w(4, 2, 3, Some(true))];
        let v = check_fenced_writes(&zombie, &finals(Some(5)));
        assert_eq!(v.violations.len(), 1, "{v:?}");
        let h = [w(1, 0, 1, Some(true)), w(3, 2, 3, Some(true))];
        assert!(!check_fenced_writes(&h, &finals(Some(1))).ok());
        assert!(!check_fenced_writes(&h, &finals(None)).ok());
        assert!(!check_fenced_writes(&[], &finals(Some(7))).ok());
    }

    /// A larger fence whose write had an unknown outcome may be the final value; a refused one
    /// may not; concurrent writes (acknowledged after the other was invoked) do not go back.
    #[test]
    fn unknown_and_concurrent() {
        let h = [
            w(1, 0, 1, Some(true)),
            w(9, 2, 3, None),
            w(8, 4, 5, Some(false)),
        ];
        assert!(check_fenced_writes(&h, &finals(Some(9))).ok());
        assert!(!check_fenced_writes(&h, &finals(Some(8))).ok());
        let concurrent = [w(5, 0, 10, Some(true)), w(4, 1, 11, Some(true))];
        assert!(check_fenced_writes(&concurrent, &finals(Some(5))).ok());
    }

    /// With losses allowed, an older acknowledged value may be final, an invented one may not.
    #[test]
    fn lossy() {
        let h = [
            w(1, 0, 1, Some(true)),
            w(3, 2, 3, Some(true)),
            w(2, 4, 5, Some(false)),
        ];
        assert!(check_fenced_writes_lossy(&h, &finals(Some(1))).ok());
        assert!(!check_fenced_writes_lossy(&h, &finals(Some(2))).ok());
        assert!(!check_fenced_writes_lossy(&h, &finals(Some(4))).ok());
        assert!(!check_fenced_writes_lossy(&h, &finals(None)).ok());
    }
}
