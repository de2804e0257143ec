//! Which path a row's decisions took on the servers its fault was injected into: the server
//! module's natives or the scripts, as the servers count them (`INFO commandstats`), so a run
//! with the module shows that its rows ran the natives under every fault, not the scripts the
//! client falls back to while it has not detected the module again.
//!
//! A crash restarts the server with fresh counters: what it counted is carried over just before
//! the kill (the few calls between that reading and the kill are not counted). A killed cluster
//! node's counts are lost with it. The figures are therefore lower bounds.

use redis_atomic_testkit::{command_calls, RedisServer};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::Mutex;

/// Decisions the servers of a fault row executed, by path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ServerCalls {
    /// Calls of the server module's natives (`RATOMIC.<SCRIPT>`; not its `RATOMIC.VERSION`).
    pub natives: u64,
    /// Script calls (`EVALSHA`, `EVAL`, `FCALL` and their `_RO` forms).
    pub scripts: u64,
}

impl ServerCalls {
    /// From one server's calls per command.
    fn of(calls: &HashMap<String, u64>) -> ServerCalls {
        let sum = |pick: &dyn Fn(&str) -> bool| {
            calls
                .iter()
                .filter(|(name, _)| pick(name))
                .map(|(_, n)| n)
                .sum()
        };
        ServerCalls {
            natives: sum(&|n| n.starts_with("ratomic.") && n != "ratomic.version"),
            scripts: sum(&|n| {
                matches!(
                    n,
                    "evalsha" | "eval" | "evalsha_ro" | "eval_ro" | "fcall" | "fcall_ro"
                )
            }),
        }
    }

    /// What `server` counted (nothing when it cannot be asked).
    pub(crate) fn read(server: &RedisServer) -> ServerCalls {
        match server.pid() {
            0 => ServerCalls::default(),
            _ => command_calls(&server.client())
                .map_or_else(|_| ServerCalls::default(), |c| ServerCalls::of(&c)),
        }
    }

    /// The sum of two counts.
    pub(crate) fn plus(self, other: ServerCalls) -> ServerCalls {
        ServerCalls {
            natives: self.natives + other.natives,
            scripts: self.scripts + other.scripts,
        }
    }

    /// The calls made since `before` was read.
    pub(crate) fn since(self, before: ServerCalls) -> ServerCalls {
        ServerCalls {
            natives: self.natives.saturating_sub(before.natives),
            scripts: self.scripts.saturating_sub(before.scripts),
        }
    }
}

/// What a standalone fault server counted before its crashes.
#[derive(Debug, Default)]
pub(crate) struct Carried(Mutex<ServerCalls>);

impl Carried {
    /// Keeps what `server` counted, before it is killed.
    pub(crate) fn keep(&self, server: &RedisServer) {
        let counted = ServerCalls::read(server);
        let mut carried = self.0.lock().unwrap_or_else(|p| p.into_inner());
        *carried = carried.plus(counted);
    }

    /// Everything kept so far.
    pub(crate) fn total(&self) -> ServerCalls {
        *self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Natives but the version probe; every script command; nothing else.
    #[test]
    fn counts_by_path() {
        let calls: HashMap<String, u64> = [
            ("ratomic.rl_fixed_window", 5),
            ("ratomic.lock_acquire", 2),
            ("ratomic.version", 9),
            ("evalsha", 3),
            ("fcall", 1),
            ("get", 100),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let c = ServerCalls::of(&calls);
        assert_eq!((c.natives, c.scripts), (7, 4));
        assert_eq!(c.plus(c).since(c), c);
        assert_eq!(ServerCalls::default().since(c), ServerCalls::default());
    }
}
