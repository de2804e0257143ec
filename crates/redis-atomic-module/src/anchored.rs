//! The anchored window (`rl_anchored_window.lua`): a plain counter whose expiry is the window.
//! The script charges first (`INCRBY`) and takes a refused or invalid charge back (`DECRBY`,
//! `DEL`); the native decides first and writes only what that sequence leaves behind: the new
//! count when admitted, the window's expiry when the counter had none (also on a refusal, as the
//! script's `PEXPIRE … NX` before its `DECRBY`), and the deletion of a counter found at 0 when
//! `period_ms` is bad. Replicated as those effects (`SET … KEEPTTL`/`PXAT`, `PEXPIREAT`, `DEL`).
//! A policy's anchored-window limit is another fragment (read, then charge): [`policy_check`].

use crate::lua::{fmt_d, int_in, plain_positive, string2ll, tonumber};
use crate::reply::Out;
use crate::rl::{not_state, Check, Limit};
use crate::server::{Call, Kind};

/// `RATOMIC.RL_ANCHORED_WINDOW key cost limit period_ms`.
pub fn decide(call: &Call) -> Out {
    if call.len() != 4 {
        return Out::WrongArity;
    }
    let (cost, ms) = (call.arg(1), call.arg(3));
    let n = if cost == b"1" {
        Some(1.0)
    } else if plain_positive(cost) {
        tonumber(cost)
    } else {
        None
    };
    let Some(limit) = int_in(tonumber(call.arg(2)), 1.0, 1e9) else {
        return Out::bad("limit must be an integer in 1..1000000000");
    };
    let n = match n {
        Some(n) if n <= limit => n,
        _ => return Out::bad("cost must be an integer in 1..limit"),
    };
    // One open for the whole decision (signalled modified only when written).
    let mut key = call.key_mut(0);
    // INCRBY's failures (another type, not an integer, overflow) are the script's WRONGTYPE.
    let old = match (key.kind(), key.value()) {
        (Kind::Empty, _) => Some(0),
        (Kind::String, Some(v)) => string2ll(v),
        _ => None,
    };
    let Some(count) = old.and_then(|old| old.checked_add(n as i64)) else {
        return not_state(call.arg(0));
    };
    let present = key.kind() == Kind::String;
    let pttl = key.pttl();
    let counted = count as f64;
    let first = counted == n;
    let mut ttl = if first { -1.0 } else { pttl as f64 };
    let mut open = None; // the window's ms, when PEXPIRE NX applies
    if ttl < 0.0 {
        let period = if plain_positive(ms) {
            tonumber(ms)
        } else {
            None
        };
        let Some(period) = period.filter(|&p| p <= 31_622_400_000.0) else {
            if first && present {
                key.delete(); // INCRBY then DEL: a counter found at 0 is gone
                call.replicate_del(0);
            }
            return Out::bad("period_ms must be an integer in 1..31622400000");
        };
        if pttl < 0 {
            open = Some(period as i64);
        }
        ttl = period;
    } else if ttl == 0.0 {
        ttl = 1.0;
    }
    if counted > limit {
        if let Some(ms) = open {
            let at = key.expire_in(ms);
            call.replicate_pexpireat(0, at);
        }
        return Out::status(
            "limited",
            &[ttl * 1000.0, ttl * 1000.0, limit - counted + n],
        );
    }
    let value = count.to_string();
    key.write(value.as_bytes());
    let at = open.map(|ms| key.expire_in(ms));
    call.replicate_set(0, value.as_bytes(), at);
    Out::status("allowed", &[limit - counted, ttl * 1000.0])
}

/// A policy's anchored-window check (`rl_policy`'s `rl_anchored_window` fragment, not this
/// file's script: it reads first, `GET` then `PTTL`, and charges only when admitted). `w1` the new
/// count, `w2` the new window's ms, or None when the key keeps its expiry.
pub(crate) fn policy_check(call: &Call, index: usize, l: &Limit) -> Result<Check, Out> {
    let key = call.key(index);
    if key.kind() == Kind::Other {
        return Err(Out::wrongtype());
    }
    let ms = ((l.period + 999.0) / 1000.0).floor();
    let (mut count, mut reset, mut w2) = (0.0, ms * 1000.0, Some(ms));
    if let Some(raw) = key.value() {
        let Some(n) = int_in(tonumber(raw), 0.0, f64::INFINITY) else {
            return Err(not_state(call.arg(index)));
        };
        count = n;
        let ttl = key.pttl() as f64;
        if ttl >= 0.0 {
            (reset, w2) = (if ttl > 1.0 { ttl } else { 1.0 } * 1000.0, None);
        }
    }
    if count + l.cost > l.limit {
        let remaining = if l.limit > count {
            l.limit - count
        } else {
            0.0
        };
        return Ok(Check::refused(remaining, reset, reset));
    }
    count += l.cost;
    Ok(Check {
        ok: true,
        remaining: l.limit - count,
        reset,
        retry: 0.0,
        w1: fmt_d(count),
        w2,
    })
}

/// A policy's anchored-window write (`rl_anchored_write`): `SET key w1 PX w2`, or `KEEPTTL`.
pub(crate) fn policy_write(call: &Call, index: usize, c: &Check) {
    let mut key = call.key_mut(index);
    key.write(c.w1.as_bytes());
    let at = c.w2.map(|ms| key.expire_in(crate::lua::to_ll(ms)));
    call.replicate_set(index, c.w1.as_bytes(), at);
}
