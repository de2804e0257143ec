//! The equivalence test's decisions of the rate limits: each algorithm mostly on a key of its own
//! (so its state builds up over rounds and reaches the branches that need history: the sliding
//! window's weighted refusal, the sliding log's refusal whose oldest and newest entries differ),
//! and policies (`rl_policy`, both forms: four arguments per limit, or six with hits and mode)
//! whose limits use those same keys, so a policy and a single-limit native meet each other's state.

use proptest::prelude::*;

/// Keys shared by every decision (other types, foreign strings, leases, semaphores).
pub const SHARED: usize = 8;

/// The rate-limit scripts, in the order of their policy codes ([`CODES`]); key `SHARED + i` is
/// algorithm `i`'s own.
pub const ALGOS: [&str; 6] = [
    "rl_fixed_window",
    "rl_anchored_window",
    "rl_sliding_log",
    "rl_sliding_window",
    "rl_token_bucket",
    "rl_gcra",
];

/// `rl_policy`'s algorithm codes, as [`ALGOS`].
const CODES: [&str; 6] = ["fw", "aw", "sl", "sw", "tb", "gcra"];

/// A policy's own request key.
pub const REQUEST: usize = SHARED + ALGOS.len();

/// Every key a decision may use.
pub const KEYS: usize = REQUEST + 1;

/// The own key of a rate-limit script, if `name` is one.
pub fn own_key(name: &str) -> Option<usize> {
    ALGOS.iter().position(|a| *a == name).map(|i| SHARED + i)
}

/// A policy call: its keys (request first) and its arguments (`test_now_us` left empty).
#[derive(Clone, Debug)]
pub struct Policy {
    pub keys: Vec<usize>,
    pub args: Vec<String>,
}

fn pick<'a>(values: &[&'a str], p: u8) -> &'a str {
    values[usize::from(p) % values.len()]
}

/// A policy; on a clock that cannot be frozen, every period and record the longest.
pub fn policy(frozen: bool) -> impl Strategy<Value = Policy> {
    let limits = prop_oneof![14 => 1..4usize, 1 => Just(0usize), 1 => Just(9usize)];
    (
        limits,
        proptest::bool::weighted(0.4),
        Just((0..ALGOS.len()).collect::<Vec<_>>()).prop_shuffle(),
        proptest::collection::vec(any::<u8>(), 9 * 6),
        proptest::collection::vec((proptest::bool::weighted(0.85), 0..KEYS), 9),
        any::<[u8; 4]>(),
    )
        .prop_map(move |(n, wide, order, picks, keys, p)| {
            let periods: &[&str] = match frozen {
                true => &["1000000", "2000000", "60000000"],
                false => &["60000000"],
            };
            let ttls: &[&str] = match frozen {
                true => &["1000000", "60000000"],
                false => &["60000000"],
            };
            let mut args = vec![
                pick(&["1", "2", "1", "1", "1", "1", "1", "abc"], p[0]).to_string(),
                pick(&["", "", "r1", "r2"], p[1]).to_string(),
                pick(ttls, p[2]).to_string(),
                String::new(),
            ];
            let mut own = vec![if p[3] % 5 == 0 {
                usize::from(p[3]) % SHARED
            } else {
                REQUEST
            }];
            for i in 0..n {
                let q = &picks[6 * i..6 * i + 6];
                // Mostly distinct algorithms (distinct keys); now and then a repeated one.
                let algo = if q[0] % 9 == 0 {
                    usize::from(q[0]) % 6
                } else {
                    order[i % 6]
                };
                args.push(CODES[algo].to_string());
                args.push(pick(&["3", "5", "2"], q[1]).to_string());
                args.push(pick(periods, q[2]).to_string());
                args.push(pick(&["1", "2", "3"], q[3]).to_string());
                if wide {
                    args.push(pick(&["1", "1", "0", "2"], q[4]).to_string());
                    args.push(pick(&["h", "h", "s", "q"], q[5]).to_string());
                }
                let (mine, other) = keys[i];
                own.push(if mine { SHARED + algo } else { other });
            }
            Policy { keys: own, args }
        })
}
