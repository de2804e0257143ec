//! Idempotency begin (`idem_begin.lua`): claim a key for one execution, or say why not. The
//! record is one string (`idem_record`: state, generation, token, fingerprint, lease end, payload,
//! newline-separated); a claim's generation is the fence rule's (`next_fence`). Same checks in
//! the same order; Lua's numbers and formats (`%.0f`) throughout.

use crate::lua::{fmt_f0, fmt_g14, int_in, tonumber};
use crate::reply::{Item, Out};
use crate::server::{Call, Kind};

/// A parsed record (`idem_parse`'s table).
struct Record {
    state: u8,
    gen: f64,
    token: Vec<u8>,
    fp: Vec<u8>,
    lease: f64,
    payload: Vec<u8>,
}

/// `idem_parse`: None when the layout or a number does not parse (the script's `false`).
fn parse(raw: &[u8]) -> Option<Record> {
    let mut fields: Vec<&[u8]> = Vec::with_capacity(5);
    let mut rest = raw;
    for _ in 0..5 {
        let nl = rest.iter().position(|&b| b == b'\n')?;
        fields.push(&rest[..nl]);
        rest = &rest[nl + 1..];
    }
    let (gen, lease) = (tonumber(fields[1])?, tonumber(fields[4])?);
    let state = match fields[0] {
        [s @ (b'p' | b'c' | b'f' | b'r')] => *s,
        _ => return None,
    };
    Some(Record {
        state,
        gen,
        token: fields[2].to_vec(),
        fp: fields[3].to_vec(),
        lease,
        payload: rest.to_vec(),
    })
}

/// `idem_format('p', gen, token, fp, lease, '')`.
fn claim_record(gen: f64, token: &[u8], fp: &[u8], lease: f64) -> Vec<u8> {
    let mut out = b"p\n".to_vec();
    out.extend_from_slice(&fmt_f0(gen));
    for part in [token, fp] {
        out.push(b'\n');
        out.extend_from_slice(part);
    }
    out.push(b'\n');
    out.extend_from_slice(&fmt_f0(lease));
    out.push(b'\n');
    out
}

fn int_arg(value: &[u8], name: &str, hi: f64) -> Result<f64, Out> {
    int_in(tonumber(value), 1.0, hi)
        .ok_or_else(|| Out::bad(&format!("{name} must be an integer in 1..{}", fmt_g14(hi))))
}

/// `RATOMIC.IDEM_BEGIN record token fingerprint ttl_ms result_ttl_ms`.
pub fn begin(call: &Call) -> Out {
    if call.len() != 5 {
        return Out::WrongArity;
    }
    match decide(call) {
        Ok(out) | Err(out) => out,
    }
}

fn decide(call: &Call) -> Result<Out, Out> {
    let (token, fp) = (call.arg(1), call.arg(2));
    if token.is_empty() || token.contains(&b'\n') {
        return Err(Out::bad("token must be non-empty without newlines"));
    }
    if fp.is_empty() || fp.contains(&b'\n') {
        return Err(Out::bad("fingerprint must be non-empty without newlines"));
    }
    let lease = int_arg(call.arg(3), "ttl_ms", 86_400_000.0)?;
    let ttl = int_arg(call.arg(4), "result_ttl_ms", 2_592_000_000.0)?;
    let key = call.key(0);
    let rec = match (key.kind(), key.value()) {
        (Kind::Other, _) => return Err(Out::wrongtype()),
        (_, None) => None,
        (_, Some(raw)) => Some(parse(raw).ok_or_else(|| {
            Out::err("WRONGTYPE redis-atomic: key does not hold an idempotency record")
        })?),
    };
    drop(key);
    let now = (call.now_us() / 1000.0).floor();
    // math.max(ttl, lease)
    let px = if lease > ttl { lease } else { ttl };
    if let Some(rec) = &rec {
        if rec.fp != fp {
            return Ok(Out::Array(vec![Item::Bulk(b"mismatch".to_vec())]));
        }
        let replay = |word: &[u8]| {
            Out::Array(vec![
                Item::Bulk(b"replay".to_vec()),
                Item::Bulk(word.to_vec()),
                Item::Bulk(rec.payload.clone()),
            ])
        };
        match rec.state {
            b'c' => return Ok(replay(b"completed")),
            b'f' => return Ok(replay(b"failed")),
            b'p' if rec.token == token => {
                write(call, &claim_record(rec.gen, token, fp, now + lease), px);
                return Ok(claimed(Item::Int(crate::lua::to_ll(rec.gen)), lease, 0.0));
            }
            b'p' if rec.lease > now => return Ok(Out::status("in_progress", &[rec.lease - now])),
            _ => {}
        }
    }
    // next_fence(rec and rec.gen or 0, now_us()): max(last + 1, now), formatted %.0f.
    let last = rec.as_ref().map_or(0.0, |r| r.gen);
    let us = call.now_us();
    let gen = fmt_f0(if us > last + 1.0 { us } else { last + 1.0 });
    let gen_value = tonumber(&gen).unwrap_or(f64::NAN);
    write(call, &claim_record(gen_value, token, fp, now + lease), px);
    let takeover = if rec.is_some_and(|r| r.state == b'p') {
        1.0
    } else {
        0.0
    };
    Ok(claimed(Item::Bulk(gen), lease, takeover))
}

/// `SET record value PX px`: the value and expiry replaced.
fn write(call: &Call, value: &[u8], px: f64) {
    let mut key = call.key_mut(0);
    key.delete();
    key.write(value);
    let at = key.expire_in(px as i64);
    call.replicate_set(0, value, Some(at));
}

fn claimed(gen: Item, lease: f64, takeover: f64) -> Out {
    Out::Array(vec![
        Item::Bulk(b"claimed".to_vec()),
        gen,
        Item::Int(crate::lua::to_ll(lease)),
        Item::Int(crate::lua::to_ll(takeover)),
    ])
}
