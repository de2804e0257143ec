//! Rate limiters: how many admissions a limit allows, per algorithm, judged from what clients saw.
//!
//! Two kinds of evidence, so that no checker needs the server's clock to agree with the client's:
//!
//! * **Spans** (sliding log, token bucket, GCRA): an admission surely happened on the server
//!   between its request's invocation and its reply, on the client's monotonic clock. A set of
//!   admissions whose spans all lie inside `[a, b]` happened within `b − a` of server time (clock
//!   rates agree; [`RATE_SLACK`] covers the rest), so counting only such sets never accuses a
//!   correct limiter, however slow the replies: slow replies only make the check more lenient.
//! * **Window positions** (fixed, anchored and sliding window): an admitted reply's `reset` gives the
//!   decision's exact offset into its window on the server's clock, and the window itself once
//!   the caller has attributed it (see the CLI's `verify`); the order of two admissions of one
//!   window is then exact (the server runs one script at a time).
//!
//! Only acknowledged admissions count (`Some(true)`): an unknown outcome may or may not have
//! admitted, so it cannot make a violation; it is reported in the verdict's `unknown`. Every
//! checker reports one violation per admission (or per start of an interval) over the bound, so
//! a broken limiter shows as many violations, not one.

use super::Verdict;
use std::collections::BTreeMap;
use std::ops::Range;
use std::time::Duration;

/// Client and server clocks may run at slightly different rates (NTP slews by up to 500 ppm):
/// intervals measured by the client are stretched by this fraction (0.1 %) before a bound is
/// computed from them, and shrunk by it before compared with a period.
pub const RATE_SLACK: f64 = 0.001;

/// Acknowledged admissions' spans, sorted by invocation.
fn admitted_spans(decisions: &[(Range<Duration>, Option<bool>)]) -> Vec<Range<Duration>> {
    let mut spans: Vec<Range<Duration>> = decisions
        .iter()
        .filter(|(_, r)| *r == Some(true))
        .map(|(s, _)| s.clone())
        .collect();
    spans.sort_by_key(|s| s.start);
    spans
}

fn verdict_of<T>(decisions: &[(T, Option<bool>)]) -> Verdict {
    let unknown = decisions.iter().filter(|(_, r)| r.is_none()).count();
    Verdict::of(decisions.len(), unknown)
}

/// For every admission `i` as the start of an interval, the largest set of admissions whose spans
/// lie in `[start_i, end]` for each `end`: `excess(length, count)` says whether `count`
/// admissions within `length` break the bound (one violation per start at most).
fn judge_intervals(
    decisions: &[(Range<Duration>, Option<bool>)],
    what: &str,
    excess: impl Fn(Duration, u64) -> Option<u64>,
) -> Verdict {
    let mut verdict = verdict_of(decisions);
    let spans = admitted_spans(decisions);
    let mut by_end: Vec<&Range<Duration>> = spans.iter().collect();
    by_end.sort_by_key(|s| s.end);
    for start in &spans {
        let mut count = 0;
        for span in by_end.iter().filter(|s| s.start >= start.start) {
            count += 1;
            let length = span.end.saturating_sub(start.start);
            if let Some(bound) = excess(length, count) {
                verdict.violation(format!(
                    "{count} admitted within {length:?} from {:?}: {what} allows {bound}",
                    start.start
                ));
                break;
            }
        }
    }
    verdict
}

/// Sliding log: at most `limit` admissions in any `period`. `decisions` are (invocation..reply
/// on the client's clock, outcome) of single-unit requests.
pub fn check_in_any_period(
    decisions: &[(Range<Duration>, Option<bool>)],
    limit: u64,
    period: Duration,
) -> Verdict {
    let period = period.mul_f64(1.0 - RATE_SLACK);
    judge_intervals(decisions, "the sliding log", |length, count| {
        (length < period && count > limit).then_some(limit)
    })
}

/// Token bucket and GCRA: at most `burst + floor(t / interval)` single-unit admissions in any
/// interval of length `t` (a full bucket at its start, one more per emission interval).
pub fn check_rate(
    decisions: &[(Range<Duration>, Option<bool>)],
    burst: u64,
    interval: Duration,
) -> Verdict {
    let interval_us = interval.as_micros().max(1);
    judge_intervals(decisions, "the rate", |length, count| {
        let bound = burst + (length.mul_f64(1.0 + RATE_SLACK).as_micros() / interval_us) as u64;
        (count > bound).then_some(bound)
    })
}

