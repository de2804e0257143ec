//! Counters: a final value explained by the deltas that may have applied, every observed value
//! within bounds, admissions per window within a limit.
//!
//! A delta's outcome is `Some(true)` acknowledged, `Some(false)` surely not applied (refused, or
//! an error that says nothing ran) or `None` unknown (may or may not have applied). The exact
//! question ("does some subset of the unknown deltas explain the final value?") is subset-sum;
//! the checkers answer the range question instead (between the sum of the negative unknowns and
//! the sum of the positive ones), which is exact when every unknown delta has the same sign and
//! otherwise only more lenient.

use super::Verdict;
use std::collections::BTreeMap;
use std::ops::RangeInclusive;

/// `deltas` are the counter operations with their outcomes (`Some(true)` acknowledged,
/// `Some(false)` surely not applied, `None` unknown). The final value must equal `initial` plus
/// the acknowledged deltas plus some subset of the unknown ones.
pub fn check_counter(initial: i64, final_value: i64, deltas: &[(i64, Option<bool>)]) -> Verdict {
    let unknown = deltas.iter().filter(|(_, r)| r.is_none()).count();
    let mut verdict = Verdict::of(deltas.len(), unknown);
    let acknowledged: i64 = deltas
        .iter()
        .filter(|(_, r)| *r == Some(true))
        .map(|(d, _)| d)
        .sum();
    let unknown = deltas.iter().filter(|(_, r)| r.is_none());
    let (low, high) = bounds(initial + acknowledged, unknown);
    if !(low..=high).contains(&final_value) {
        verdict.violation(format!(
            "final value {final_value} outside [{low}, {high}] (initial {initial}, acknowledged {acknowledged:+}, {} unknown)",
            verdict.unknown
        ));
    }
    verdict
}

/// [`check_counter`] when acknowledged writes may be lost (asynchronous replication, failover):
/// every delta that may have applied, acknowledged or unknown, may also be missing, so the final
/// value must only lie within what some subset of them explains. A value beyond that is invented.
pub fn check_counter_lossy(
    initial: i64,
    final_value: i64,
    deltas: &[(i64, Option<bool>)],
) -> Verdict {
    let unknown = deltas.iter().filter(|(_, r)| r.is_none()).count();
    let mut verdict = Verdict::of(deltas.len(), unknown);
    let (low, high) = bounds(initial, deltas.iter().filter(|(_, r)| *r != Some(false)));
    if !(low..=high).contains(&final_value) {
        verdict.violation(format!(
            "final value {final_value} outside [{low}, {high}]: no subset of the {} deltas that may have applied explains it (initial {initial})",
            deltas.iter().filter(|(_, r)| *r != Some(false)).count()
        ));
    }
    verdict
}

/// `base` plus every negative optional delta, and plus every positive one.
fn bounds<'a>(base: i64, optional: impl Iterator<Item = &'a (i64, Option<bool>)>) -> (i64, i64) {
    optional.fold((base, base), |(low, high), (d, _)| {
        (low + (*d).min(0), high + (*d).max(0))
    })
}

/// Every value a reply reported (and a final read) lies within `bounds`: one violation per value
/// outside.
pub fn check_within(values: &[i64], bounds: RangeInclusive<i64>) -> Verdict {
    let mut verdict = Verdict::of(values.len(), 0);
    for v in values.iter().filter(|v| !bounds.contains(v)) {
        verdict.violation(format!(
            "value {v} outside [{}, {}]",
            bounds.start(),
            bounds.end()
        ));
    }
    verdict
}

/// `decisions` are (window, outcome) pairs of admission decisions: `Some(true)` admitted and
/// acknowledged, `Some(false)` refused, `None` unknown. In no window may more than `limit`
/// acknowledged admissions exist (one violation per window above it).
pub fn check_admitted(decisions: &[(u64, Option<bool>)], limit: u64) -> Verdict {
    let unknown = decisions.iter().filter(|(_, r)| r.is_none()).count();
    let mut verdict = Verdict::of(decisions.len(), unknown);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Unknown deltas widen the allowed range; anything outside it is caught.
    #[test]
    fn counter() {
        let ops = [(1, Some(true)), (1, None), (1, Some(false)), (-1, None)];
        assert!(check_counter(0, 0, &ops).ok());
        assert!(check_counter(0, 2, &ops).ok());
        assert!(!check_counter(0, 3, &ops).ok());
        assert!(!check_counter(0, -1, &ops).ok());
        assert_eq!(check_counter(0, 3, &ops).unknown, 2);
    }

    /// With losses allowed, acknowledged deltas may be missing but nothing may be invented:
    /// a refused delta is no excuse.
    #[test]
    fn counter_lossy() {
        let ops = [
            (1, Some(true)),
            (1, Some(true)),
            (1, None),
            (5, Some(false)),
        ];
        assert!(check_counter_lossy(0, 0, &ops).ok());
        assert!(check_counter_lossy(0, 3, &ops).ok());
        assert!(!check_counter(0, 0, &ops).ok());
        assert!(!check_counter_lossy(0, 4, &ops).ok());
        assert!(!check_counter_lossy(10, 9, &ops).ok());
        let refunds = [(-7, Some(true)), (3, None)];
        assert!(check_counter_lossy(10, 6, &refunds).ok());
        assert!(!check_counter_lossy(10, 2, &refunds).ok());
    }

    /// Values outside the bounds are caught, one violation each; the bounds themselves pass.
    #[test]
    fn within() {
        assert!(check_within(&[0, 50, 100], 0..=100).ok());
        assert_eq!(
            check_within(&[-1, 5, 101, 200], 0..=100).violations.len(),
            3
        );
    }

    /// Admissions above the limit in one window are caught; unknowns are not counted.
    #[test]
    fn admitted() {
        let d = [(1, Some(true)), (1, Some(true)), (1, None), (2, Some(true))];
        assert!(check_admitted(&d, 2).ok());
        assert!(!check_admitted(&d, 1).ok());
        assert_eq!(check_admitted(&d, 1).violations.len(), 1);
    }
}
