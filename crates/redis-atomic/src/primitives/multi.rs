//! Atomic multi-key writes: writes known in advance, applied together with `MULTI`/`EXEC`.
//!
//! **Invariant.** No client observes some of a batch's writes without the others: the server
//! runs the queued commands back to back, with nothing in between (e.g. object + index + TTL, or
//! a session hash + the user's session set, each with its TTL).
//!
//! **Keys.** Any keys, as long as they share one hash slot (`{user-42}` in every key): checked
//! before sending ([`Error::CrossSlot`]), and the batch goes to the node serving that slot.
//!
//! **Shape.** A [`MultiWrite`] is built from the caller's own [`Write`]s (no keyspace) and
//! executed on a client.
//!
//! **Mechanism.** Rung 3: `MULTI`, the [`Write`]s, `EXEC`, sent in one round trip
//! on a [`crate::client::DedicatedConnection`] (`MULTI` state is per connection). No script runs
//! inside the transaction: a `NOSCRIPT` inside `MULTI` does not abort the others. Use it when no
//! write depends on a value read from Redis; when one does, climb to [`crate::cas`] or a script.
//!
//! **Retry.** Every [`Write`] is idempotent, so after a lost reply ([`Error::OutcomeUnknown`]) or
//! a refusal (`MOVED` while queueing aborts the whole `EXEC`) the batch is sent again, within the
//! client's [`crate::RetryPolicy`], on the client's one call path (observed as `multi`/`execute`,
//! command `multi_exec`, outcome `applied`).
//!
//! **Not guaranteed.** No rollback: a write that fails at run time (a key holding another type)
//! fails alone while the rest apply; that is reported as [`Error::WrongType`] naming the write.
//! Not isolation from the past: the batch overwrites whatever is there. Durability is Redis'
//! (asynchronous replication) unless [`crate::ClientConfig::replicas`] is set: then `WAIT`
//! follows `EXEC` in the same round trip and [`Error::NotReplicated`] reports a batch that
//! applied on the primary but reached too few replicas (it is not resent: the writes stand).
//! A batch resent after an unknown outcome whose writes are no-ops by then (`SADD` of present
//! members, `DEL` of gone keys) propagates nothing, so its `WAIT` proves nothing about the
//! first send (see `docs/failover.md`).

use crate::client::retry::{self, Verdict};
use crate::client::DedicatedConnection;
use crate::client::Replicas;
use crate::observe::Op;
use crate::write::{check_batch, Write};
use crate::{Client, Error};
use redis::{Cmd, Value};

/// One batch: `MULTI`, the writes, `EXEC`.
const EXECUTE: Op = Op::command("multi", "execute", "multi_exec");

/// A batch of writes applied atomically with `MULTI`/`EXEC`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MultiWrite {
    writes: Vec<Write>,
}

impl MultiWrite {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a write.
    pub fn write(mut self, write: Write) -> Self {
        self.writes.push(write);
        self
    }

    /// Adds `HSET key field value ...`.
    pub fn hset<F, V>(
        self,
        key: impl Into<String>,
        fields: impl IntoIterator<Item = (F, V)>,
    ) -> Self
    where
        F: Into<String>,
        V: Into<Vec<u8>>,
    {
        self.write(Write::hset(key, fields))
    }

    /// Adds `SADD key member ...`.
    pub fn sadd<M: Into<Vec<u8>>>(
        self,
        key: impl Into<String>,
        members: impl IntoIterator<Item = M>,
    ) -> Self {
        self.write(Write::sadd(key, members))
    }

    /// Adds `SREM key member ...`.
    pub fn srem<M: Into<Vec<u8>>>(
        self,
        key: impl Into<String>,
        members: impl IntoIterator<Item = M>,
    ) -> Self {
        self.write(Write::srem(key, members))
    }

    /// Adds `PEXPIRE key ttl`.
    pub fn expire(self, key: impl Into<String>, ttl: std::time::Duration) -> Self {
        self.write(Write::expire(key, ttl))
    }

    /// Adds `SET key value`, with `PX ttl` when given.
    pub fn set(
        self,
        key: impl Into<String>,
        value: impl Into<Vec<u8>>,
        ttl: Option<std::time::Duration>,
    ) -> Self {
        self.write(match ttl {
            Some(ttl) => Write::set_px(key, value, ttl),
            None => Write::set(key, value),
        })
    }

