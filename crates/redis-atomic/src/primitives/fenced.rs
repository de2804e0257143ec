//! Fenced writes inside Redis: a stale lease holder cannot overwrite a newer holder's state.
//!
//! **Invariant.** Once a write with fence `f` has applied to a resource, no write with a fence
//! smaller than `f` applies to it again (within the retention of the fence record). This closes
//! seed 001's "zombie worker" case for state that lives in Redis: holder A pauses past its lease,
//! B acquires (larger fence) and writes, A wakes and writes: A gets [`Fenced::Stale`] and B's data
//! stays.
//!
//! **Keys** (one `{resource}` hash tag): `<ns>:fenced:v1:{resource}:fence` holds the highest fence
//! that wrote, kept [`FencedWrites::with_retention`] (default 7 days) after the last write; every
//! target key must carry the same `{resource}` tag (checked before sending; build them with
//! [`FencedWrites::key`] or your own names around `{resource}`).
//!
//! **Mechanism.** One Lua script (`fenced_write`): compare with the highest fence, apply the
//! [`Write`]s, record the fence, atomically. The writes are a closed, typed set
//! (`SET`/`HSET`/`HDEL`/`SADD`/`SREM`/`DEL`/`PEXPIRE`), at most [`crate::write::MAX_WRITES`], and
//! the script checks the whole batch (shape and key types) before the first write, so a batch
//! applies entirely or not at all.
//!
//! **Retry.** `retry: safe`: every write is idempotent, and only the same fence (the same
//! holder) can pass the check between two runs. A lost reply is retried by the client.
//!
//! **Not guaranteed.** The check is "at least the highest fence that *wrote*": a stale holder
//! writing before the newer holder's first write still applies (then the newer one overwrites).
//! Reads are not fenced. After the retention passes without writes the record is gone and any
//! fence is accepted: keep it longer than any pause you must survive. Fences must come from one
//! issuer per resource (the lock's, or the semaphore's for one permit holder).

use crate::client::{Arg, Client};
use crate::keys::Keyspace;
use crate::lease::Fence;
use crate::reply::{millis, Reply};
use crate::script::registry::FENCED_WRITE;
use crate::write::{check_batch, Write};
use crate::Error;
use std::time::Duration;

/// Longest retention of a fence record: one year.
pub const MAX_RETENTION: Duration = Duration::from_secs(365 * 24 * 3600);
const SCHEMA: u32 = 1;
/// Largest fence a script can compare exactly (2^53 - 1).
const MAX_FENCE: u64 = (1 << 53) - 1;

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
    keys: Keyspace,
    retention: Duration,
}

impl FencedWrites {
    /// Fenced writes whose fence records live under `keyspace`.
    pub fn new(client: Client, keyspace: Keyspace) -> Self {
        FencedWrites {
            client,
            keys: keyspace,
            retention: Duration::from_secs(7 * 24 * 3600),
        }
    }

    /// Keep each fence record this long after its last write (1 ms ..= [`MAX_RETENTION`]).
    pub fn with_retention(mut self, retention: Duration) -> Result<Self, Error> {
        millis("retention", retention, MAX_RETENTION.as_millis() as u64)?;
        self.retention = retention;
        Ok(self)
    }

    /// A data key under `resource`'s tag: `<ns>:fenced:v1:{resource}:<part>`.
    pub fn key(&self, resource: &str, part: &str) -> Result<String, Error> {
        self.keys.key("fenced", SCHEMA, resource, &["data", part])
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
        let record = self.keys.key("fenced", SCHEMA, resource, &["fence"])?;
        check_batch(writes)?;
        if let Some(w) = writes.iter().find(|w| hash_tag(w.key()) != Some(resource)) {
            return Err(Error::BadArgument(format!(
                "every key of a fenced write must carry the tag {{{resource}}}: {}",
                w.key()
            )));
        }
        let keys: Vec<&str> = std::iter::once(record.as_str())
            .chain(writes.iter().map(Write::key))
            .collect();
        let spec = spec(writes)?;
        let retention = millis(
            "retention",
            self.retention,
            MAX_RETENTION.as_millis() as u64,
        )?;
        let fence_text = fence.0.to_string();
        let mut args: Vec<Arg<'_>> = vec![fence_text.as_str().into(), Arg::Int(retention)];
        args.extend(spec.iter().map(|a| Arg::Bytes(a)));
        let value = self.client.invoke_dyn(&FENCED_WRITE, &keys, &args).await?;
        let reply = Reply::parse(FENCED_WRITE.name, value)?;
        match reply.status.as_str() {
            "applied" => Ok(Fenced::Applied {
                fence: Fence(reply.uint(0)?),
                writes: usize::try_from(reply.uint(1)?).unwrap_or(usize::MAX),
            }),
            "stale" => Ok(Fenced::Stale {
                highest: Fence(reply.uint(0)?),
            }),
            _ => Err(reply.unexpected()),
        }
    }

    /// The highest fence that wrote to `resource` (0 if none is remembered): one `GET`.
    pub async fn highest(&self, resource: &str) -> Result<Fence, Error> {
        let record = self.keys.key("fenced", SCHEMA, resource, &["fence"])?;
        let value = self.client.command(redis::cmd("GET").arg(&record)).await?;
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

/// The hash tag of `key` (bytes between the first `{` and the next `}`), if non-empty.
fn hash_tag(key: &str) -> Option<&str> {
    let (_, rest) = key.split_once('{')?;
    let (tag, _) = rest.split_once('}')?;
    (!tag.is_empty()).then_some(tag)
}