/// One admission of a windowed limiter: its window's index and its offset into that window on
/// the server's clock, exact (from the reply's `reset`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowPosition {
    /// The window's index (its start divided by the period); for the anchored window, whose
    /// windows are not aligned, its end in µs ([`check_anchored_windows`]).
    pub window: u64,
    /// Time since the window's start at the decision.
    pub elapsed: Duration,
}

/// Fixed window (`weighted` false): the `k`-th single-unit admission of a window (by its exact
/// position) needs `k ≤ limit`. Sliding window counter (`weighted` true): also counting the
/// previous window's admissions `p` (capped at `limit`, as the limiter caps them), weighted by the
/// part of the sliding period still inside it: `p · (period − elapsed) + k · period ≤ limit ·
/// period` (the limiter's own rule; the acknowledged admissions are a lower bound of what it
/// counted, so a violation here is one there). Positions `None` (not attributed) are ignored.
pub fn check_windows(
    decisions: &[(Option<WindowPosition>, Option<bool>)],
    limit: u64,
    period: Duration,
    weighted: bool,
) -> Verdict {
    let mut verdict = verdict_of(decisions);
    let mut windows: BTreeMap<u64, Vec<Duration>> = BTreeMap::new();
    for (pos, _) in decisions.iter().filter(|(_, r)| *r == Some(true)) {
        if let Some(p) = pos {
            windows.entry(p.window).or_default().push(p.elapsed);
        }
    }
    let period_us = period.as_micros();
    for (window, elapsed) in &windows {
        let prev = match window.checked_sub(1).and_then(|w| windows.get(&w)) {
            Some(p) if weighted => (p.len() as u128).min(u128::from(limit)),
            _ => 0,
        };
        for e in elapsed {
            // Admissions strictly before this one in the window, plus this one.
            let k = elapsed.iter().filter(|x| *x < e).count() as u128 + 1;
            let weight = period_us.saturating_sub(e.as_micros());
            if prev * weight + k * period_us > u128::from(limit) * period_us {
                verdict.violation(format!(
                    "window {window}: admission {k} at {e:?} (previous window {prev}), limit {limit}"
                ));
            }
        }
    }
    verdict
}

