//! `redis-atomic slot KEY... [--check-same]`: the hash slot of each key, to plan keys that
//! share a slot before a cluster refuses them.

use std::io::Write;

pub(crate) fn run(keys: &[String], check_same: bool, out: &mut dyn Write) -> i32 {
    for key in keys {
        let _ = writeln!(
            out,
            "{:>5}  {key}",
            redis_atomic::keys::slot(key.as_bytes())
        );
    }
    if check_same && redis_atomic::keys::same_slot(keys).is_err() {
        let _ = writeln!(out, "keys span more than one slot");
        return 1;
    }
    0
}
