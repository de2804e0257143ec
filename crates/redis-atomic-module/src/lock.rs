//! Locks (`lock_acquire.lua`, `lock_release.lua`, `lock_extend.lua`): the value
//! `"<fence>:<token>"` (`lock_value`), the fence counter (`next_fence`: max(last + 1, server µs),
//! formatted `%.0f`), the same checks in the same order. Each step opens its key on its own, as
//! each `redis.call` does, so a lock and fence given as one key behave as in the script.

use crate::lua::{fmt_f0, int_in, plain_positive, tonumber};
use crate::reply::{Item, Out};
use crate::server::{Call, Kind, OpenKey};

/// The fence counter's life (`SET fence … PX 1209600000`: 14 days).
const FENCE_MS: i64 = 1_209_600_000;

/// `last_fence`: the fence counter's value (0 when absent).
fn last_fence(key: &OpenKey<'_>) -> Result<f64, Out> {
    if key.kind() == Kind::Other {
        return Err(Out::wrongtype());
    }
    match key.value() {
        None => Ok(0.0),
        Some(raw) => tonumber(raw)
            .ok_or_else(|| Out::err("WRONGTYPE redis-atomic: fence key does not hold an integer")),
    }
}

/// `lock_value`'s split at the first ':' (None when there is none).
fn split(value: &[u8]) -> Option<(&[u8], &[u8])> {
    let sep = value.iter().position(|&b| b == b':')?;
    Some((&value[..sep], &value[sep + 1..]))
}

/// `RATOMIC.LOCK_ACQUIRE lock fence token ttl_ms`.
pub fn acquire(call: &Call) -> Out {
    if call.len() != 4 {
        return Out::WrongArity;
    }
    let (token, ttl_text) = (call.arg(2), call.arg(3));
    let ttl = if plain_positive(ttl_text) {
        tonumber(ttl_text)
    } else {
        None
    };
    if token.is_empty() {
        return Out::bad("token must not be empty");
    }
    let Some(ttl) = ttl.filter(|&t| t <= 604_800_000.0) else {
        return Out::bad("ttl_ms must be an integer in 1..604800000");
    };
    // Distinct keys: the fence opened once, for its read and its write; one key: opened per step.
    let mut fence_key = (call.arg(0) != call.arg(1)).then(|| call.key_mut(1));
    let last = match &fence_key {
        Some(key) => last_fence(key),
        None => last_fence(&call.key(1)),
    };
    let last = match last {
        Ok(last) => last,
        Err(out) => return out,
    };
    let now = call.now_us();
    // math.max(last + 1, now): the first argument unless the second is greater.
    let fence = fmt_f0(if now > last + 1.0 { now } else { last + 1.0 });
    let ms = ttl as i64;
    // One open of the lock for its check and write (touched only when written); closed before
    // the fence is written.
    let mut lock = call.key_mut(0);
    if lock.kind() == Kind::Empty {
        let mut value = fence.clone();
        value.push(b':');
        value.extend_from_slice(token);
        lock.write(&value);
        let at = lock.expire_in(ms);
        call.replicate_set(0, &value, Some(at));
        drop(lock);
        let mut counter = fence_key.take().unwrap_or_else(|| call.key_mut(1));
        if counter.kind() == Kind::Other {
            counter.delete(); // SET replaces whatever was there (a string is rewritten in place)
        }
        counter.write(&fence);
        let at = counter.expire_in(FENCE_MS);
        call.replicate_set(1, &fence, Some(at));
        return acquired(fence, ttl);
    }
    if lock.kind() == Kind::Other {
        return Out::wrongtype();
    }
    let held = lock
        .value()
        .and_then(split)
        .filter(|(_, t)| *t == token)
        .map(|(f, _)| f.to_vec());
    if let Some(own) = held {
        let at = lock.expire_in(ms);
        call.replicate_pexpireat(0, at);
        return acquired(own, ttl);
    }
    Out::status("held", &[lock.pttl().max(0) as f64])
}

fn acquired(fence: Vec<u8>, ttl: f64) -> Out {
    Out::Array(vec![
        Item::Bulk(b"acquired".to_vec()),
        Item::Bulk(fence),
        Item::Int(crate::lua::to_ll(ttl)),
    ])
}

/// `RATOMIC.LOCK_RELEASE lock token fence`.
pub fn release(call: &Call) -> Out {
    if call.len() != 3 {
        return Out::WrongArity;
    }
    let (token, fence) = (call.arg(1), call.arg(2));
    let lock = call.key(0);
    if lock.kind() == Kind::Other {
        return Out::wrongtype();
    }
    let Some(current) = lock.value() else {
        return lost();
    };
    let mine = if fence.is_empty() {
        split(current)
            .filter(|(_, t)| *t == token)
            .map(|(f, _)| f.to_vec())
    } else {
        let expected = [fence, b":", token].concat();
        (current == expected.as_slice()).then(|| fence.to_vec())
    };
    let Some(fence) = mine else {
        return lost();
    };
    drop(lock);
    call.key_mut(0).delete();
    call.replicate_del(0);
    Out::Array(vec![Item::Bulk(b"released".to_vec()), Item::Bulk(fence)])
}

fn lost() -> Out {
    Out::Array(vec![Item::Bulk(b"lost".to_vec())])
}

/// `RATOMIC.LOCK_EXTEND lock token fence ttl_ms`.
pub fn extend(call: &Call) -> Out {
    if call.len() != 4 {
        return Out::WrongArity;
    }
    let (token, fence) = (call.arg(1), call.arg(2));
    let Some(ttl) = int_in(tonumber(call.arg(3)), 1.0, 604_800_000.0) else {
        return Out::bad("ttl_ms must be an integer in 1..604800000");
    };
    if token.is_empty() || !crate::lua::digits(fence) {
        return Out::bad("token must not be empty and fence must be decimal digits");
    }
    let lock = call.key(0);
    if lock.kind() == Kind::Other {
        return Out::wrongtype();
    }
    let expected = [fence, b":", token].concat();
    if lock.value() != Some(expected.as_slice()) {
        return lost();
    }
    drop(lock);
    let at = call.key_mut(0).expire_in(ttl as i64);
    call.replicate_pexpireat(0, at);
    Out::Array(vec![
        Item::Bulk(b"extended".to_vec()),
        Item::Bulk(fence.to_vec()),
        Item::Int(crate::lua::to_ll(ttl)),
    ])
}
