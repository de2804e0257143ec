//! Multi-limit policies and the entry limiter (`rl_policy.lua`): every limit checked before any
//! is charged, all or nothing, in both of the script's forms (four arguments per limit, or six:
//! each limit its own hits and mode), with the request record ([`crate::record`]). Step by step
//! in the script's order — validation per limit, the request ttl, the clock, the replay, each
//! limit's check (the sliding log's trim included), the aggregate, the writes, the record — so
//! an error part-way leaves what the script's would.
//!
//! # Keys
//! `RATOMIC.RL_POLICY request count limit_1 … limit_count args...`: the script's `KEYS` with the
//! number of limit keys after the first (a script learns it from `EVAL`'s numkeys; a native's
//! argument count alone cannot tell four arguments per limit from six). The request key first,
//! so a client that routes an unknown command by its first argument routes this one right; the
//! positions are declared through the getkeys API ([`key_positions`]), which Cluster consults on
//! Redis 7.0 to 8 and Valkey (key specs are not consulted there).

use crate::anchored::policy_check as anchored_check;
use crate::lua::{int_in, tonumber};
use crate::reply::Out;
use crate::rl::{self, Algo, Check, Limit};
use crate::server::{Call, Kind};

type Step<T> = Result<T, Out>;

/// One validated limit: its algorithm and numbers, whether it is only checked (hits 0), its mode.
struct Spec {
    algo: Algo,
    l: Limit,
    check_only: bool,
    mode: u8,
}

/// The call's layout: `n` limits, their keys from argument 2, then `ARGV`.
struct Layout<'a> {
    call: &'a Call,
    n: usize,
}

impl Layout<'_> {
    /// `ARGV[k + 1]`.
    fn argv(&self, k: usize) -> &[u8] {
        self.call.arg(2 + self.n + k)
    }

    fn argc(&self) -> usize {
        self.call.len().saturating_sub(2 + self.n)
    }

    /// The argument index of limit `i`'s key (0-based).
    fn key(&self, i: usize) -> usize {
        2 + i
    }
}

/// The number of limit keys the call declares, when it fits the call.
fn declared(call: &Call) -> Option<usize> {
    let text = call.arg(1);
    if text.is_empty() || text.len() > 4 || !text.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n: usize = std::str::from_utf8(text).ok()?.parse().ok()?;
    (call.len() >= 2 + n).then_some(n)
}

/// The argument positions (the command's name at 0) of its keys, for the getkeys API: the
/// request key, and the limit keys the count declares (none beyond the call's arguments).
pub fn key_positions(call: &Call) -> Vec<usize> {
    let mut keys = Vec::new();
    if call.len() >= 1 {
        keys.push(1);
    }
    if let Some(n) = declared(call) {
        keys.extend((0..n).map(|i| 3 + i));
    }
    keys
}

/// `RATOMIC.RL_POLICY request count limit... cost request_id request_ttl_us test_now_us spec...`.
pub fn decide(call: &Call) -> Out {
    if call.len() < 2 {
        return Out::WrongArity;
    }
    let Some(n) = declared(call) else {
        return Out::WrongArity;
    };
    match steps(&Layout { call, n }) {
        Ok(out) | Err(out) => out,
    }
}

fn algo(name: &[u8]) -> Option<Algo> {
    Some(match name {
        b"fw" => Algo::FixedWindow,
        b"aw" => Algo::AnchoredWindow,
        b"sl" => Algo::SlidingLog,
        b"sw" => Algo::SlidingWindow,
        b"tb" => Algo::TokenBucket,
        b"gcra" => Algo::Gcra,
        _ => return None,
    })
}

/// The form check and each limit's validation, in the script's order.
fn specs(at: &Layout) -> Step<(Vec<Spec>, usize)> {
    let n = at.n;
    let mut width = 4;
    if n >= 1 && at.argc() == 4 + 6 * n {
        width = 6;
    }
    let most = if width == 6 { 32 } else { 8 };
    if n < 1 || n > most || at.argc() != 4 + width * n {
        return Err(Out::bad(
            "a policy takes 1..8 limits of 4 arguments each (or 1..32 of 6)",
        ));
    }
    let mut specs = Vec::with_capacity(n);
    for i in 0..n {
        let base = 4 + width * i;
        let (mut cost, mut mode) = (at.argv(0), &b"h"[..]);
        if width == 6 {
            (cost, mode) = (at.argv(base + 4), at.argv(base + 5));
        }
        let Some(algo) = algo(at.argv(base)) else {
            return Err(Out::bad("unknown algorithm"));
        };
        if !matches!(mode, b"h" | b"s" | b"q") {
            return Err(Out::bad("mode must be h, s or q"));
        }
        if algo == Algo::AnchoredWindow && !at.argv(3).is_empty() {
            return Err(Out::bad(
                "the anchored window runs on key expiry and takes no test clock",
            ));
        }
        let key = at.call.arg(at.key(i));
        if (0..i).any(|j| at.call.arg(at.key(j)) == key) {
            return Err(Out::bad("duplicate limit key"));
        }
        let check_only = width == 6 && cost == b"0";
        if check_only {
            cost = b"1";
        }
        let (limit, period, burst) = (at.argv(base + 1), at.argv(base + 2), at.argv(base + 3));
        let l = rl::args(algo, cost, limit, period, burst)?;
        specs.push(Spec {
            algo,
            l,
            check_only,
            mode: mode[0],
        });
    }
    Ok((specs, width))
}

