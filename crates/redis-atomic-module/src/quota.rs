//! Quota add without a request id (`quota_add.lua`: `quota_args`, `quota_apply`): a counter kept
//! within [min, max], refused or clamped, its TTL set once when it is created. Lua's numbers
//! throughout (the bounds are 53-bit integers, exact as doubles).

use crate::lua::{fmt_f0, fmt_g14, int_in, string2ll, tonumber};
use crate::reply::Out;
use crate::server::{Call, Kind};

/// 2^53 - 1: the largest integer every client's number type holds exactly.
const LIMIT: f64 = 9_007_199_254_740_991.0;

/// `int_arg(value, name, lo, hi)` with the script's message (bounds formatted as Lua prints them).
fn int_arg(value: &[u8], name: &str, lo: f64, hi: f64) -> Result<f64, Out> {
    int_in(tonumber(value), lo, hi).ok_or_else(|| {
        Out::bad(&format!(
            "{name} must be an integer in {}..{}",
            fmt_g14(lo),
            fmt_g14(hi)
        ))
    })
}

/// `RATOMIC.QUOTA_ADD counter delta min max mode ttl_ms`.
pub fn add(call: &Call) -> Out {
    if call.len() != 6 {
        return Out::WrongArity;
    }
    let parsed = (|| {
        let delta = int_arg(call.arg(1), "delta", -LIMIT, LIMIT)?;
        let lo = int_arg(call.arg(2), "min", -LIMIT, LIMIT)?;
        let hi = int_arg(call.arg(3), "max", lo, LIMIT)?;
        let refuse = match call.arg(4) {
            b"refuse" => true,
            b"clamp" => false,
            _ => return Err(Out::bad("mode must be refuse or clamp")),
        };
        let ttl = int_arg(call.arg(5), "ttl_ms", 0.0, 31_622_400_000.0)?;
        Ok((delta, lo, hi, refuse, ttl))
    })();
    let (delta, lo, hi, refuse, ttl) = match parsed {
        Ok(p) => p,
        Err(out) => return out,
    };
    let key = call.key(0);
    let (raw, stored) = match (key.kind(), key.value()) {
        (Kind::Other, _) => return Out::wrongtype(),
        (_, Some(v)) => (Some(v.to_vec()), key.pttl() >= 0),
        _ => (None, false),
    };
    drop(key);
    let mut value = 0.0;
    if let Some(raw) = &raw {
        // tonumber(string.match(raw, '^-?%d+$'))
        let body = raw.strip_prefix(b"-").unwrap_or(raw);
        let parsed = (!body.is_empty() && body.iter().all(u8::is_ascii_digit))
            .then(|| tonumber(raw))
            .flatten();
        match parsed {
            Some(v) if v.abs() <= LIMIT => value = v,
            _ => return Out::err("WRONGTYPE redis-atomic: counter does not hold a 53-bit integer"),
        }
    }
    let mut target = value + delta;
    let mut applied = true;
    if target < lo || target > hi {
        applied = !refuse;
        // math.min(math.max(target, lo), hi): Lua keeps the first argument unless another beats it.
        let floor = if lo > target { lo } else { target };
        target = if hi < floor { hi } else { floor };
    }
    if !applied {
        return Out::status("refused", &[value]);
    }
    // INCRBY key '%.0f'(target - value): the stored value and the increment must both be what
    // INCRBY parses, as in the script (else the error it raises).
    let incr = string2ll(&fmt_f0(target - value));
    let old = match &raw {
        Some(raw) => string2ll(raw),
        None => Some(0),
    };
    let (Some(incr), Some(old)) = (incr, old) else {
        return Out::err("ERR value is not an integer or out of range");
    };
    let Some(new) = old.checked_add(incr) else {
        return Out::err("ERR increment or decrement would overflow");
    };
    let text = new.to_string();
    let mut key = call.key_mut(0);
    key.write(text.as_bytes());
    // PEXPIRE … NX only where the counter has no TTL (the first write).
    let at = (ttl > 0.0 && !stored).then(|| key.expire_in(ttl as i64));
    call.replicate_set(0, text.as_bytes(), at);
    Out::status("applied", &[target])
}
