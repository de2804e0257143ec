//! Once per key: a side effect executed once however many duplicates raced (idempotency keys),
//! and one winner among competing requests (the accepted ack of a job, the caller told an event
//! is new).
//!
//! Outcomes per key are listed as in every checker here: `Some(true)` acknowledged (clean
//! execution, accepted, told "first"), `Some(false)` surely not (refused, lost the race, surely
//! not sent) and `None` unknown (may have been the one).

use super::Verdict;
use std::collections::{BTreeSet, HashMap};

/// `effects` counts how often each key's side effect happened (as the server recorded it);
/// `outcomes` says, per key, whether its request was acknowledged (`Some(true)`), surely not
/// executed (`Some(false)`) or unknown (`None`). An acknowledged key's effect happened exactly
/// once, an unknown one at most once, a refused one never.
pub fn check_exactly_once(
    effects: &HashMap<String, u64>,
    outcomes: &HashMap<String, Option<bool>>,
) -> Verdict {
    let executions = outcomes
        .iter()
        .map(|(key, outcome)| (key.clone(), vec![*outcome]))
        .collect();
    check_executed_once(effects, &executions)
}

/// `effects` counts how often each key's side effect happened (as the server recorded it);
/// `executions` lists, per key, every execution a duplicate started: `Some(true)` clean (effect
/// acknowledged and its result stored, so later duplicates replay it), `None` unclean (the effect
/// or the storing had an unknown outcome: a later duplicate may legitimately run it again),
/// `Some(false)` surely without effect. Per key: at most one clean execution, and an effect
/// count that some resolution of the unclean ones explains (at least the clean ones, at most
/// clean + unclean). An effect on a key nobody executed is a violation too.
pub fn check_executed_once(
    effects: &HashMap<String, u64>,
    executions: &HashMap<String, Vec<Option<bool>>>,
) -> Verdict {
    let unknown = executions
        .values()
        .flatten()
        .filter(|o| o.is_none())
        .count();
    let mut verdict = Verdict::of(executions.len(), unknown);
    let keys: BTreeSet<&String> = effects.keys().chain(executions.keys()).collect();
    for key in keys {
        let n = effects.get(key).copied().unwrap_or(0);
        let runs = executions.get(key).map_or(&[][..], Vec::as_slice);
        let clean = runs.iter().filter(|o| **o == Some(true)).count() as u64;
        let unclean = runs.iter().filter(|o| o.is_none()).count() as u64;
        if clean > 1 || n < clean || n > clean + unclean {
            verdict.violation(format!(
                "{key}: effect happened {n} times ({clean} clean, {unclean} unclean executions)"
            ));
        }
    }
    verdict
}

/// `acks` lists, per job that was enqueued, its acks' outcomes (`Some(true)` accepted,
/// `Some(false)` refused as stale, `None` unknown). Every job is accepted at most once, and
/// every job is accepted once unless an unknown ack may have been the one:
/// [`check_accepted_once`] on jobs.
pub fn check_acked_once(acks: &HashMap<String, Vec<Option<bool>>>) -> Verdict {
    check_accepted_once(acks)
}

/// `outcomes` lists, per key, the outcomes of the requests competing to be the one that counts
/// (a job's acks, the callers asking whether an event is new). Every key has at most one winner,
/// and one unless an unknown outcome may have been it (none lost): one violation per key.
pub fn check_accepted_once(outcomes: &HashMap<String, Vec<Option<bool>>>) -> Verdict {
    check_winners(outcomes, true)
}

/// [`check_accepted_once`] without "at most one": for when a winner may legitimately repeat
/// (acknowledged writes lost in a failover, so a later request wins again). Only keys with no
/// winner and no unknown outcome that may have been it are violations.
pub fn check_none_lost(outcomes: &HashMap<String, Vec<Option<bool>>>) -> Verdict {
    check_winners(outcomes, false)
}

fn check_winners(outcomes: &HashMap<String, Vec<Option<bool>>>, at_most_one: bool) -> Verdict {
    let mut verdict = Verdict::of(
        outcomes.values().map(Vec::len).sum(),
        outcomes.values().flatten().filter(|a| a.is_none()).count(),
    );
    let keys: BTreeSet<&String> = outcomes.keys().collect();
    for key in keys {
        let outcomes = &outcomes[key];
        let accepted = outcomes.iter().filter(|o| **o == Some(true)).count();
        let unknown = outcomes.iter().filter(|o| o.is_none()).count();
        if at_most_one && accepted > 1 {
            verdict.violation(format!("{key}: accepted {accepted} times"));
        }
        if accepted == 0 && unknown == 0 {
            verdict.violation(format!("{key}: never accepted (lost)"));
        }
    }
    verdict
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map<V: Clone>(entries: &[(&str, V)]) -> HashMap<String, V> {
        entries
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    /// Twice, never, and unrequested effects are caught.
    #[test]
    fn exactly_once() {
        let outcomes = map(&[("a", Some(true)), ("b", None), ("c", Some(false))]);
        assert!(check_exactly_once(&map(&[("a", 1)]), &outcomes).ok());
        assert!(!check_exactly_once(&map(&[("a", 2)]), &outcomes).ok());
        assert!(!check_exactly_once(&HashMap::new(), &outcomes).ok());
        assert!(!check_exactly_once(&map(&[("a", 1), ("z", 1)]), &outcomes).ok());
        assert!(!check_exactly_once(&map(&[("a", 1), ("c", 1)]), &outcomes).ok());
    }

    /// Duplicates: one clean execution plus unclean ones allow as many effects as executions;
    /// two clean executions, or fewer effects than clean executions, are caught.
    #[test]
    fn executed_once() {
        let runs = map(&[
            ("k1", vec![None, Some(true)]),
            ("k2", vec![Some(true), Some(true)]),
            ("k3", vec![Some(false)]),
        ]);
        let good = map(&[("k1", 2u64)]);
        let v = check_executed_once(&good, &map(&[("k1", runs["k1"].clone())]));
        assert!(v.ok() && v.unknown == 1, "{v:?}");
        assert!(check_executed_once(&map(&[("k1", 1)]), &map(&[("k1", runs["k1"].clone())])).ok());
        assert!(!check_executed_once(&map(&[("k1", 3)]), &runs).ok());
        let twice = check_executed_once(&map(&[("k1", 1), ("k2", 2)]), &runs);
        assert_eq!(twice.violations.len(), 1, "{twice:?}");
        let lost = check_executed_once(&map(&[("k2", 0)]), &map(&[("k2", vec![Some(true)])]));
        assert!(!lost.ok());
    }

    /// Double acks and lost jobs are caught; an unknown ack may stand for the accepted one.
    #[test]
    fn acked_once() {
        let acks = map(&[("j1", vec![Some(true)]), ("j2", vec![None, Some(false)])]);
        assert!(check_acked_once(&acks).ok());
        assert!(!check_acked_once(&map(&[("j", vec![Some(true), Some(true)])])).ok());
        assert!(!check_acked_once(&map(&[("j", vec![Some(false)])])).ok());
        assert!(!check_acked_once(&map(&[("never-claimed", vec![])])).ok());
    }

    /// Without "at most one", repeated winners pass but a key nobody won is still caught.
    #[test]
    fn none_lost() {
        let repeated = map(&[("e0", vec![Some(true), Some(true)])]);
        assert!(check_none_lost(&repeated).ok());
        assert!(!check_accepted_once(&repeated).ok());
        let dropped = map(&[("e1", vec![Some(false), Some(false)])]);
        assert_eq!(check_none_lost(&dropped).violations.len(), 1);
    }
}
