//! Typed writes: the mutations that [`crate::multi`], [`crate::cas`] and [`crate::fenced`] apply.
//!
//! A closed set, not arbitrary commands, for three reasons. Every operation here is
//! *idempotent* (applying a batch twice leaves what applying it once leaves), so a batch whose
//! reply was lost can be sent again. Every operation names its key, so the library can check that
//! a batch stays in one hash slot before anything is sent. And the fenced-write script implements
//! exactly these operations, so what is allowed inside Redis is what the type allows. Counters
//! (`INCR`) are deliberately absent: read the value (CAS) and write the result instead.

use crate::keys::same_slot;
use crate::lease::millis;
use crate::Error;
use redis::Cmd;
use std::time::Duration;

/// Most writes in one batch.
pub const MAX_WRITES: usize = 64;
/// Most fields or members in one write.
pub const MAX_ITEMS: usize = 256;
/// Longest TTL a write may set: 30 days.
pub const MAX_WRITE_TTL: Duration = Duration::from_secs(30 * 24 * 3600);

/// One idempotent write to one key.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Write {
    /// `SET key value [PX ttl]`.
    Set {
        /// Key.
        key: String,
        /// Value.
        value: Vec<u8>,
        /// Optional expiry.
        ttl: Option<Duration>,
    },
    /// `HSET key field value ...`.
    HSet {
        /// Key.
        key: String,
        /// Field/value pairs (at least one).
        fields: Vec<(String, Vec<u8>)>,
    },
    /// `HDEL key field ...`.
    HDel {
        /// Key.
        key: String,
        /// Fields (at least one).
        fields: Vec<String>,
    },
    /// `SADD key member ...`.
    SAdd {
        /// Key.
        key: String,
        /// Members (at least one).
        members: Vec<Vec<u8>>,
    },
    /// `SREM key member ...`.
    SRem {
        /// Key.
        key: String,
        /// Members (at least one).
        members: Vec<Vec<u8>>,
    },
    /// `DEL key`.
    Del {
        /// Key.
        key: String,
    },
    /// `PEXPIRE key ttl` (the TTL from the server's now, not added).
    Expire {
        /// Key.
        key: String,
        /// Time to live.
        ttl: Duration,
    },
}

impl Write {
    /// `SET key value`.
    pub fn set(key: impl Into<String>, value: impl Into<Vec<u8>>) -> Write {
        Write::Set {
            key: key.into(),
            value: value.into(),
            ttl: None,
        }
    }

    /// `SET key value PX ttl`.
    pub fn set_px(key: impl Into<String>, value: impl Into<Vec<u8>>, ttl: Duration) -> Write {
        Write::Set {
            key: key.into(),
            value: value.into(),
            ttl: Some(ttl),
        }
    }

    /// `HSET key field value ...`.
    pub fn hset<F, V>(key: impl Into<String>, fields: impl IntoIterator<Item = (F, V)>) -> Write
    where
        F: Into<String>,
        V: Into<Vec<u8>>,
    {
        Write::HSet {
            key: key.into(),
            fields: fields
                .into_iter()
                .map(|(f, v)| (f.into(), v.into()))
                .collect(),
        }
    }

    /// `HDEL key field ...`.
    pub fn hdel<F: Into<String>>(
        key: impl Into<String>,
        fields: impl IntoIterator<Item = F>,
    ) -> Write {
        Write::HDel {
            key: key.into(),
            fields: fields.into_iter().map(Into::into).collect(),
        }
    }

    /// `SADD key member ...`.
    pub fn sadd<M: Into<Vec<u8>>>(
        key: impl Into<String>,
        members: impl IntoIterator<Item = M>,
    ) -> Write {
        Write::SAdd {
            key: key.into(),
            members: members.into_iter().map(Into::into).collect(),
        }
    }

    /// `SREM key member ...`.
    pub fn srem<M: Into<Vec<u8>>>(
        key: impl Into<String>,
        members: impl IntoIterator<Item = M>,
    ) -> Write {
        Write::SRem {
            key: key.into(),
            members: members.into_iter().map(Into::into).collect(),
        }
    }

    /// `DEL key`.
    pub fn del(key: impl Into<String>) -> Write {
        Write::Del { key: key.into() }
    }

    /// `PEXPIRE key ttl`.
    pub fn expire(key: impl Into<String>, ttl: Duration) -> Write {
        Write::Expire {
            key: key.into(),
            ttl,
        }
    }

    /// The key written.
    pub fn key(&self) -> &str {
        match self {
            Write::Set { key, .. }
            | Write::HSet { key, .. }
            | Write::HDel { key, .. }
            | Write::SAdd { key, .. }
            | Write::SRem { key, .. }
            | Write::Del { key }
            | Write::Expire { key, .. } => key,
        }
    }

