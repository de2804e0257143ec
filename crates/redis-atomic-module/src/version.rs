//! What the module implements: each native's script and the script version it decides exactly
//! as. A client uses a native only when its own script has that version (a script changed since
//! the module was built runs as a script until the module catches up); the test
//! `natives_match_the_scripts` fails when a script's version moves without its native.

use crate::reply::{Item, Out};
use crate::server::Call;
use std::ffi::c_int;

/// `MODULE LIST`'s `ver`: bumped with every change of a native.
pub const MODULE_VERSION: c_int = 1;

/// (script name, script version) of every native.
pub const NATIVES: &[(&str, u32)] = &[
    ("rl_fixed_window", 6),
    ("rl_gcra", 6),
    ("rl_token_bucket", 6),
    ("rl_sliding_window", 6),
    ("rl_sliding_log", 5),
    ("rl_anchored_window", 2),
    ("lock_acquire", 5),
    ("lock_release", 6),
    ("lock_extend", 5),
    ("quota_add", 4),
    ("quota_add_id", 2),
    ("idem_begin", 5),
    ("sem_acquire", 4),
    ("sem_release", 4),
    ("rl_policy", 8),
];

/// `RATOMIC.VERSION`: `["module", <crate version>, <script>, <version>, ...]`.
pub fn reply(call: &Call) -> Out {
    if call.len() != 0 {
        return Out::WrongArity;
    }
    let mut items = vec![
        Item::Bulk(b"module".to_vec()),
        Item::Bulk(env!("CARGO_PKG_VERSION").as_bytes().to_vec()),
    ];
    for (name, version) in NATIVES {
        items.push(Item::Bulk(name.as_bytes().to_vec()));
        items.push(Item::Int(i64::from(*version)));
    }
    Out::Array(items)
}