/// Anchored window: windows are not aligned, so each admission comes with its window's *end*
/// instead of an index (in [`WindowPosition::window`], µs on the server's clock: the decision's
/// estimated server time plus its reply's `reset`). All ends of one window agree within the
/// estimate's error; two windows' ends are at least a period apart (the next opens after the last
/// one closed). So, with the caller attributing only decisions whose estimates of one window
/// differ by less than half a period, ends within half a period of a window's first end are that
/// window, and a window with `n > limit` admissions has `n − limit` violations. (Counted, not
/// ordered: `reset` has whole-ms resolution here, so offsets tie.)
pub fn check_anchored_windows(
    decisions: &[(Option<WindowPosition>, Option<bool>)],
    limit: u64,
    period: Duration,
) -> Verdict {
    let mut verdict = verdict_of(decisions);
    let half = u64::try_from(period.as_micros() / 2).unwrap_or(u64::MAX);
    let mut ends: Vec<u64> = decisions
        .iter()
        .filter(|(_, r)| *r == Some(true))
        .filter_map(|(p, _)| p.map(|p| p.window))
        .collect();
    ends.sort_unstable();
    let mut windows: Vec<(u64, u64)> = Vec::new(); // (first end, admissions)
    for e in ends {
        match windows.last_mut() {
            Some((first, n)) if e - *first <= half => *n += 1,
            _ => windows.push((e, 1)),
        }
    }
    for (end, n) in windows {
        for k in limit + 1..=n {
            verdict.violation(format!(
                "window ending at {end} µs: admission {k} of {n}, limit {limit}"
            ));
        }
    }
    verdict
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Windows found by their ends: one window's jittered ends are one window, two windows a
    /// period apart are two, and a window over its limit is flagged once per extra admission.
    #[test]
    fn anchored_windows_by_their_ends() {
        let p = Duration::from_millis(200);
        let at = |end_ms: u64, jitter_us: u64| {
            let window = end_ms * 1000 + jitter_us;
            (
                Some(WindowPosition {
                    window,
                    elapsed: Duration::from_millis(10),
                }),
                Some(true),
            )
        };
        // 3 admissions around an end at 1 000 ms, 3 at 1 230 ms (the next window): limit 3 holds.
        let ok: Vec<_> = [
            (1000, 0),
            (1000, 900),
            (999, 400),
            (1230, 0),
            (1231, 0),
            (1229, 700),
        ]
        .iter()
        .map(|&(e, j)| at(e, j))
        .collect();
        assert!(check_anchored_windows(&ok, 3, p).violations.is_empty());
        // Same, limit 2: one extra in each window.
        assert_eq!(check_anchored_windows(&ok, 2, p).violations.len(), 2);
        // Unknown outcomes and unattributed admissions never count.
        let mut more = ok.clone();
        more.push((
            Some(WindowPosition {
                window: 1_000_000,
                elapsed: p / 2,
            }),
            None,
        ));
        more.push((None, Some(true)));
        assert!(check_anchored_windows(&more, 3, p).violations.is_empty());
    }

    fn ms(a: u64, b: u64) -> Range<Duration> {
        Duration::from_millis(a)..Duration::from_millis(b)
    }

    fn ok(spans: &[Range<Duration>]) -> Vec<(Range<Duration>, Option<bool>)> {
        spans.iter().map(|s| (s.clone(), Some(true))).collect()
    }

    /// Three admissions inside one period break a limit of 2; spread over more than a period, or
    /// with one of them unknown, they do not.
    #[test]
    fn any_period() {
        let p = Duration::from_millis(100);
        let close = ok(&[ms(0, 1), ms(10, 11), ms(50, 60)]);
        assert_eq!(check_in_any_period(&close, 2, p).violations.len(), 1);
        assert!(check_in_any_period(&close, 3, p).ok());
        let spread = ok(&[ms(0, 1), ms(10, 11), ms(101, 102)]);
        assert!(check_in_any_period(&spread, 2, p).ok());
        // A slow reply may have been decided late: not surely inside the period.
        let slow = ok(&[ms(0, 1), ms(10, 11), ms(20, 200)]);
        assert!(check_in_any_period(&slow, 2, p).ok());
        let mut unknown = close.clone();
        unknown[2].1 = None;
        let v = check_in_any_period(&unknown, 2, p);
        assert!(v.ok());
        assert_eq!(v.unknown, 1);
    }

    /// burst at once, then one per interval: exactly the bound passes, one more fails.
    #[test]
    fn rate() {
        let t = Duration::from_millis(10);
        let mut spans: Vec<_> = (0..3).map(|_| ms(0, 1)).collect();
        spans.extend((1..=5).map(|i| ms(10 * i, 10 * i + 1)));
        assert!(check_rate(&ok(&spans), 3, t).ok());
        spans.push(ms(51, 52));
        let v = check_rate(&ok(&spans), 3, t);
        assert!(!v.ok());
        assert!(check_rate(&ok(&spans), 4, t).ok());
        // Every start shows a flood: one violation per start.
        let flood: Vec<_> = (0..50).map(|i| ms(i, i + 1)).collect();
        assert!(check_rate(&ok(&flood), 3, t).violations.len() > 40);
    }

    fn at(window: u64, ms: u64) -> (Option<WindowPosition>, Option<bool>) {
        let elapsed = Duration::from_millis(ms);
        (Some(WindowPosition { window, elapsed }), Some(true))
    }

    /// A fixed window counts its own admissions; the sliding window adds the weighted previous
    /// one. Each admission over the bound is one violation.
    #[test]
    fn windows() {
        let p = Duration::from_millis(100);
        let d = [at(1, 10), at(1, 20), at(2, 5), at(2, 90)];
        assert!(check_windows(&d, 2, p, false).ok());
        assert_eq!(check_windows(&d, 1, p, false).violations.len(), 2);
        // Window 2 at 5 ms: 2 · 95 + 1 · 100 > 2 · 100; at 90 ms: 2 · 10 + 2 · 100 > 2 · 100.
        let v = check_windows(&d, 2, p, true);
        assert_eq!(v.violations.len(), 2, "{v:?}");
        // Alone at 90 ms after a full window: 2 · 10 + 1 · 100 ≤ 2 · 100.
        let late = [at(1, 10), at(1, 20), at(2, 90)];
        assert!(check_windows(&late, 2, p, true).ok());
        let unattributed = [(None, Some(true)), at(1, 1)];
        assert!(check_windows(&unattributed, 1, p, false).ok());
    }
}