    /// The lower-case op name the fenced-write script knows.
    pub(crate) fn op(&self) -> &'static str {
        match self {
            Write::Set { .. } => "set",
            Write::HSet { .. } => "hset",
            Write::HDel { .. } => "hdel",
            Write::SAdd { .. } => "sadd",
            Write::SRem { .. } => "srem",
            Write::Del { .. } => "del",
            Write::Expire { .. } => "pexpire",
        }
    }

    /// The arguments after the key, as the command takes them (`PX ms` for a TTL'd `SET`).
    pub(crate) fn args(&self) -> Result<Vec<Vec<u8>>, Error> {
        let ms = |ttl: &Duration| {
            millis("write ttl", *ttl, MAX_WRITE_TTL).map(|n| n.to_string().into_bytes())
        };
        Ok(match self {
            Write::Set { value, ttl, .. } => match ttl {
                Some(t) => vec![value.clone(), b"PX".to_vec(), ms(t)?],
                None => vec![value.clone()],
            },
            Write::HSet { fields, .. } => fields
                .iter()
                .flat_map(|(f, v)| [f.clone().into_bytes(), v.clone()])
                .collect(),
            Write::HDel { fields, .. } => fields.iter().map(|f| f.clone().into_bytes()).collect(),
            Write::SAdd { members, .. } | Write::SRem { members, .. } => members.clone(),
            Write::Del { .. } => Vec::new(),
            Write::Expire { ttl, .. } => vec![ms(ttl)?],
        })
    }

    fn items(&self) -> usize {
        match self {
            Write::HSet { fields, .. } => fields.len(),
            Write::HDel { fields, .. } => fields.len(),
            Write::SAdd { members, .. } | Write::SRem { members, .. } => members.len(),
            _ => 1,
        }
    }

    /// The command, checked: non-empty key, 1..=[`MAX_ITEMS`] items, TTLs in range.
    pub fn to_cmd(&self) -> Result<Cmd, Error> {
        if self.key().is_empty() {
            return Err(Error::BadArgument("write key must not be empty".into()));
        }
        if self.items() == 0 || self.items() > MAX_ITEMS {
            return Err(Error::BadArgument(format!(
                "a write takes 1..={MAX_ITEMS} fields or members, got {}",
                self.items()
            )));
        }
        let name = match self {
            Write::Expire { .. } => "PEXPIRE".to_string(),
            other => other.op().to_ascii_uppercase(),
        };
        let mut cmd = redis::cmd(&name);
        cmd.arg(self.key()).arg(self.args()?);
        Ok(cmd)
    }
}

/// Checks a batch before anything is sent: 1..=[`MAX_WRITES`] writes, each valid, all in one
/// hash slot. Returns the commands.
pub(crate) fn check_batch(writes: &[Write]) -> Result<Vec<Cmd>, Error> {
    if writes.is_empty() || writes.len() > MAX_WRITES {
        return Err(Error::BadArgument(format!(
            "a batch takes 1..={MAX_WRITES} writes, got {}",
            writes.len()
        )));
    }
    let keys: Vec<&str> = writes.iter().map(Write::key).collect();
    let cmds = writes.iter().map(Write::to_cmd).collect::<Result<_, _>>()?;
    same_slot(&keys)?;
    Ok(cmds)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Commands are what Redis expects; bad writes are typed errors, never panics.
    #[test]
    fn commands_and_checks() {
        let cmd = Write::set_px("{a}x", "v", Duration::from_secs(2)).to_cmd();
        let packed = String::from_utf8(cmd.unwrap().get_packed_command()).unwrap_or_default();
        assert!(packed.contains("SET") && packed.contains("PX") && packed.contains("2000"));
        assert!(Write::hset("k", Vec::<(String, String)>::new())
            .to_cmd()
            .is_err());
        assert!(Write::del("").to_cmd().is_err());
        assert!(Write::expire("k", Duration::ZERO).to_cmd().is_err());
        assert!(check_batch(&[]).is_err());
        assert!(matches!(
            check_batch(&[Write::del("{a}1"), Write::del("{b}1")]),
            Err(Error::CrossSlot { .. })
        ));
        assert!(check_batch(&vec![Write::del("{a}1"); MAX_WRITES + 1]).is_err());
        assert!(check_batch(&[Write::del("{a}1"), Write::sadd("{a}2", ["m"])]).is_ok());
    }

    /// Every kind of write is allowed to the least-privilege ACL user.
    #[test]
    fn every_write_command_is_in_the_acl() {
        let writes = [
            Write::set("k", "v"),
            Write::hset("k", [("f", "v")]),
            Write::hdel("k", ["f"]),
            Write::sadd("k", ["m"]),
            Write::srem("k", ["m"]),
            Write::del("k"),
            Write::expire("k", Duration::from_secs(1)),
        ];
        // Exhaustive: a new kind of write does not compile until it is listed (and sampled).
        let kind = |w: &Write| match w {
            Write::Set { .. } => 0,
            Write::HSet { .. } => 1,
            Write::HDel { .. } => 2,
            Write::SAdd { .. } => 3,
            Write::SRem { .. } => 4,
            Write::Del { .. } => 5,
            Write::Expire { .. } => 6,
        };
        let kinds: std::collections::HashSet<_> = writes.iter().map(kind).collect();
        assert_eq!(kinds.len(), 7, "a kind of write has no sample");
        for w in writes {
            let cmd = w.to_cmd().unwrap_or_else(|e| panic!("{w:?}: {e}"));
            let name = match cmd.args_iter().next() {
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
