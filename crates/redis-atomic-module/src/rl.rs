//! Rate limits whose state is one string: the fixed window, GCRA, the token bucket and the
//! sliding window counter (`rl_fixed_window.lua`, `rl_gcra.lua`, `rl_token_bucket.lua`,
//! `rl_sliding_window.lua`: their `rl_args`, `rl_clock`, check fragment and `rl_set_write`), step
//! by step in the scripts' order and arithmetic (doubles, see [`crate::lua`]), so a module client
//! and a script client share a key: same value, same expiry, same reply. The token bucket's and
//! sliding window's checks are in [`crate::counters`].

use crate::lua::{digits, digits_value, fmt_d, int_in, tonumber};
use crate::reply::Out;
use crate::server::{Call, Kind, OpenKey};

/// The algorithms of this file, as `rl_args` names them.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Algo {
    /// `fw`
    FixedWindow,
    /// `gcra`
    Gcra,
    /// `tb`
    TokenBucket,
    /// `sw`
    SlidingWindow,
    /// `sl` (its own decision: [`crate::sliding_log`])
    SlidingLog,
    /// `aw` in a policy (its own check: [`crate::policy`]; alone, [`crate::anchored`])
    AnchoredWindow,
}

/// One limit's validated numbers (`rl_args`' out-locals).
pub struct Limit {
    pub cost: f64,
    pub limit: f64,
    pub period: f64,
    pub burst: f64,
}

/// A check fragment's result: `ok`, `remaining`, `reset`, `retry`, and the write (`w1`, `w2`).
pub(crate) struct Check {
    pub(crate) ok: bool,
    pub(crate) remaining: f64,
    pub(crate) reset: f64,
    pub(crate) retry: f64,
    pub(crate) w1: String,
    pub(crate) w2: Option<f64>,
}

impl Check {
    /// A refusal (nothing to write).
    pub(crate) fn refused(remaining: f64, reset: f64, retry: f64) -> Check {
        Check {
            ok: false,
            remaining,
            reset,
            retry,
            w1: String::new(),
            w2: None,
        }
    }
}

/// `rl_args` for `fw`, `gcra`, `tb` and `sw`: the same checks in the same order, the same messages.
pub fn args(
    algo: Algo,
    cost: &[u8],
    limit: &[u8],
    period: &[u8],
    burst: &[u8],
) -> Result<Limit, Out> {
    let cost = if cost == b"1" {
        Some(1.0)
    } else {
        tonumber(cost)
    };
    // The sliding log keeps one member per unit: at most 10000.
    let (most, most_text) = match algo {
        Algo::SlidingLog => (1e4, "10000"),
        _ => (1e9, "1000000000"),
    };
    let limit = int_in(tonumber(limit), 1.0, most)
        .ok_or_else(|| Out::bad(&format!("limit must be an integer in 1..{most_text}")))?;
    let period = int_in(tonumber(period), 1000.0, 31_622_400_000_000.0)
        .ok_or_else(|| Out::bad("period_us must be an integer in 1000..31622400000000"))?;
    let mut burst = int_in(tonumber(burst), 1.0, 1e9)
        .ok_or_else(|| Out::bad("burst must be an integer in 1..1000000000"))?;
    if matches!(algo, Algo::Gcra | Algo::TokenBucket) {
        if burst * ((period + limit - 1.0) / limit).floor() > 4_503_599_627_370_496.0 {
            return Err(Out::bad(
                "burst * emission interval must not exceed 2^52 us",
            ));
        }
    } else {
        if algo == Algo::SlidingWindow && limit * period > 4_503_599_627_370_496.0 {
            return Err(Out::bad(
                "limit * period_us must not exceed 2^52 for the sliding window",
            ));
        }
        burst = limit;
    }
    let cost = int_in(cost, 1.0, 1e9)
        .ok_or_else(|| Out::bad("cost must be an integer in 1..1000000000"))?;
    if cost > burst {
        return Err(Out::bad("cost exceeds burst"));
    }
    Ok(Limit {
        cost,
        limit,
        period,
        burst,
    })
}

/// `rl_clock`: the test clock when sent, else the server's.
pub fn clock(call: &Call, sent: &[u8]) -> Result<f64, Out> {
    if sent.is_empty() {
        return Ok(call.now_us());
    }
    int_in(tonumber(sent), 0.0, 9_007_199_254_740_991.0)
        .ok_or_else(|| Out::bad("test_now_us must be an integer in 0..9007199254740991"))
}

/// `WRONGTYPE redis-atomic: <key> does not hold rate-limit state`.
pub fn not_state(key: &[u8]) -> Out {
    let mut text = b"WRONGTYPE redis-atomic: ".to_vec();
    text.extend_from_slice(key);
    text.extend_from_slice(b" does not hold rate-limit state");
    Out::Error(text)
}

