//! Fenced writes inside Redis: a stale lease holder cannot overwrite a newer holder's state.
//!
//! **Invariant.** Once a write with fence `f` has applied to a resource, no write with a fence
//! smaller than `f` applies to it again (within the retention of the fence record). This closes
//! the "zombie worker" case for state that lives in Redis: holder A pauses past its lease,
//! B acquires (larger fence) and writes, A wakes and writes: A gets [`Fenced::Stale`] and B's data
//! stays.
//!
//! **Keys** ([`FencedKeys`], one `{resource}` hash tag): `<ns>:fenced:v1:{resource}:fence` holds
//! the highest fence that wrote, kept [`FencedWrites::with_retention`] (default 7 days) after the
//! last write; every target key must carry the same `{resource}` tag (checked before sending;
//! build them with [`FencedWrites::key`] or your own names around `{resource}`).
//!
//! **Shape.** A collection keyed per call (the first of the
//! [two constructor kinds](crate#primitives-two-constructor-kinds)):
//! [`FencedWrites::new`] with a [`Keyspace`](crate::Keyspace), [`FencedWrites::with_retention`]
//! checked, every write naming its resource, [`FencedWrites::keys`] per resource. A stale fence
//! is a value ([`Fenced::Stale`]).
//!
//! **Fences** come from the lease primitives, issued by [one rule](crate::lease#fences).
//!
//! **Mechanism.** Rung 5, one Lua script (`fenced_write`): compare with the highest
//! fence, apply the [`Write`]s, record the fence, atomically (a compare followed by writes to
//! several keys is no single command, and `WATCH` would take two round trips and abort when
//! holders race). The writes are a closed, typed set (`SET`/`HSET`/`HDEL`/`SADD`/`SREM`/`DEL`/
//! `PEXPIRE`), at most [`crate::write::MAX_WRITES`], and the script checks the whole batch (shape
//! and key types) before the first write, so a batch applies entirely or not at all.
//! [`FencedWrites::highest`] is one `GET` of the fence record.
//!
//! **Retry.** `retry: safe`: every write is idempotent, and only the same fence (the same
//! holder) can pass the check between two runs. A lost reply is retried by the client within its
//! [`crate::RetryPolicy`]; so is the `GET` of [`FencedWrites::highest`].
//!
//! **Not guaranteed.** The check is "at least the highest fence that *wrote*": a stale holder
//! writing before the newer holder's first write still applies (then the newer one overwrites).
//! Reads are not fenced. After the retention passes without writes the record is gone and any
//! fence is accepted: keep it longer than any pause you must survive. Fences must come from one
//! issuer per resource (the lock's, or the semaphore's for one permit holder).

use crate::client::{Arg, Client};
use crate::keys::{hash_tag, Keyspace};
use crate::lease::{millis, Fence};
use crate::observe::Op;
use crate::script::registry::{FencedWriteReply, FENCED_WRITE};
use crate::write::{check_batch, Write};
use crate::Error;
use std::time::Duration;

/// Longest retention of a fence record: one year.
pub const MAX_RETENTION: Duration = Duration::from_secs(365 * 24 * 3600);
const SCHEMA: u32 = 1;
/// Largest fence a fenced write accepts: the largest a script can compare exactly (2^53 - 1).
pub const MAX_FENCE: u64 = (1 << 53) - 1;
/// The `GET` of [`FencedWrites::highest`].
const HIGHEST: Op = Op::command("fenced", "highest", "get");

/// The keys of one resource's fenced writes (data keys are the caller's, under the same tag).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct FencedKeys {
    /// `<ns>:fenced:v1:{resource}:fence`: the highest fence that wrote, as a decimal string,
    /// kept for the retention after the last write.
    pub fence: String,
}

/// Result of a fenced write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fenced {
    /// Every write applied; `fence` is now the highest.
    Applied {
        /// The fence recorded.
        fence: Fence,
        /// Writes applied.
        writes: usize,
    },
    /// A larger fence has written: nothing applied.
    Stale {
        /// The highest fence that wrote.
        highest: Fence,
    },
}

/// Fenced writes under one keyspace.
#[derive(Clone, Debug)]
pub struct FencedWrites {
    client: Client,
    keyspace: Keyspace,
    retention: Duration,
}

impl FencedWrites {
    /// Fenced writes whose fence records live under `keyspace`.
    pub fn new(client: Client, keyspace: Keyspace) -> Self {
        FencedWrites {
            client,
            keyspace,
            retention: Duration::from_secs(7 * 24 * 3600),
        }
    }

