//! Server-side accounting from `INFO commandstats`, and client-side latency percentiles.
//!
//! Round trips are counted on the server: a command the client sends shows up once in
//! commandstats, but so does every `redis.call` a script makes. The commands our scripts call
//! are known (they are in the registry), so "top-level" calls are all calls minus those commands
//! (and minus our own `INFO`). This is exact as long as the library sends no data commands
//! outside scripts — which is the property being measured (DESIGN: one round trip per decision).

use redis::aio::MultiplexedConnection;
use redis_atomic::script::registry;
use redis_atomic_scripts::check;
use std::collections::{HashMap, HashSet};

/// Calls and µs per command, from one `INFO commandstats`.
#[derive(Clone, Debug, Default)]
pub struct CommandStats(HashMap<String, (u64, u64)>);

impl CommandStats {
    /// Reads commandstats over `conn`.
    pub async fn fetch(conn: &mut MultiplexedConnection) -> anyhow::Result<CommandStats> {
        let text: String = redis::cmd("INFO")
            .arg("commandstats")
            .query_async(conn)
            .await?;
        Ok(Self::parse(&text))
    }

    fn parse(text: &str) -> CommandStats {
        let mut map = HashMap::new();
        for line in text.lines() {
            let Some((name, rest)) = line
                .strip_prefix("cmdstat_")
                .and_then(|l| l.split_once(':'))
            else {
                continue;
            };
            let get = |k: &str| {
                rest.split(',')
                    .find_map(|kv| kv.strip_prefix(k))
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0)
            };
            map.insert(name.to_string(), (get("calls="), get("usec=")));
        }
        CommandStats(map)
    }

    /// Top-level (client-sent) calls and their µs between `self` and a later `after`.
    pub fn top_level_since(&self, after: &CommandStats) -> (u64, u64) {
        let inner = inner_commands();
        let (mut calls, mut usec) = (0, 0);
        for (name, (c1, u1)) in &after.0 {
            if name == "info" || inner.contains(name.as_str()) {
                continue;
            }
            let (c0, u0) = self.0.get(name).copied().unwrap_or((0, 0));
            calls += c1.saturating_sub(c0);
            usec += u1.saturating_sub(u0);
        }
        (calls, usec)
    }
}

/// Commands our scripts call with `redis.call`, lower-cased as commandstats names them.
fn inner_commands() -> HashSet<String> {
    registry::ALL
        .iter()
        .flat_map(|s| check::called_commands(s.source))
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// The `q`-quantile (0..=1) of sorted samples, 0 when empty.
pub fn quantile(sorted: &[u32], q: f64) -> u32 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inner script commands and INFO are excluded from top-level calls.
    #[test]
    fn top_level_excludes_script_commands() {
        let before = CommandStats::parse("cmdstat_evalsha:calls=10,usec=100,usec_per_call=10\r\n");
        let after = CommandStats::parse(
            "cmdstat_evalsha:calls=30,usec=400,x=1\r\ncmdstat_get:calls=20,usec=20\r\ncmdstat_info:calls=2,usec=5\r\n",
        );
        assert_eq!(before.top_level_since(&after), (20, 300));
        assert_eq!(quantile(&[1, 2, 3, 4, 100], 0.5), 3);
        assert_eq!(quantile(&[1, 2, 3, 4, 100], 0.99), 100);
    }
}