/// Limit `i`'s check (the algorithm's fragment).
fn check(at: &Layout, i: usize, s: &Spec, now: f64) -> Step<Check> {
    let index = at.key(i);
    let name = at.call.arg(index);
    match s.algo {
        Algo::SlidingLog => crate::sliding_log::check(at.call, name, &s.l, now),
        Algo::AnchoredWindow => anchored_check(at.call, index, &s.l),
        algo => {
            let key = at.call.key(index);
            if key.kind() == Kind::Other {
                return Err(Out::wrongtype());
            }
            rl::string_check(algo, &s.l, now, key.value()).ok_or_else(|| rl::not_state(name))
        }
    }
}

/// The aggregate over the limits that can veto: (admit, least remaining, latest reset, longest retry).
fn aggregate(specs: &[Spec], checks: &[Check]) -> (bool, Option<f64>, f64, f64) {
    let (mut admit, mut least, mut latest, mut longest) = (true, None::<f64>, 0.0, 0.0);
    let (mut quotas, mut quota_ok) = (0, false);
    for (s, c) in specs.iter().zip(checks) {
        if s.mode == b'q' {
            quotas += 1;
            quota_ok |= c.ok;
        }
        if s.mode == b'h' && !c.ok {
            admit = false;
        }
        if s.mode != b's' {
            if least.is_none_or(|l| c.remaining < l) {
                least = Some(c.remaining);
            }
            if c.reset > latest {
                latest = c.reset;
            }
            if c.retry > longest {
                longest = c.retry;
            }
        }
    }
    if quotas > 0 && !quota_ok {
        admit = false;
    }
    (admit, least, latest, longest)
}

fn steps(at: &Layout) -> Step<Out> {
    let (specs, width) = specs(at)?;
    let request_id = !at.argv(1).is_empty();
    let request_ttl = match request_id {
        true => Some(
            int_in(tonumber(at.argv(2)), 1000.0, 86_400_000_000.0).ok_or_else(|| {
                Out::bad("request_ttl_us must be an integer in 1000..86400000000")
            })?,
        ),
        false => None,
    };
    let now = rl::clock(at.call, at.argv(3))?;
    if request_id {
        if let Some(out) = crate::record::replay(at.call, now)? {
            return Ok(out);
        }
    }
    let mut checks = Vec::with_capacity(specs.len());
    for (i, s) in specs.iter().enumerate() {
        let mut c = check(at, i, s, now)?;
        if width == 6 && !c.ok && c.retry < 1.0 {
            c.retry = 1.0;
        }
        checks.push(c);
    }
    let (admit, least, latest, longest) = aggregate(&specs, &checks);
    let word = if admit { "allowed" } else { "limited" };
    let first = if admit { least.unwrap_or(0.0) } else { longest };
    let mut numbers = vec![first, latest, specs.len() as f64];
    let mut statuses = Vec::with_capacity(2 * specs.len());
    for (s, c) in specs.iter().zip(&checks) {
        let mut r = c.remaining;
        // Not charged (refused, or a check only): report what it has.
        if c.ok && (!admit || s.check_only) {
            r += s.l.cost;
        }
        numbers.extend([r, c.reset, c.retry]);
        statuses.extend([r, c.reset]);
    }
    if !admit {
        return Ok(Out::status(word, &numbers));
    }
    for (i, (s, c)) in specs.iter().zip(&checks).enumerate() {
        if c.ok && !s.check_only {
            write(at, i, s, c, now)?;
        }
    }
    if let Some(ttl) = request_ttl {
        crate::record::write(at.call, now, ttl, least.unwrap_or(0.0), latest, &statuses);
    }
    Ok(Out::status(word, &numbers))
}

/// Charges limit `i` (the algorithm's write fragment).
fn write(at: &Layout, i: usize, s: &Spec, c: &Check, now: f64) -> Step<()> {
    let index = at.key(i);
    match s.algo {
        Algo::SlidingLog => {
            let live = c.w2.unwrap_or(0.0);
            crate::sliding_log::write(at.call, at.call.arg(index), &s.l, now, live)
        }
        Algo::AnchoredWindow => {
            crate::anchored::policy_write(at.call, index, c);
            Ok(())
        }
        _ => {
            rl::set_write(at.call, index, c);
            Ok(())
        }
    }
}