    /// Keep each fence record this long after its last write (1 ms ..= [`MAX_RETENTION`]).
    pub fn with_retention(mut self, retention: Duration) -> Result<Self, Error> {
        millis("retention", retention, MAX_RETENTION)?;
        self.retention = retention;
        Ok(self)
    }

    /// The keys of `resource`'s fenced writes.
    ///
    /// ```
    /// # fn demo(client: redis_atomic::Client) -> Result<(), redis_atomic::Error> {
    /// use redis_atomic::fenced::FencedWrites;
    /// let fenced = FencedWrites::new(client, redis_atomic::Keyspace::new("app")?);
    /// assert_eq!(fenced.keys("order-42")?.fence, "app:fenced:v1:{order-42}:fence");
    /// # Ok(()) }
    /// ```
    pub fn keys(&self, resource: &str) -> Result<FencedKeys, Error> {
        Ok(FencedKeys {
            fence: self.keyspace.key("fenced", SCHEMA, resource, &["fence"])?,
        })
    }

    /// A data key under `resource`'s tag: `<ns>:fenced:v1:{resource}:data:<part>`.
    pub fn key(&self, resource: &str, part: &str) -> Result<String, Error> {
        self.keyspace
            .key("fenced", SCHEMA, resource, &["data", part])
    }

    /// Applies `writes` only if `fence` is at least the highest fence that wrote to `resource`,
    /// and records `fence`. Checked before sending: 1..=`MAX_WRITES` valid writes, every key
    /// tagged `{resource}`.
    pub async fn fenced_write(
        &self,
        resource: &str,
        fence: Fence,
        writes: &[Write],
    ) -> Result<Fenced, Error> {
        if fence.0 == 0 || fence.0 > MAX_FENCE {
            return Err(Error::BadArgument(format!(
                "fence must be in 1..={MAX_FENCE}, got {fence}"
            )));
        }
        let record = self.keys(resource)?.fence;
        check_batch(writes)?;
        if let Some(w) = writes.iter().find(|w| !carries_tag(w.key(), resource)) {
            return Err(Error::BadArgument(format!(
                "every key of a fenced write must carry the tag {{{resource}}}: {}",
                w.key()
            )));
        }
        let keys: Vec<&str> = std::iter::once(record.as_str())
            .chain(writes.iter().map(Write::key))
            .collect();
        let spec = spec(writes)?;
        let retention = millis("retention", self.retention, MAX_RETENTION)?;
        let fence_text = fence.0.to_string();
        let mut args: Vec<Arg<'_>> = vec![fence_text.as_str().into(), Arg::Int(retention)];
        args.extend(spec.iter().map(|a| Arg::Bytes(a)));
        let reply = self.client.call(&FENCED_WRITE, &keys, &args).await?;
        Ok(match reply {
            FencedWriteReply::Applied { fence, writes } => Fenced::Applied {
                fence,
                writes: usize::try_from(writes).unwrap_or(usize::MAX),
            },
            FencedWriteReply::Stale { highest } => Fenced::Stale { highest },
        })
    }

    /// The highest fence that wrote to `resource` (0 if none is remembered): one `GET`, resent
    /// within the client's retry policy (it reads only).
    pub async fn highest(&self, resource: &str) -> Result<Fence, Error> {
        let record = self.keys(resource)?.fence;
        let mut get = redis::cmd("GET");
        get.arg(&record);
        let value = self.client.idempotent(HIGHEST, &record, &get).await?;
        let n: Option<u64> = redis::from_redis_value(value)
            .map_err(|e| Error::WrongType(format!("fence record: {e}")))?;
        Ok(Fence(n.unwrap_or(0)))
    }
}

/// The script's spec: per write, op, argument count, arguments.
fn spec(writes: &[Write]) -> Result<Vec<Vec<u8>>, Error> {
    let mut out = Vec::new();
    for w in writes {
        let args = w.args()?;
        out.push(w.op().as_bytes().to_vec());
        out.push(args.len().to_string().into_bytes());
        out.extend(args);
    }
    Ok(out)
}

/// Whether `key` carries the hash tag `{resource}`. [`hash_tag`] answers the whole key when it
/// has no tag: a key without one never qualifies, even one spelled like the resource.
fn carries_tag(key: &str, resource: &str) -> bool {
    let tag = hash_tag(key.as_bytes());
    tag.len() < key.len() && tag == resource.as_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only a real `{resource}` tag qualifies.
    #[test]
    fn tags() {
        assert!(carries_tag("app:fenced:v1:{r}:data:x", "r"));
        assert!(carries_tag("{r}", "r"));
        assert!(!carries_tag("r", "r"));
        assert!(!carries_tag("{}r", "r"));
        assert!(!carries_tag("{other}", "r"));
        assert!(!carries_tag("no-tag", "r"));
    }
}
