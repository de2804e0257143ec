//! What a check's calls cost besides their verdicts: how many had an unknown outcome, and how
//! available the primitive was — the calls refused (nothing ran), the longest stretch in which
//! every call was refused, and the longest in which no call was served (each refused, or its
//! outcome unknown: a stalled or failing-over node times out rather than refuses). That is what
//! a slot migration, a failover or a full memory cost that primitive. Kept as the calls end, in
//! constant memory, so a check may run for an hour.

use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// How available a primitive was during its check (a row's `availability` in `--json`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Availability {
    /// Calls the check made to the primitive (its own bookkeeping and final reads excluded).
    pub calls: u64,
    /// Of which refused before anything ran (`NotSent`, `Rejected`: `TRYAGAIN` during a slot
    /// migration, `CLUSTERDOWN`, `LOADING`, `OOM`, …).
    pub refused: u64,
    /// `refused / calls` (0 without calls).
    pub refused_share: f64,
    /// The longest stretch, in ms, in which every call that ended was refused: from the later of
    /// the first such call's start and the end of the last call that was not refused, to the end
    /// of the last refused one.
    pub longest_outage_ms: u64,
    /// The same for calls that were not served (refused, or their outcome unknown: a timeout,
    /// a lost or unusable reply): the longest stretch in which no call got an answer.
    pub longest_unserved_ms: u64,
}

/// How one call ended, for availability.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Served {
    /// Answered.
    Yes,
    /// Refused before anything ran.
    Refused,
    /// No usable answer (unknown outcome, an error).
    No,
}

/// A check's counts, shared by its workers.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    unknown: AtomicU64,
    outages: Mutex<Outages>,
}

#[derive(Debug, Default)]
struct Outages {
    calls: u64,
    refused: u64,
    refusals: Stretch,
    unserved: Stretch,
}

/// The longest stretch of calls of one kind (refused; not served), kept as calls end.
#[derive(Debug, Default)]
struct Stretch {
    /// When the current stretch began (None: the last call ended was not of the kind).
    start: Option<Duration>,
    /// When the last call not of the kind ended.
    last_other: Duration,
    longest: Duration,
}

impl Stretch {
    fn call(&mut self, invoked: Duration, ended: Duration, of_the_kind: bool) {
        if !of_the_kind {
            self.start = None;
            self.last_other = self.last_other.max(ended);
            return;
        }
        let first = invoked.max(self.last_other);
        let start = *self.start.get_or_insert(first);
        self.longest = self.longest.max(ended.saturating_sub(start));
    }
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl Tally {
    pub(crate) fn count_unknown(&self) {
        self.unknown.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn unknown(&self) -> u64 {
        self.unknown.load(Ordering::Relaxed)
    }

    /// One call, invoked and ended at these times on the check's clock.
    pub(crate) fn call(&self, invoked: Duration, ended: Duration, served: Served) {
        let mut o = self.outages.lock().unwrap_or_else(|p| p.into_inner());
        o.calls += 1;
        o.refused += u64::from(served == Served::Refused);
        o.refusals.call(invoked, ended, served == Served::Refused);
        o.unserved.call(invoked, ended, served != Served::Yes);
    }

    pub(crate) fn availability(&self) -> Availability {
        let o = self.outages.lock().unwrap_or_else(|p| p.into_inner());
        Availability {
            calls: o.calls,
            refused: o.refused,
            refused_share: if o.calls == 0 {
                0.0
            } else {
                o.refused as f64 / o.calls as f64
            },
            longest_outage_ms: ms(o.refusals.longest),
            longest_unserved_ms: ms(o.unserved.longest),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// A stretch of refusals runs from its first call's start (or the last other call's end,
    /// if later) to its last refusal's end; any other call ends it; the longest one is kept.
    /// Unserved stretches count unknown outcomes too.
    #[test]
    fn longest_stretches() {
        let t = Tally::default();
        t.call(at(0), at(10), Served::Yes);
        t.call(at(5), at(20), Served::Refused); // stretch from 10 (the other call ended after 5)
        t.call(at(15), at(60), Served::Refused); // 10..60
        t.call(at(55), at(70), Served::No); // ends the refusals, not the unserved: 10..70
        t.call(at(71), at(90), Served::Refused); // refusals 71..90: shorter; unserved 10..90
        t.call(at(91), at(95), Served::Yes);
        let a = t.availability();
        assert_eq!((a.calls, a.refused, a.longest_outage_ms), (6, 3, 50));
        assert_eq!(a.longest_unserved_ms, 80);
        assert!((a.refused_share - 0.5).abs() < 1e-9);
        assert_eq!(Tally::default().availability(), Availability::default());
    }
}
