//! The rate-limit scripts (`rl_*.lua`) as pure Rust: same inputs, same integer µs arithmetic,
//! same verdicts. Key expiry is not modelled: the scripts give every key a TTL longer than the
//! time its state can matter, so an expired key and the model's stale state decide alike. The
//! anchored window is the exception: its key's expiry (whole ms) is its window, so its state
//! carries the instant the key expires.
//!
//! ```
//! use redis_atomic::model::ratelimit::PolicyModel;
//! use redis_atomic::ratelimit::{Decision, Limit};
//! use std::time::Duration;
//!
//! let mut m = PolicyModel::new(Limit::gcra(2, Duration::from_secs(1)).unwrap().into(), 60_000_000);
//! let now = 1_700_000_000_000_000;
//! assert!(m.consume(now, 1, None).decision.is_allowed());
//! assert!(m.consume(now, 1, None).decision.is_allowed());
//! let third = m.consume(now, 1, None).decision;
//! assert!(matches!(third, Decision::Limited { retry_after, .. } if retry_after == Duration::from_millis(500)));
//! ```

use crate::ratelimit::{Algorithm, Limit, LimitStatus, Policy, Verdict};
use std::collections::HashMap;
use std::time::Duration;

/// One limit's stored state, as its script keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum State {
    /// Fixed window: window start and count.
    Window {
        /// Window start (µs).
        start: u64,
        /// Units charged in it.
        count: u64,
    },
    /// Anchored window: units charged and the key's expiry (µs, a whole ms).
    Anchored {
        /// Units charged in the window.
        count: u64,
        /// The window closes (the key expires) after this instant.
        closes: u64,
    },
    /// Sliding log: one timestamp per admitted unit.
    Log(Vec<u64>),
    /// Sliding window counter: current window start, previous and current counts.
    Sliding {
        /// Window start (µs).
        start: u64,
        /// Previous window's count.
        prev: u64,
        /// Current window's count.
        curr: u64,
    },
    /// Token bucket: tokens and the time refills are counted from.
    Bucket {
        /// Tokens left.
        tokens: u64,
        /// Refills are counted from here (µs).
        at: u64,
    },
    /// GCRA: the theoretical arrival time (µs).
    Tat(u64),
}

/// One limit's check: the decision it alone makes, and its state if charged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    /// Whether this limit admits the request.
    pub ok: bool,
    /// Units left (after the charge when `ok`).
    pub remaining: u64,
    /// µs until full capacity.
    pub reset: u64,
    /// µs until this limit would admit the request (0 when `ok`).
    pub retry: u64,
    /// The state to store when every limit admits.
    pub next: Option<State>,
}

fn refused(remaining: u64, reset: u64, retry: u64) -> Check {
    Check {
        ok: false,
        remaining,
        reset,
        retry,
        next: None,
    }
}

fn admitted(remaining: u64, reset: u64, next: State) -> Check {
    Check {
        ok: true,
        remaining,
        reset,
        retry: 0,
        next: Some(next),
    }
}

/// What `limit` decides for `cost` units at `now` from `state` (None: no key).
pub fn check(limit: &Limit, state: Option<&State>, cost: u64, now: u64) -> Check {
    let (l, p, b) = (limit.limit(), limit.period_us(), limit.burst());
    match limit.algorithm() {
        Algorithm::FixedWindow => fixed_window(l, p, state, cost, now),
        Algorithm::AnchoredWindow => anchored_window(l, limit.period_ms(), state, cost, now),
        Algorithm::SlidingLog => sliding_log(l, p, state, cost, now),
        Algorithm::SlidingWindow => sliding_window(l, p, state, cost, now),
        Algorithm::TokenBucket => token_bucket(limit.interval_us(), b, state, cost, now),
        _ => gcra(limit.interval_us(), b, state, cost, now),
    }
}

