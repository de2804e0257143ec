//! Server-side accounting from `INFO commandstats` and `INFO cpu`, and client-side latency
//! percentiles.
//!
//! Round trips are counted on the server: a command the client sends shows up once in
//! commandstats, but so does every `redis.call` a script makes. The commands our scripts (and the
//! reference scripts) call are known, so "top-level" calls are all calls minus those commands,
//! minus our own `INFO` and connection handshakes (`HELLO`, `CLIENT SETINFO`, ...: a connection
//! opened mid-phase is not a decision). This is exact as long as the library sends no data
//! commands outside scripts — which is the property being measured (one round trip per
//! decision); a workload whose library path does (CAS) names those commands, and they are
//! counted back in on that path.

use super::classic;
use redis::aio::MultiplexedConnection;
use redis_atomic::script::registry;
use redis_atomic_scripts::check;
use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

/// Commands that are never a decision: ours, and what a new connection sends.
const NOT_DECISIONS: &[&str] = &[
    "info",
    "hello",
    "auth",
    "select",
    "ping",
    "client|setinfo",
    "client|setname",
];

/// One snapshot of the server's counters.
#[derive(Clone, Debug, Default)]
pub struct ServerStats {
    /// Calls and µs per command.
    commands: HashMap<String, (u64, u64)>,
    /// CPU seconds the server process has used (user + system).
    cpu_secs: f64,
}

/// What the server did between two snapshots.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ServerDelta {
    /// Client-sent commands.
    pub calls: u64,
    /// Their server µs.
    pub usec: u64,
    /// CPU seconds the server used.
    pub cpu_secs: f64,
}

impl ServerStats {
    /// Reads commandstats and cpu over `conn` (two `INFO` calls: one section each, which every
    /// server version accepts).
    pub async fn fetch(conn: &mut MultiplexedConnection) -> anyhow::Result<ServerStats> {
        let commands: String = redis::cmd("INFO")
            .arg("commandstats")
            .query_async(conn)
            .await?;
        let cpu: String = redis::cmd("INFO").arg("cpu").query_async(conn).await?;
        Ok(Self::parse(&commands, &cpu))
    }

    fn parse(commandstats: &str, cpu: &str) -> ServerStats {
        let mut commands = HashMap::new();
        for (name, rest) in fields(commandstats, "cmdstat_") {
            let get = |k: &str| {
                rest.split(',')
                    .find_map(|kv| kv.strip_prefix(k))
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0)
            };
            commands.insert(name.to_string(), (get("calls="), get("usec=")));
        }
        let cpu_secs = fields(cpu, "")
            .filter(|(name, _)| matches!(*name, "used_cpu_user" | "used_cpu_sys"))
            .filter_map(|(_, v)| v.trim().parse::<f64>().ok())
            .sum();
        ServerStats { commands, cpu_secs }
    }

    /// What happened between `self` and a later `after`: client-sent calls (counting
    /// `sent_directly`, lower-case, even though scripts call them too) and their µs, CPU time.
    pub fn since(&self, after: &ServerStats, sent_directly: &[&str]) -> ServerDelta {
        let inner = inner_commands();
        let mut delta = ServerDelta {
            cpu_secs: (after.cpu_secs - self.cpu_secs).max(0.0),
            ..ServerDelta::default()
        };
        for (name, (c1, u1)) in &after.commands {
            let inside = inner.contains(name.as_str()) && !sent_directly.contains(&name.as_str());
            if inside || NOT_DECISIONS.contains(&name.as_str()) {
                continue;
            }
            let (c0, u0) = self.commands.get(name).copied().unwrap_or((0, 0));
            delta.calls += c1.saturating_sub(c0);
            delta.usec += u1.saturating_sub(u0);
        }
        delta
    }
}

/// `name:value` lines of an `INFO` section whose name starts with `prefix` (stripped).
fn fields<'a>(text: &'a str, prefix: &'a str) -> impl Iterator<Item = (&'a str, &'a str)> {
    text.lines()
        .filter_map(move |l| l.strip_prefix(prefix)?.split_once(':'))
}

/// Commands our scripts and the reference scripts call with `redis.call`, lower-cased as
/// commandstats names them.
fn inner_commands() -> &'static HashSet<String> {
    static INNER: OnceLock<HashSet<String>> = OnceLock::new();
    INNER.get_or_init(|| {
        let sources = registry::ALL.iter().map(|s| s.source);
        sources
            .chain(classic::ALL.iter().map(|c| c.source))
            .flat_map(check::called_commands)
            .map(|c| c.to_ascii_lowercase())
            .collect()
    })
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

    /// Inner script commands, INFO and handshakes are excluded from top-level calls, unless the
    /// library path names a command it sends itself; CPU is user + system.
    #[test]
    fn top_level_excludes_script_commands() {
        let before = ServerStats::parse(
            "cmdstat_evalsha:calls=10,usec=100,usec_per_call=10\r\n",
            "used_cpu_sys:1.5\r\nused_cpu_user:2.0\r\nused_cpu_sys_children:9\r\n",
        );
        let after = ServerStats::parse(
            "cmdstat_evalsha:calls=30,usec=400,x=1\r\ncmdstat_get:calls=20,usec=20\r\ncmdstat_info:calls=2,usec=5\r\ncmdstat_client|setinfo:calls=4,usec=4\r\n",
            "used_cpu_sys:2.0\r\nused_cpu_user:2.25\r\n",
        );
        let delta = before.since(&after, &[]);
        assert_eq!((delta.calls, delta.usec), (20, 300));
        assert!((delta.cpu_secs - 0.75).abs() < 1e-9, "{delta:?}");
        let direct = before.since(&after, &["get"]);
        assert_eq!((direct.calls, direct.usec), (40, 320));
        assert_eq!(quantile(&[1, 2, 3, 4, 100], 0.5), 3);
        assert_eq!(quantile(&[1, 2, 3, 4, 100], 0.99), 100);
    }
}
