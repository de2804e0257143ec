//! What a server has executed, per command: `INFO commandstats`, read once, parsed once.
//!
//! Why: tests prove "one batch call, not four" or "the client sent ASKING" by counting on the
//! server, not by trusting the client's own counters.

use crate::TestkitError;
use std::collections::HashMap;
use std::time::Duration;

/// Calls per command (lower case, `evalsha`, `fcall_ro`, `asking`, ...) the server behind `node`
/// has executed since start or `CONFIG RESETSTAT`.
pub fn command_calls(node: &redis::Client) -> Result<HashMap<String, u64>, TestkitError> {
    let mut conn = node.get_connection_with_timeout(Duration::from_secs(5))?;
    let info: String = redis::cmd("INFO").arg("commandstats").query(&mut conn)?;
    Ok(info
        .lines()
        .filter_map(|line| {
            let (name, rest) = line.strip_prefix("cmdstat_")?.split_once(":calls=")?;
            let calls = rest.split(',').next()?.parse().ok()?;
            Some((name.to_ascii_lowercase(), calls))
        })
        .collect())
}
