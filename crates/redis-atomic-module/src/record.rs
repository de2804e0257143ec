//! A policy's request record (`rl_replay`, `rl_record`): with a request id, an admitted
//! decision is kept under the request key and a repeat within its life gets it back.
//! Record: `"<expires_at>|<remaining>|<reset_at>|<remaining_1>,<reset_at_1>|..."`. A malformed or
//! expired record is ignored (decided afresh), exactly where the script ignores it.

use crate::lua::{fmt_d, to_ll, tonumber};
use crate::reply::{Item, Out};
use crate::server::{Call, Kind};

/// Lua's `math.max(0, x)` (NaN gives 0, as Lua keeps the first argument then).
fn at_least_0(x: f64) -> f64 {
    if x > 0.0 {
        x
    } else {
        0.0
    }
}

/// `'^(%d+),(%d+)$'`.
fn pair(field: &[u8]) -> Option<(&[u8], &[u8])> {
    let comma = field.iter().position(|&b| b == b',')?;
    let (r, t) = (&field[..comma], &field[comma + 1..]);
    let digits = |s: &[u8]| !s.is_empty() && s.iter().all(u8::is_ascii_digit);
    (digits(r) && digits(t)).then_some((r, t))
}

/// `rl_replay`: the recorded decision while it lives, else None (decide afresh).
pub fn replay(call: &Call, now: f64) -> Result<Option<Out>, Out> {
    let key = call.key(0);
    if key.kind() == Kind::Other {
        return Err(Out::wrongtype());
    }
    let Some(raw) = key.value() else {
        return Ok(None);
    };
    // string.gmatch(raw, '[^|]+'): the non-empty runs between bars.
    let fields: Vec<&[u8]> = raw
        .split(|&b| b == b'|')
        .filter(|f| !f.is_empty())
        .collect();
    let live = fields
        .first()
        .and_then(|f| tonumber(f))
        .is_some_and(|exp| exp > now);
    if !live || fields.len() < 4 {
        return Ok(None);
    }
    let remaining = tonumber(fields[1]);
    let Some(reset_at) = tonumber(fields[2]) else {
        // The script's arithmetic on nil raises an error here.
        return Err(Out::err(
            "ERR redis-atomic module: the request record's reset is not a number",
        ));
    };
    let mut numbers = vec![at_least_0(reset_at - now), (fields.len() - 3) as f64];
    for field in &fields[3..] {
        let Some((r, t)) = pair(field) else {
            return Ok(None);
        };
        let (r, t) = (tonumber(r), tonumber(t));
        numbers.extend([
            r.unwrap_or(f64::NAN),
            at_least_0(t.unwrap_or(f64::NAN) - now),
            0.0,
        ]);
    }
    let mut items = vec![Item::Bulk(b"replayed".to_vec())];
    // A Lua table ends at its first nil: a remaining that is not a number ends the reply.
    if let Some(remaining) = remaining {
        items.push(Item::Int(to_ll(remaining)));
        items.extend(numbers.into_iter().map(|n| Item::Int(to_ll(n))));
    }
    Ok(Some(Out::Array(items)))
}

/// `rl_record`: `SET request <record> PX ceil(request_ttl / 1000) + 1000` (replacing whatever
/// the key holds, as `SET` does).
pub fn write(
    call: &Call,
    now: f64,
    request_ttl: f64,
    remaining: f64,
    reset: f64,
    statuses: &[f64],
) {
    let mut record = format!(
        "{}|{}|{}",
        fmt_d(now + request_ttl),
        fmt_d(remaining),
        fmt_d(now + reset)
    );
    for pair in statuses.chunks_exact(2) {
        record.push_str(&format!("|{},{}", fmt_d(pair[0]), fmt_d(now + pair[1])));
    }
    let ms = to_ll(((request_ttl + 999.0) / 1000.0).floor() + 1000.0);
    let mut key = call.key_mut(0);
    key.delete();
    key.write(record.as_bytes());
    let at = key.expire_in(ms);
    call.replicate_set(0, record.as_bytes(), Some(at));
}
