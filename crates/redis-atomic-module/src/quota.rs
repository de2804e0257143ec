//! Quota add (`quota_add.lua`, `quota_add_id.lua`: `quota_args`, `quota_apply`, the request
//! record): a counter kept within [min, max], refused or clamped, its TTL set once when it is
//! created; with a request id, the first answer recorded and returned to a repeat. Lua's numbers
//! throughout (the bounds are 53-bit integers, exact as doubles).

use crate::lua::{fmt_f0, fmt_g14, int_in, string2ll, tonumber};
use crate::reply::Out;
use crate::server::{Call, Kind};

/// 2^53 - 1: the largest integer every client's number type holds exactly.
const LIMIT: f64 = 9_007_199_254_740_991.0;

/// `quota_args`' out-locals.
struct Args {
    delta: f64,
    lo: f64,
    hi: f64,
    refuse: bool,
    ttl: f64,
}

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

/// `quota_args`: ARGV[1..5] = delta min max mode ttl_ms, in order, from argument `at` (after the
/// command's keys).
fn args(call: &Call, at: usize) -> Result<Args, Out> {
    let delta = int_arg(call.arg(at), "delta", -LIMIT, LIMIT)?;
    let lo = int_arg(call.arg(at + 1), "min", -LIMIT, LIMIT)?;
    let hi = int_arg(call.arg(at + 2), "max", lo, LIMIT)?;
    let refuse = match call.arg(at + 3) {
        b"refuse" => true,
        b"clamp" => false,
        _ => return Err(Out::bad("mode must be refuse or clamp")),
    };
    let ttl = int_arg(call.arg(at + 4), "ttl_ms", 0.0, 31_622_400_000.0)?;
    Ok(Args {
        delta,
        lo,
        hi,
        refuse,
        ttl,
    })
}

/// `quota_apply` on the counter (key 0): (applied, the counter after the call).
fn apply(call: &Call, a: &Args) -> Result<(bool, f64), Out> {
    let key = call.key(0);
    let (raw, stored) = match (key.kind(), key.value()) {
        (Kind::Other, _) => return Err(Out::wrongtype()),
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
            _ => {
                return Err(Out::err(
                    "WRONGTYPE redis-atomic: counter does not hold a 53-bit integer",
                ))
            }
        }
    }
    let mut target = value + a.delta;
    if target < a.lo || target > a.hi {
        if a.refuse {
            return Ok((false, value));
        }
        // math.min(math.max(target, lo), hi): Lua keeps the first argument unless another beats it.
        let floor = if a.lo > target { a.lo } else { target };
        target = if a.hi < floor { a.hi } else { floor };
    }
    // INCRBY key '%.0f'(target - value): the stored value and the increment must both be what
    // INCRBY parses, as in the script (else the error it raises).
    let incr = string2ll(&fmt_f0(target - value));
    let old = raw.as_deref().map_or(Some(0), string2ll);
    let (Some(incr), Some(old)) = (incr, old) else {
        return Err(Out::err("ERR value is not an integer or out of range"));
    };
    let Some(new) = old.checked_add(incr) else {
        return Err(Out::err("ERR increment or decrement would overflow"));
    };
    let text = new.to_string();
    let mut key = call.key_mut(0);
    key.write(text.as_bytes());
    // PEXPIRE … NX only where the counter has no TTL (the first write).
    let at = (a.ttl > 0.0 && !stored).then(|| key.expire_in(a.ttl as i64));
    call.replicate_set(0, text.as_bytes(), at);
    Ok((true, target))
}

fn answer(applied: bool, value: f64) -> Out {
    Out::status(if applied { "applied" } else { "refused" }, &[value])
}

/// `RATOMIC.QUOTA_ADD counter delta min max mode ttl_ms`.
pub fn add(call: &Call) -> Out {
    if call.len() != 6 {
        return Out::WrongArity;
    }
    match args(call, 1).and_then(|a| apply(call, &a)) {
        Ok((applied, value)) => answer(applied, value),
        Err(out) => out,
    }
}

/// `RATOMIC.QUOTA_ADD_ID counter request delta min max mode ttl_ms request_ttl_ms`.
pub fn add_id(call: &Call) -> Out {
    if call.len() != 8 {
        return Out::WrongArity;
    }
    match add_id_inner(call) {
        Ok(out) | Err(out) => out,
    }
}

fn add_id_inner(call: &Call) -> Result<Out, Out> {
    let a = args(call, 2)?;
    let request_ttl = int_arg(call.arg(7), "request_ttl_ms", 1000.0, 86_400_000.0)?;
    let request = call.key(1);
    let recorded = match (request.kind(), request.value()) {
        (Kind::Other, _) => return Err(Out::wrongtype()),
        (_, v) => v.map(<[u8]>::to_vec),
    };
    drop(request);
    if let Some(rec) = recorded {
        // '^([ar]):(-?%d+)$'
        let was = match rec.split_first() {
            Some((&w @ (b'a' | b'r'), rest)) => rest.strip_prefix(b":").map(|n| (w, n)),
            _ => None,
        };
        let Some((word, n)) = was.filter(|(_, n)| {
            let digits = n.strip_prefix(b"-").unwrap_or(n);
            crate::lua::digits(digits)
        }) else {
            return Err(Out::err(
                "WRONGTYPE redis-atomic: request record is not a quota answer",
            ));
        };
        return Ok(answer(word == b'a', tonumber(n).unwrap_or(f64::NAN)));
    }
    let (applied, value) = apply(call, &a)?;
    // SET request '<a|r>:<value>' PX request_ttl (replacing whatever was there).
    let mut text = if applied {
        b"a:".to_vec()
    } else {
        b"r:".to_vec()
    };
    text.extend_from_slice(&fmt_f0(value));
    let mut key = call.key_mut(1);
    key.delete();
    key.write(&text);
    let at = key.expire_in(request_ttl as i64);
    call.replicate_set(1, &text, Some(at));
    Ok(answer(applied, value))
}