    /// Adds `DEL key`.
    pub fn del(self, key: impl Into<String>) -> Self {
        self.write(Write::del(key))
    }

    /// The writes so far.
    pub fn writes(&self) -> &[Write] {
        &self.writes
    }

    /// Applies the batch atomically; returns each write's reply. Checked first (1..=
    /// [`crate::write::MAX_WRITES`] writes, one slot): a bad batch sends nothing.
    pub async fn execute(&self, client: &Client) -> Result<Vec<Value>, Error> {
        let cmds = check_batch(&self.writes)?;
        client
            .run_op(
                EXECUTE,
                Some(self.writes[0].key()),
                &|e| Verdict::of(e, true), // idempotent writes: resending cannot repeat an effect
                &retry::no_conflict,
                &|_| "applied",
                || self.attempt(client, &cmds),
            )
            .await
    }

    async fn attempt(&self, client: &Client, cmds: &[Cmd]) -> Result<Vec<Value>, Error> {
        let mut conn = client.dedicated(self.writes[0].key()).await?;
        exec(&mut conn, cmds, client.config().replicas)
            .await?
            .ok_or_else(|| Error::BadReply {
                script: "EXEC",
                detail: "transaction aborted without a WATCH".into(),
            })
    }
}

/// `MULTI`, `cmds`, `EXEC` in one round trip on `conn` (then `WAIT`, in the same round trip, when
/// `replicas` is set). `Ok(None)` when `EXEC` aborted because a watched key changed; an error when
/// queueing failed (nothing ran), a write failed at run time, or the writes applied but fewer
/// replicas than asked acknowledged them ([`Error::NotReplicated`]).
pub(crate) async fn exec(
    conn: &mut DedicatedConnection,
    cmds: &[Cmd],
    replicas: Option<Replicas>,
) -> Result<Option<Vec<Value>>, Error> {
    let mut pipe = redis::pipe();
    pipe.cmd("MULTI");
    for cmd in cmds {
        pipe.add_command(cmd.clone());
    }
    pipe.cmd("EXEC");
    let mut timeout = conn.timeout();
    if let Some(r) = replicas {
        pipe.add_command(r.wait_cmd());
        timeout += r.timeout;
    }
    let mut replies = conn.pipeline_within(&pipe, timeout).await?;
    let acked = replicas.and_then(|_| replies.pop());
    let applied = transaction(replies)?;
    if let (Some(_), Some(r)) = (&applied, replicas) {
        r.check(acked)?;
    }
    Ok(applied)
}

/// The replies of `MULTI`, the queued commands and `EXEC`, judged.
pub(crate) fn transaction(mut replies: Vec<Value>) -> Result<Option<Vec<Value>>, Error> {
    let exec_reply = replies.pop();
    // A command refused while queueing (MOVED, syntax, OOM) makes EXEC abort: nothing ran, and
    // the queueing error says why.
    if let Some(Value::ServerError(e)) = replies.iter().find(|v| matches!(v, Value::ServerError(_)))
    {
        return Err(Error::from_code(
            e.code().to_string(),
            e.details().unwrap_or_default().to_string(),
        ));
    }
    match exec_reply {
        Some(Value::Nil) => Ok(None),
        Some(Value::Array(results)) => {
            if let Some((i, Value::ServerError(e))) = results
                .iter()
                .enumerate()
                .find(|(_, v)| matches!(v, Value::ServerError(_)))
            {
                return Err(Error::WrongType(format!(
                    "write {i} failed inside EXEC, the others applied (no rollback): {} {}",
                    e.code(),
                    e.details().unwrap_or_default()
                )));
            }
            Ok(Some(results))
        }
        Some(Value::ServerError(e)) => Err(Error::from_code(
            e.code().to_string(),
            e.details().unwrap_or_default().to_string(),
        )),
        other => Err(crate::script::reply::unexpected("EXEC", other.as_ref())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use redis_atomic_testkit::arb;

    proptest! {
        /// Any replies to `MULTI` ... `EXEC` are judged (applied, aborted, or a typed error),
        /// never a panic.
        #[test]
        fn transaction_answers_any_replies(replies in proptest::collection::vec(arb::reply(), 0..6)) {
            let _ = transaction(replies);
        }
    }
}