/// Redis keeps expiry in ms: `PEXPIRE` sets `closes` at now's ms plus the window, the key lives
/// while the clock's ms is at most `closes`, and `PTTL` (at least 1 ms, as the script reports
/// it) is `closes` minus now's ms.
fn anchored_window(l: u64, window_ms: u64, state: Option<&State>, cost: u64, now: u64) -> Check {
    let now_ms = now / 1000 * 1000;
    let (count, closes) = match state {
        Some(&State::Anchored { count, closes }) if closes >= now_ms => (count, closes),
        _ => (0, now_ms + window_ms * 1000),
    };
    let reset = (closes - now_ms).max(1000);
    if count + cost > l {
        return refused(l.saturating_sub(count), reset, reset);
    }
    let count = count + cost;
    admitted(l - count, reset, State::Anchored { count, closes })
}

fn fixed_window(l: u64, p: u64, state: Option<&State>, cost: u64, now: u64) -> Check {
    let (mut ws, mut count) = (now / p * p, 0);
    if let Some(&State::Window { start, count: n }) = state {
        if start >= ws {
            (ws, count) = (start, n);
        }
    }
    let reset = ws + p - now;
    if count + cost > l {
        return refused(l.saturating_sub(count), reset, reset);
    }
    let count = count + cost;
    admitted(l - count, reset, State::Window { start: ws, count })
}

fn sliding_log(l: u64, p: u64, state: Option<&State>, cost: u64, now: u64) -> Check {
    let entries: &[u64] = match state {
        Some(State::Log(e)) => e,
        _ => &[],
    };
    let cutoff = i128::from(now) - i128::from(p);
    let mut live: Vec<u64> = entries
        .iter()
        .copied()
        .filter(|&s| i128::from(s) > cutoff)
        .collect();
    live.sort_unstable();
    let n = live.len() as u64;
    if n + cost > l {
        let nth = live[(n + cost - l - 1) as usize];
        let newest = entries.iter().copied().max().unwrap_or(now);
        return refused(
            l.saturating_sub(n),
            (newest + p).saturating_sub(now),
            nth + p - now,
        );
    }
    let mut kept: Vec<u64> = entries
        .iter()
        .copied()
        .filter(|&s| i128::from(s) > cutoff)
        .collect();
    kept.extend(std::iter::repeat_n(now, cost as usize));
    admitted(l - n - cost, p, State::Log(kept))
}

fn sliding_window(l: u64, p: u64, state: Option<&State>, cost: u64, now: u64) -> Check {
    let (mut ws, mut prev, mut curr) = (now / p * p, 0, 0);
    if let Some(&State::Sliding {
        start,
        prev: sp,
        curr: sc,
    }) = state
    {
        if start >= ws {
            (ws, prev, curr) = (start, sp, sc);
        } else if start + p == ws {
            prev = sc;
        }
    }
    let (prev, curr) = (prev.min(l), curr.min(l));
    let elapsed = now.saturating_sub(ws);
    let weight = p - elapsed;
    let weighted_up = (prev * weight).div_ceil(p);
    let room = i128::from(l) - i128::from(curr) - i128::from(cost);
    if room >= 0 && i128::from(prev * weight) <= room * i128::from(p) {
        let room = room as u64;
        let next = State::Sliding {
            start: ws,
            prev,
            curr: curr + cost,
        };
        return admitted(room - weighted_up, 2 * p - elapsed, next);
    }
    let retry = if room >= 0 {
        p - (room as u64 * p / prev) - elapsed
    } else {
        p - elapsed + p.saturating_sub((l - cost) * p / curr)
    };
    let reset = if curr > 0 {
        2 * p - elapsed
    } else if prev > 0 {
        weight
    } else {
        0
    };
    refused(l.saturating_sub(curr + weighted_up), reset, retry)
}

fn token_bucket(interval: u64, burst: u64, state: Option<&State>, cost: u64, now: u64) -> Check {
    let (mut tokens, mut at) = (burst, now);
    if let Some(&State::Bucket { tokens: t, at: a }) = state {
        (tokens, at) = (t, a);
        if now > at {
            let n = (now - at) / interval;
            (tokens, at) = (tokens + n, at + n * interval);
        }
    }
    if tokens >= burst {
        (tokens, at) = (burst, at.max(now));
    }
    let full_at = |tokens: u64| (at + (burst - tokens) * interval).saturating_sub(now);
    if tokens < cost {
        let retry = at + (cost - tokens) * interval - now;
        return refused(tokens, full_at(tokens), retry);
    }
    let tokens = tokens - cost;
    admitted(tokens, full_at(tokens), State::Bucket { tokens, at })
}

