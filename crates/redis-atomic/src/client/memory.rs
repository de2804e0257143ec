//! `maxmemory-policy`: the one setting under which Redis deletes the primitives' keys by itself.
//! Judged here once, for the check every client makes when it connects and for the doctor's row
//! ([`crate::doctor`], which re-exports [`Status`] and [`MemoryCheck`]). Here, in the client,
//! because the client runs it at connect time: the doctor builds on the client, not the reverse.
//!
//! Why it fails the audit: an evicting policy (`allkeys-*`, and `volatile-*` too, since nearly
//! every key the primitives write has a TTL) lets a full server delete a live lock, the fence
//! counter, a completed idempotency record, a permit or a job. With `noeviction` a full server
//! refuses writes instead (`Rejected { code: "OOM" }`: nothing ran, nothing lost).

use crate::observe;
use crate::{Client, Error};
use redis::Value;
use std::collections::HashMap;

/// How a check came out: the connect-time check's, and every row of the doctor's audit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Status {
    /// As the primitives assume.
    Ok,
    /// Worth knowing: a weaker guarantee than possible, or a check that could not be made.
    Warn,
    /// A setting under which a primitive's invariant can break.
    Fail,
}

impl Status {
    /// `ok`, `warn`, `fail`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "fail",
        }
    }
}

/// `field:value` lines (INFO, CLUSTER INFO); sections and blank lines skipped.
pub(crate) fn fields(text: &str) -> HashMap<String, String> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// An error as one short line for a check's finding.
pub(crate) fn short(err: Error) -> String {
    match err {
        Error::Server { code, message } | Error::Rejected { code, message } => {
            format!("{code} {message}")
        }
        other => other.to_string(),
    }
}

/// The fix of a failing policy.
pub(crate) const FIX: &str = "CONFIG SET maxmemory-policy noeviction (a full server then refuses \
     writes with OOM, typed Rejected, instead of deleting keys); size maxmemory for the data, or \
     keep these keys on a server of their own";

/// `maxmemory-policy` as judged from `maxmemory` (bytes) and the policy.
pub(crate) fn judge(maxmemory: Option<u64>, policy: Option<&str>) -> (Status, String) {
    match (maxmemory, policy) {
        (_, None) | (None, _) => (
            Status::Warn,
            "unknown (CONFIG GET and INFO memory refused or incomplete)".into(),
        ),
        (Some(max), Some("noeviction")) => (
            Status::Ok,
            format!("noeviction (maxmemory {}): a full server refuses writes with OOM, deletes nothing", bytes(max)),
        ),
        (Some(0), Some(policy)) => (
            Status::Warn,
            format!("{policy} with maxmemory 0 (no limit yet): keys will be evicted as soon as a limit is set"),
        ),
        (Some(max), Some(policy)) => (
            Status::Fail,
            format!("{policy} with maxmemory {}: a full server evicts locks, fences, idempotency records, permits and jobs", bytes(max)),
        ),
    }
}

fn bytes(n: u64) -> String {
    match n {
        0 => "0".into(),
        n if n % (1 << 20) == 0 => format!("{}mb", n >> 20),
        n => format!("{n} bytes"),
    }
}

/// What a client found when it connected ([`Client::memory_check`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct MemoryCheck {
    /// Ok (`noeviction`), Warn (unknown, or an evicting policy without a limit yet) or Fail (an
    /// evicting policy with a limit: keys can vanish).
    pub status: Status,
    /// What was found, per node in a cluster.
    pub found: String,
}

/// The check a client makes once when it connects: `INFO memory` (every primary, through a
/// cluster connection). A refusal or failure is "unknown", logged at debug level, never an error.
pub(crate) async fn check(client: &Client) -> MemoryCheck {
    let result = match client.command(redis::cmd("INFO").arg("memory")).await {
        Ok(value) => per_node(value),
        Err(e) => Err(e),
    };
    let check = match result {
        Ok(nodes) => {
            let judged: Vec<(Status, String)> = nodes
                .iter()
                .map(|(node, text)| {
                    let f = fields(text);
                    let max = f.get("maxmemory").and_then(|v| v.parse().ok());
                    let (status, found) = judge(max, f.get("maxmemory_policy").map(String::as_str));
                    match node {
                        Some(node) => (status, format!("{node}: {found}")),
                        None => (status, found),
                    }
                })
                .collect();
            let status = judged.iter().map(|(s, _)| *s).max().unwrap_or(Status::Warn);
            let found = judged
                .into_iter()
                .filter(|(s, _)| *s == status)
                .map(|(_, f)| f)
                .collect::<Vec<_>>()
                .join("; ");
            MemoryCheck { status, found }
        }
        Err(e) => MemoryCheck {
            status: Status::Warn,
            found: format!("unknown: INFO memory failed ({})", short(e)),
        },
    };
    match check.status {
        Status::Fail => {
            tracing::warn!(check = "maxmemory-policy", found = %check.found, fix = FIX, "redis-atomic: the server can evict this library's keys");
            observe::server_warning("maxmemory-policy");
        }
        _ => {
            tracing::debug!(check = "maxmemory-policy", found = %check.found, "redis-atomic: server check")
        }
    }
    check
}

/// The `INFO` text of each node: one (standalone), or a map of address → text (cluster).
fn per_node(value: Value) -> Result<Vec<(Option<String>, String)>, Error> {
    let text = |v: Value| {
        redis::from_redis_value::<String>(v).map_err(|e| Error::BadReply {
            script: "INFO memory",
            detail: e.to_string(),
        })
    };
    match value {
        Value::Map(nodes) => nodes
            .into_iter()
            .map(|(addr, v)| Ok((Some(text(addr)?), text(v)?)))
            .collect(),
        other => Ok(vec![(None, text(other)?)]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Evicting with a limit fails, without one warns; noeviction and unknown as documented.
    #[test]
    fn policies() {
        assert_eq!(judge(Some(1 << 20), Some("noeviction")).0, Status::Ok);
        assert_eq!(judge(Some(1 << 20), Some("allkeys-lru")).0, Status::Fail);
        assert_eq!(judge(Some(1 << 20), Some("volatile-ttl")).0, Status::Fail);
        assert_eq!(judge(Some(0), Some("allkeys-random")).0, Status::Warn);
        assert_eq!(judge(None, Some("allkeys-lru")).0, Status::Warn);
        assert!(judge(Some(100 << 20), Some("allkeys-lru"))
            .1
            .contains("100mb"));
    }

    /// A cluster's per-node map and a single reply both parse; a server error inside is an error.
    #[test]
    fn per_node_shapes() {
        let s = |x: &str| Value::BulkString(x.as_bytes().to_vec());
        assert_eq!(per_node(s("maxmemory:0")).unwrap().len(), 1);
        let map = Value::Map(vec![(s("a:1"), s("x")), (s("b:2"), s("y"))]);
        assert_eq!(per_node(map).unwrap()[1].0.as_deref(), Some("b:2"));
        assert!(per_node(Value::Array(vec![])).is_err());
    }
}
