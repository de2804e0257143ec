//! Semaphore acquire and release (`sem_acquire.lua`, `sem_release.lua`): a sorted set of holders
//! scored by lease end (server µs) and a hash of their fences. A transliteration: the script's
//! `redis.call`s in the same order with the same arguments ([`crate::command`]), its checks and
//! numbers in between — sorted sets and hashes through the server's own commands leave no doubt
//! that the state is the script's.

use crate::command::Reply;
use crate::lua::{fmt_f0, fmt_g14, int_in, tonumber};
use crate::reply::{Item, Out};
use crate::server::Call;

type Step<T> = Result<T, Out>;

/// `redis.call`: an error reply is the error the script raises.
fn run(call: &Call, cmd: &std::ffi::CStr, args: &[&[u8]]) -> Step<Reply> {
    call.run(cmd, args).map_err(Out::Error)
}

/// A Lua number handed to `redis.call` (an integer here: its digits).
fn num(n: f64) -> Vec<u8> {
    crate::lua::fmt_d(n).into_bytes()
}

fn int_arg(value: &[u8], name: &str, hi: f64) -> Step<f64> {
    int_in(tonumber(value), 1.0, hi)
        .ok_or_else(|| Out::bad(&format!("{name} must be an integer in 1..{}", fmt_g14(hi))))
}

fn lost() -> Out {
    Out::Array(vec![Item::Bulk(b"lost".to_vec())])
}

/// `RATOMIC.SEM_RELEASE permits holders holder fence`.
pub fn release(call: &Call) -> Out {
    if call.len() != 4 {
        return Out::WrongArity;
    }
    match release_steps(call) {
        Ok(out) | Err(out) => out,
    }
}

fn release_steps(call: &Call) -> Step<Out> {
    let (permits, holders, holder, fence) = (call.arg(0), call.arg(1), call.arg(2), call.arg(3));
    let held = run(call, c"HGET", &[holders, holder])?;
    if held.bytes() != Some(fence) {
        return Ok(lost());
    }
    let ends = run(call, c"ZSCORE", &[permits, holder])?;
    let ends = ends.bytes().and_then(tonumber);
    run(call, c"ZREM", &[permits, holder])?;
    run(call, c"HDEL", &[holders, holder])?;
    match ends {
        Some(ends) if ends > call.now_us() => Ok(Out::Array(vec![
            Item::Bulk(b"released".to_vec()),
            Item::Bulk(fence.to_vec()),
        ])),
        _ => Ok(lost()),
    }
}

/// `RATOMIC.SEM_ACQUIRE permits holders fence holder capacity ttl_ms`.
pub fn acquire(call: &Call) -> Out {
    if call.len() != 6 {
        return Out::WrongArity;
    }
    match acquire_steps(call) {
        Ok(out) | Err(out) => out,
    }
}

fn acquire_steps(call: &Call) -> Step<Out> {
    let (permits, holders, holder) = (call.arg(0), call.arg(1), call.arg(3));
    if holder.is_empty() {
        return Err(Out::bad("holder must not be empty"));
    }
    let capacity = int_arg(call.arg(4), "capacity", 100_000.0)?;
    let ttl = int_arg(call.arg(5), "ttl_ms", 604_800_000.0)?;
    let now = call.now_us();
    let (now_s, ttl_s, until) = (num(now), num(ttl), num(now + ttl * 1000.0));
    let expired = run(
        call,
        c"ZRANGEBYSCORE",
        &[permits, b"-inf", &now_s, b"LIMIT", b"0", b"64"],
    )?;
    if let Reply::Array(items) = &expired {
        for member in items.iter().filter_map(Reply::bytes) {
            run(call, c"ZREM", &[permits, member])?;
            run(call, c"HDEL", &[holders, member])?;
        }
    }
    let keep_alive = || -> Step<()> {
        for key in [permits, holders] {
            run(call, c"PEXPIRE", &[key, &ttl_s, b"NX"])?;
            run(call, c"PEXPIRE", &[key, &ttl_s, b"GT"])?;
        }
        Ok(())
    };
    let mine = run(call, c"ZSCORE", &[permits, holder])?
        .bytes()
        .and_then(tonumber);
    let fence = run(call, c"HGET", &[holders, holder])?;
    if let (Some(mine), Some(fence)) = (mine, fence.bytes()) {
        if mine > now {
            run(call, c"ZADD", &[permits, &until, holder])?;
            keep_alive()?;
            return Ok(acquired(fence.to_vec(), ttl));
        }
    }
    let mut after = b"(".to_vec();
    after.extend_from_slice(&fmt_f0(now));
    if let Reply::Int(live) = run(call, c"ZCOUNT", &[permits, &after, b"+inf"])? {
        if live as f64 >= capacity {
            let first = run(
                call,
                c"ZRANGEBYSCORE",
                &[
                    permits,
                    &after,
                    b"+inf",
                    b"WITHSCORES",
                    b"LIMIT",
                    b"0",
                    b"1",
                ],
            )?;
            let score = match &first {
                Reply::Array(items) => items.get(1).and_then(Reply::bytes).and_then(tonumber),
                _ => None,
            };
            let wait = ((score.unwrap_or(f64::NAN) - now) / 1000.0).ceil();
            return Ok(Out::status("full", &[wait]));
        }
    }
    let fence = issue_fence(call, now, ttl + 604_800_000.0)?;
    run(call, c"ZADD", &[permits, &until, holder])?;
    run(call, c"HSET", &[holders, holder, &fence])?;
    keep_alive()?;
    Ok(acquired(fence, ttl))
}

/// `issue_fence(KEYS[3], now, keep_ms)`: the next fence, stored for keep_ms.
fn issue_fence(call: &Call, now: f64, keep_ms: f64) -> Step<Vec<u8>> {
    let key = call.arg(2);
    let last = match run(call, c"GET", &[key])? {
        Reply::Bytes(raw) => tonumber(&raw).ok_or_else(|| {
            Out::err("WRONGTYPE redis-atomic: fence key does not hold an integer")
        })?,
        _ => 0.0,
    };
    let fence = fmt_f0(if now > last + 1.0 { now } else { last + 1.0 });
    run(call, c"SET", &[key, &fence, b"PX", &num(keep_ms)])?;
    Ok(fence)
}

fn acquired(fence: Vec<u8>, ttl: f64) -> Out {
    Out::Array(vec![
        Item::Bulk(b"acquired".to_vec()),
        Item::Bulk(fence),
        Item::Int(crate::lua::to_ll(ttl)),
    ])
}