fn gcra(interval: u64, burst: u64, state: Option<&State>, cost: u64, now: u64) -> Check {
    let tat = match state {
        Some(&State::Tat(t)) => t.max(now),
        _ => now,
    };
    let tolerance = burst * interval;
    let new_tat = tat + cost * interval;
    // May be negative (a tolerance longer than the epoch's age): i128, as Lua's doubles allow.
    let allow_at = i128::from(new_tat) - i128::from(tolerance);
    let slack = i128::from(now) - allow_at;
    if slack < 0 {
        let room = (now + tolerance).saturating_sub(tat);
        return refused(room / interval, tat - now, (-slack) as u64);
    }
    admitted(
        (slack as u64) / interval,
        new_tat - now,
        State::Tat(new_tat),
    )
}

#[derive(Clone, Debug)]
struct Record {
    expires: u64,
    remaining: u64,
    reset_at: u64,
    limits: Vec<(u64, u64)>,
}

/// A policy's limits and request records: what `rl_policy` (or `rl_<algorithm>` for one limit)
/// keeps in Redis for one rate-limited identity.
#[derive(Clone, Debug)]
pub struct PolicyModel {
    limits: Vec<(Limit, Option<State>)>,
    request_ttl_us: u64,
    requests: HashMap<String, Record>,
}

impl PolicyModel {
    /// Fresh state for `policy`, remembering admitted request ids for `request_ttl_us`.
    pub fn new(policy: Policy, request_ttl_us: u64) -> Self {
        PolicyModel {
            limits: policy.limits().iter().map(|l| (l.clone(), None)).collect(),
            request_ttl_us,
            requests: HashMap::new(),
        }
    }

    /// The state of limit `i`.
    pub fn state(&self, i: usize) -> Option<&State> {
        self.limits.get(i).and_then(|(_, s)| s.as_ref())
    }

    /// Decides `cost` units at `now` (µs), all or nothing, replaying a live request id.
    pub fn consume(&mut self, now: u64, cost: u64, request_id: Option<&str>) -> Verdict {
        if let Some(rec) = request_id.and_then(|id| self.requests.get(id)) {
            if rec.expires > now {
                let limits = rec
                    .limits
                    .iter()
                    .map(|&(r, t)| status(r, t.saturating_sub(now), 0))
                    .collect();
                let reset = rec.reset_at.saturating_sub(now);
                return Verdict::from_us(true, true, rec.remaining, reset, limits);
            }
        }
        let checks: Vec<Check> = self
            .limits
            .iter()
            .map(|(l, s)| check(l, s.as_ref(), cost, now))
            .collect();
        let ok = checks.iter().all(|c| c.ok);
        let remaining = checks.iter().map(|c| c.remaining).min().unwrap_or(0);
        let reset = checks.iter().map(|c| c.reset).max().unwrap_or(0);
        let retry = checks.iter().map(|c| c.retry).max().unwrap_or(0);
        // Refused: a limit that would admit reports what it has now, since nothing is charged.
        let statuses = checks
            .iter()
            .map(|c| {
                let back = if !ok && c.ok { cost } else { 0 };
                status(c.remaining + back, c.reset, c.retry)
            })
            .collect();
        if !ok {
            return Verdict::from_us(false, false, retry, reset, statuses);
        }
        let mut record = Record {
            expires: now + self.request_ttl_us,
            remaining,
            reset_at: now + reset,
            limits: Vec::with_capacity(checks.len()),
        };
        for ((_, state), c) in self.limits.iter_mut().zip(checks) {
            record.limits.push((c.remaining, now + c.reset));
            *state = c.next;
        }
        if let Some(id) = request_id {
            self.requests.insert(id.to_string(), record);
        }
        Verdict::from_us(true, false, remaining, reset, statuses)
    }
}

fn status(remaining: u64, reset_us: u64, retry_us: u64) -> LimitStatus {
    LimitStatus {
        remaining,
        reset_after: Duration::from_micros(reset_us),
        retry_after: Duration::from_micros(retry_us),
    }
}
