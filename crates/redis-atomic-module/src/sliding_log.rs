//! The sliding log (`rl_sliding_log.lua`: `rl_args`, `rl_clock`, its check and write fragments):
//! a sorted set with one member per admitted unit, scored by its server time. The script's
//! `redis.call`s transliterated ([`crate::command`]); only `ZADD`'s batching differs (at most
//! three members per call here, 500 in the script), which leaves the same set. The check and the
//! write are also [`crate::policy`]'s for a sliding-log limit of a policy.

use crate::command::Reply;
use crate::lua::{fmt_d, tonumber};
use crate::reply::Out;
use crate::rl::{args, clock, Algo, Check, Limit};
use crate::server::Call;

type Step<T> = Result<T, Out>;

fn run(call: &Call, cmd: &std::ffi::CStr, a: &[&[u8]]) -> Step<Reply> {
    call.run(cmd, a).map_err(Out::Error)
}

/// The score of a `ZRANGE … WITHSCORES` reply's only member.
fn score(reply: &Reply) -> f64 {
    match reply {
        Reply::Array(items) => items.get(1).and_then(Reply::bytes).and_then(tonumber),
        _ => None,
    }
    .unwrap_or(f64::NAN)
}

/// `RATOMIC.RL_SLIDING_LOG key cost limit period_us burst test_now_us` (arity checked by
/// [`crate::rl::decide`]).
pub fn decide(call: &Call) -> Out {
    match steps(call) {
        Ok(out) | Err(out) => out,
    }
}

fn steps(call: &Call) -> Step<Out> {
    let l = args(
        Algo::SlidingLog,
        call.arg(1),
        call.arg(2),
        call.arg(3),
        call.arg(4),
    )?;
    let now = clock(call, call.arg(5))?;
    let key = call.arg(0);
    let c = check(call, key, &l, now)?;
    if !c.ok {
        return Ok(Out::status("limited", &[c.retry, c.reset, c.remaining]));
    }
    write(call, key, &l, now, c.w2.unwrap_or(0.0))?;
    Ok(Out::status("allowed", &[c.remaining, c.reset]))
}

/// The check fragment (`rl_sliding_log`): trims what expired, then decides; when admitted,
/// `w2` is the live count the write numbers its members from.
pub(crate) fn check(call: &Call, key: &[u8], l: &Limit, now: f64) -> Step<Check> {
    let card = |r: Reply| if let Reply::Int(n) = r { n as f64 } else { 0.0 };
    let mut live = card(run(call, c"ZCARD", &[key])?);
    if live > 0.0 {
        let before = fmt_d(now - l.period);
        live -= card(run(
            call,
            c"ZREMRANGEBYSCORE",
            &[key, b"-inf", before.as_bytes()],
        )?);
    }
    if live + l.cost > l.limit {
        let rank = fmt_d(live + l.cost - l.limit - 1.0);
        let nth = run(
            call,
            c"ZRANGE",
            &[key, rank.as_bytes(), rank.as_bytes(), b"WITHSCORES"],
        )?;
        let newest = run(call, c"ZRANGE", &[key, b"-1", b"-1", b"WITHSCORES"])?;
        let left = score(&newest) + l.period - now;
        let remaining = if l.limit > live { l.limit - live } else { 0.0 };
        let reset = if left > 0.0 { left } else { 0.0 };
        let retry = score(&nth) + l.period - now;
        return Ok(Check::refused(remaining, reset, retry));
    }
    Ok(Check {
        ok: true,
        remaining: l.limit - live - l.cost,
        reset: l.period,
        retry: 0.0,
        w1: String::new(),
        w2: Some(live),
    })
}

/// The write fragment (`rl_sliding_log_write`): members `"<now>:<n>"` numbered after the `live`
/// count, then the set's expiry (NX when it was empty, GT otherwise).
pub(crate) fn write(call: &Call, key: &[u8], l: &Limit, now: f64, live: f64) -> Step<()> {
    let stamp = fmt_d(now);
    let members: Vec<String> = (1..=crate::lua::to_ll(l.cost))
        .map(|i| format!("{stamp}:{}", fmt_d(live + i as f64)))
        .collect();
    for chunk in members.chunks(3) {
        let mut a: Vec<&[u8]> = vec![key];
        for m in chunk {
            a.extend([stamp.as_bytes(), m.as_bytes()]);
        }
        run(call, c"ZADD", &a)?;
    }
    let px = fmt_d(((l.period + 999.0) / 1000.0).floor() + 1000.0);
    let when: &[u8] = if live == 0.0 { b"NX" } else { b"GT" };
    run(call, c"PEXPIRE", &[key, px.as_bytes(), when])?;
    Ok(())
}