/// `RATOMIC.RL_FIXED_WINDOW` / `_GCRA` / `_TOKEN_BUCKET` / `_SLIDING_WINDOW key cost limit period_us burst test_now_us`.
pub fn decide(call: &Call, algo: Algo) -> Out {
    if call.len() != 6 {
        return Out::WrongArity;
    }
    if algo == Algo::SlidingLog {
        return crate::sliding_log::decide(call);
    }
    let l = match args(algo, call.arg(1), call.arg(2), call.arg(3), call.arg(4)) {
        Ok(l) => l,
        Err(out) => return out,
    };
    let now = match clock(call, call.arg(5)) {
        Ok(now) => now,
        Err(out) => return out,
    };
    // One open for the check and the write (signalled modified only when written).
    let mut key = call.key_mut(0);
    if key.kind() == Kind::Other {
        return Out::wrongtype();
    }
    let Some(c) = string_check(algo, &l, now, key.value()) else {
        return not_state(call.arg(0));
    };
    if !c.ok {
        return Out::status("limited", &[c.retry, c.reset, c.remaining]);
    }
    write_open(call, &mut key, 0, &c);
    Out::status("allowed", &[c.remaining, c.reset])
}

/// The check fragment of an algorithm whose state is one string; None when the state does not
/// parse (or for the sliding log and the anchored window, checked elsewhere).
pub(crate) fn string_check(algo: Algo, l: &Limit, now: f64, raw: Option<&[u8]>) -> Option<Check> {
    match algo {
        Algo::FixedWindow => fixed_window(l, now, raw),
        Algo::Gcra => gcra(l, now, raw),
        Algo::TokenBucket => crate::counters::token_bucket(l, now, raw),
        Algo::SlidingWindow => crate::counters::sliding_window(l, now, raw),
        Algo::SlidingLog | Algo::AnchoredWindow => None,
    }
}

/// `rl_set_write` on key `i`: `SET key w1 PX ceil(w2 / 1000) + 1000`, or `KEEPTTL`.
pub(crate) fn set_write(call: &Call, i: usize, c: &Check) {
    write_open(call, &mut call.key_mut(i), i, c);
}

/// [`set_write`] on key `i`, already open for writing.
fn write_open(call: &Call, key: &mut OpenKey<'_>, i: usize, c: &Check) {
    key.write(c.w1.as_bytes());
    let at =
        c.w2.map(|w2| key.expire_in(crate::lua::to_ll(((w2 + 999.0) / 1000.0).floor() + 1000.0)));
    call.replicate_set(i, c.w1.as_bytes(), at);
}

/// `rl_fixed_window`'s check; None when the state does not parse.
fn fixed_window(l: &Limit, now: f64, raw: Option<&[u8]>) -> Option<Check> {
    let (mut ws, mut count, mut same) = ((now / l.period).floor() * l.period, 0.0, false);
    if let Some(raw) = raw {
        // '^(%d+):(%d+)$'
        let colon = raw.iter().position(|&b| b == b':')?;
        let (w, n) = (&raw[..colon], &raw[colon + 1..]);
        if !digits(w) || !digits(n) {
            return None;
        }
        let (w, n) = (digits_value(w), digits_value(n));
        if w >= ws {
            (ws, count, same) = (w, n, true);
        }
    }
    let reset = ws + l.period - now;
    if count + l.cost > l.limit {
        let remaining = if l.limit > count {
            l.limit - count
        } else {
            0.0
        };
        return Some(Check {
            ok: false,
            remaining,
            reset,
            retry: reset,
            w1: String::new(),
            w2: None,
        });
    }
    count += l.cost;
    let w1 = format!("{}:{}", fmt_d(ws), fmt_d(count));
    let w2 = (!same).then_some(reset);
    Some(Check {
        ok: true,
        remaining: l.limit - count,
        reset,
        retry: 0.0,
        w1,
        w2,
    })
}

/// `rl_gcra`'s check; None when the state does not parse.
fn gcra(l: &Limit, now: f64, raw: Option<&[u8]>) -> Option<Check> {
    let interval = ((l.period + l.limit - 1.0) / l.limit).floor();
    let mut tat = now;
    if let Some(raw) = raw {
        if !digits(raw) {
            return None;
        }
        tat = digits_value(raw);
        if tat < now {
            tat = now;
        }
    }
    let new_tat = tat + l.cost * interval;
    let allow_at = new_tat - l.burst * interval;
    if now < allow_at {
        let room = now + l.burst * interval - tat;
        let remaining = if room > 0.0 {
            (room / interval).floor()
        } else {
            0.0
        };
        return Some(Check {
            ok: false,
            remaining,
            reset: tat - now,
            retry: allow_at - now,
            w1: String::new(),
            w2: None,
        });
    }
    Some(Check {
        ok: true,
        remaining: ((now - allow_at) / interval).floor(),
        reset: new_tat - now,
        retry: 0.0,
        w1: fmt_d(new_tat),
        w2: Some(new_tat - now),
    })
}
