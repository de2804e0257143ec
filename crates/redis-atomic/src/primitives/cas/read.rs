//! What a CAS attempt reads after `WATCH`, and the snapshot its closure decides on.

use crate::Error;
use redis::{Cmd, FromRedisValue, Value};

/// Most reads in one CAS attempt.
pub const MAX_READS: usize = 32;

/// One read of a watched key. Every key read is watched: a change to it after the read makes
/// the attempt's `EXEC` abort.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Read {
    /// `GET key`.
    Get(String),
    /// `HGET key field`.
    HGet(String, String),
    /// `HGETALL key`.
    HGetAll(String),
    /// `SMEMBERS key`.
    SMembers(String),
    /// `EXISTS key` (watch a key without reading it).
    Exists(String),
    /// `PTTL key`.
    PTtl(String),
}

impl Read {
    /// `GET key`.
    pub fn get(key: impl Into<String>) -> Read {
        Read::Get(key.into())
    }

    /// `HGET key field`.
    pub fn hget(key: impl Into<String>, field: impl Into<String>) -> Read {
        Read::HGet(key.into(), field.into())
    }

    /// `HGETALL key`.
    pub fn hgetall(key: impl Into<String>) -> Read {
        Read::HGetAll(key.into())
    }

    /// `SMEMBERS key`.
    pub fn smembers(key: impl Into<String>) -> Read {
        Read::SMembers(key.into())
    }

    /// `EXISTS key`.
    pub fn exists(key: impl Into<String>) -> Read {
        Read::Exists(key.into())
    }

    /// `PTTL key`.
    pub fn pttl(key: impl Into<String>) -> Read {
        Read::PTtl(key.into())
    }

    /// The key read (and watched).
    pub fn key(&self) -> &str {
        match self {
            Read::Get(k)
            | Read::HGet(k, _)
            | Read::HGetAll(k)
            | Read::SMembers(k)
            | Read::Exists(k)
            | Read::PTtl(k) => k,
        }
    }

    pub(crate) fn cmd(&self) -> Cmd {
        let (name, key) = match self {
            Read::Get(k) => ("GET", k),
            Read::HGet(k, field) => return redis::cmd("HGET").arg(k).arg(field).clone(),
            Read::HGetAll(k) => ("HGETALL", k),
            Read::SMembers(k) => ("SMEMBERS", k),
            Read::Exists(k) => ("EXISTS", k),
            Read::PTtl(k) => ("PTTL", k),
        };
        redis::cmd(name).arg(key).clone()
    }
}

/// The values an attempt read, in the order of its [`Read`]s: one consistent view (the attempt
/// only counts when no watched key changed between `WATCH` and `EXEC`).
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    values: Vec<Value>,
}

impl Snapshot {
    pub(crate) fn new(values: Vec<Value>) -> Snapshot {
        Snapshot { values }
    }

    /// The raw reply of read `i`.
    pub fn value(&self, i: usize) -> Option<&Value> {
        self.values.get(i)
    }

    /// Read `i` converted (e.g. `Option<i64>` for a `GET` of a counter that may be missing).
    pub fn get<T: FromRedisValue>(&self, i: usize) -> Result<T, Error> {
        let value = self.values.get(i).ok_or_else(|| {
            Error::BadArgument(format!(
                "read {i} does not exist ({} reads)",
                self.values.len()
            ))
        })?;
        T::from_redis_value_ref(value).map_err(|e| Error::BadReply {
            script: "cas read",
            detail: format!("read {i}: {e}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind of read is allowed to the least-privilege ACL user.
    #[test]
    fn every_read_command_is_in_the_acl() {
        let reads = [
            Read::get("k"),
            Read::hget("k", "f"),
            Read::hgetall("k"),
            Read::smembers("k"),
            Read::exists("k"),
            Read::pttl("k"),
        ];
        // Exhaustive: a new kind of read does not compile until it is listed (and sampled).
        let kind = |r: &Read| match r {
            Read::Get(_) => 0,
            Read::HGet(..) => 1,
            Read::HGetAll(_) => 2,
            Read::SMembers(_) => 3,
            Read::Exists(_) => 4,
            Read::PTtl(_) => 5,
        };
        let kinds: std::collections::HashSet<_> = reads.iter().map(kind).collect();
        assert_eq!(kinds.len(), 6, "a kind of read has no sample");
        for r in reads {
            let name = match r.cmd().args_iter().next() {
                Some(redis::Arg::Simple(b)) => String::from_utf8_lossy(b).to_ascii_lowercase(),
                _ => String::new(),
            };
            assert!(
                crate::script::DIRECT_COMMANDS.contains(&name.as_str()),
                "{name} missing from DIRECT_COMMANDS"
            );
        }
    }
}
