//! The token bucket and the sliding window counter (`rl_token_bucket`, `rl_sliding_window`):
//! their check fragments, in the scripts' order and double arithmetic; the rest of the decision
//! (arguments, clock, write) is [`crate::rl`]'s, shared with the fixed window and GCRA.

use crate::lua::{digits, digits_value, fmt_d};
use crate::rl::{Check, Limit};

/// `n` digit groups separated by ':' (`'^(%d+):(%d+)$'` and the like), as numbers.
fn groups<const N: usize>(raw: &[u8]) -> Option<[f64; N]> {
    let mut out = [0.0; N];
    let mut parts = raw.split(|&b| b == b':');
    for slot in out.iter_mut() {
        let part = parts.next()?;
        if !digits(part) {
            return None;
        }
        *slot = digits_value(part);
    }
    parts.next().is_none().then_some(out)
}

/// `rl_token_bucket`'s check; None when the state does not parse.
pub(crate) fn token_bucket(l: &Limit, now: f64, raw: Option<&[u8]>) -> Option<Check> {
    let interval = ((l.period + l.limit - 1.0) / l.limit).floor();
    let (mut tokens, mut at) = (l.burst, now);
    if let Some(raw) = raw {
        [tokens, at] = groups::<2>(raw)?;
        if now > at {
            let n = ((now - at) / interval).floor();
            (tokens, at) = (tokens + n, at + n * interval);
        }
    }
    if tokens >= l.burst {
        tokens = l.burst;
        if now > at {
            at = now;
        }
    }
    if tokens < l.cost {
        let reset = at + (l.burst - tokens) * interval - now;
        let retry = at + (l.cost - tokens) * interval - now;
        return Some(Check::refused(
            tokens,
            if reset > 0.0 { reset } else { 0.0 },
            retry,
        ));
    }
    tokens -= l.cost;
    let mut reset = at + (l.burst - tokens) * interval - now;
    if reset < 0.0 {
        reset = 0.0;
    }
    let w1 = format!("{}:{}", fmt_d(tokens), fmt_d(at));
    Some(Check {
        ok: true,
        remaining: tokens,
        reset,
        retry: 0.0,
        w1,
        w2: Some(reset),
    })
}

/// `rl_sliding_window`'s check; None when the state does not parse.
pub(crate) fn sliding_window(l: &Limit, now: f64, raw: Option<&[u8]>) -> Option<Check> {
    let (p, limit, cost) = (l.period, l.limit, l.cost);
    let (mut ws, mut prev, mut curr, mut same) = ((now / p).floor() * p, 0.0, 0.0, false);
    if let Some(raw) = raw {
        let [w, pv, c] = groups::<3>(raw)?;
        if w >= ws {
            (ws, prev, curr, same) = (w, pv, c, true);
        } else if w == ws - p {
            prev = c;
        }
    }
    prev = if prev > limit { limit } else { prev };
    curr = if curr > limit { limit } else { curr };
    let elapsed = if now > ws { now - ws } else { 0.0 };
    let weight = p - elapsed;
    let weighted = ((prev * weight + p - 1.0) / p).floor();
    let room = limit - curr - cost;
    if room >= 0.0 && prev * weight <= room * p {
        let reset = 2.0 * p - elapsed;
        let w1 = format!("{}:{}:{}", fmt_d(ws), fmt_d(prev), fmt_d(curr + cost));
        let w2 = (!same).then_some(reset);
        return Some(Check {
            ok: true,
            remaining: room - weighted,
            reset,
            retry: 0.0,
            w1,
            w2,
        });
    }
    let retry = if room >= 0.0 {
        p - (room * p / prev).floor() - elapsed
    } else {
        let d = p - ((limit - cost) * p / curr).floor();
        p - elapsed + if d > 0.0 { d } else { 0.0 }
    };
    let reset = if curr > 0.0 {
        2.0 * p - elapsed
    } else if prev > 0.0 {
        weight
    } else {
        0.0
    };
    let left = limit - curr - weighted;
    Some(Check::refused(
        if left > 0.0 { left } else { 0.0 },
        reset,
        retry,
    ))
}
