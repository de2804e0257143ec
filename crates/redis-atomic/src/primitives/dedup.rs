//! Event dedup: the first sighting of an event id wins, for a while.
//!
//! **Invariant.** Within `ttl` of an event id's first sighting, exactly one claim token is told
//! `true` for it; every other caller is told `false`.
//!
//! **Keys** ([`DedupKeys`]). `<ns>:dedup:v1:{event_id}` holds the claim token of the first
//! sighting, with `ttl`. Each id is its own hash tag, so ids spread over the cluster.
//!
//! **Shape.** A collection keyed per call (the first of the
//! [two constructor kinds](crate#primitives-two-constructor-kinds)): [`Dedup::new`]
//! with a [`Keyspace`](crate::Keyspace), every call naming its event id, [`Dedup::keys`] per id.
//! A duplicate is a value (`false`).
//!
//! **Mechanism.** Rung 2, one command with options: `SET key token NX PX ttl GET`
//! (`NX` with `GET` needs Redis 7.0). A nil reply means this call set it: first sighting. The
//! stored token coming back is the caller's own earlier attempt whose reply was lost: still
//! `true`. Any other token: a duplicate.
//!
//! **Retry.** The token makes the command safe to resend: after [`Error::OutcomeUnknown`] or a
//! transient refusal it is retried within the client's [`crate::RetryPolicy`] with the same token,
//! on the client's one call path (observed as `dedup`/`first_seen`, command `set_nx_get`, outcome
//! `first` or `duplicate`). Past that, call [`Dedup::first_seen_as`] again with the same token for
//! the same answer.
//!
//! **Batch** ([`Dedup::first_seen_many`]): per-slot grouping by construction — every id is its own
//! slot, so each id gets its own `SET` (one observed `first_seen` operation each). They are sent
//! concurrently over the client's multiplexed connections (which pipeline them) and routed to
//! each slot's node; the batch is one token, so retrying it is safe, but it is not atomic across
//! ids (some may be recorded when another fails). An id repeated inside one batch is `true` at
//! most once.
//!
//! **Durability.** With [`crate::ClientConfig::replicas`] a first sighting is pipelined with
//! `WAIT` (still one round trip) and reported only once that many replicas have it
//! ([`Error::NotReplicated`] otherwise; the same token asks again: finding its own token, that
//! request rewrites the record — same value and TTL — so its `WAIT` covers the sighting, which
//! an earlier connection wrote). A duplicate wrote nothing:
//! it is answered `false` whatever the replicas acknowledged (the `WAIT` is sent before the
//! answer is known, so with a lagging replica it still takes up to the timeout).
//!
//! **Not guaranteed.** After `ttl` the id is forgotten. A failover can lose a recent `SET`
//! (unless replicas were waited for, and even then if those replicas fail too), after which a
//! duplicate is reported as new (at-least-once). Marking an event seen is not processing
//! it: a consumer that crashes between the two loses the event; for exactly-once *effects* use
//! [`crate::idempotency`].

use crate::client::retry::{self, Verdict};
use crate::keys::Keyspace;
use crate::lease::{millis, OwnerToken};
use crate::observe::Op;
use crate::{Client, Error};
use redis::Value;
use std::collections::HashSet;
use std::time::Duration;

/// Longest time an id is remembered: 30 days.
pub const MAX_DEDUP_TTL: Duration = Duration::from_secs(30 * 24 * 3600);
/// Most ids in one batch.
pub const MAX_BATCH: usize = 1000;
const SCHEMA: u32 = 1;
/// One sighting: `SET key token NX PX ttl GET`.
const FIRST_SEEN: Op = Op::command("dedup", "first_seen", "set_nx_get");

/// The key of one event id.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DedupKeys {
    /// `<ns>:dedup:v1:{event_id}`: the claim token of the first sighting, the ttl as its TTL.
    pub seen: String,
}

/// Event dedup under one keyspace.
#[derive(Clone, Debug)]
pub struct Dedup {
    client: Client,
    keyspace: Keyspace,
}

impl Dedup {
    /// Dedup records under `keyspace`.
    pub fn new(client: Client, keyspace: Keyspace) -> Self {
        Dedup { client, keyspace }
    }

    /// The key of `event_id`.
    ///
    /// ```
    /// # fn demo(client: redis_atomic::Client) -> Result<(), redis_atomic::Error> {
    /// use redis_atomic::dedup::Dedup;
    /// let dedup = Dedup::new(client, redis_atomic::Keyspace::new("app")?);
    /// assert_eq!(dedup.keys("evt-7")?.seen, "app:dedup:v1:{evt-7}");
    /// # Ok(()) }
    /// ```
    pub fn keys(&self, event_id: &str) -> Result<DedupKeys, Error> {
        Ok(DedupKeys {
            seen: self.keyspace.key("dedup", SCHEMA, event_id, &[])?,
        })
    }

    /// Whether this is the first sighting of `event_id` within `ttl` (fresh random token).
    pub async fn first_seen(&self, event_id: &str, ttl: Duration) -> Result<bool, Error> {
        // The caller never saw the token: a resend would be a second sighting.
        self.first_seen_as(event_id, ttl, &OwnerToken::random())
            .await
            .map_err(|e| e.retry_safe_if(false))
    }

    /// Like [`Dedup::first_seen`] with the caller's token: asking again with the same token
    /// gives the same answer (use it after an unknown outcome).
    pub async fn first_seen_as(
        &self,
        event_id: &str,
        ttl: Duration,
        token: &OwnerToken,
    ) -> Result<bool, Error> {
        let ttl_ms = millis("ttl", ttl, MAX_DEDUP_TTL)?;
        let keys = self.keys(event_id)?;
        self.claim(&keys.seen, ttl_ms, token).await
    }

    /// [`Dedup::first_seen`] for many ids (see the module doc for how they are sent). Answers in
    /// the order of `event_ids`; the first error fails the call.
    pub async fn first_seen_many(
        &self,
        event_ids: &[&str],
        ttl: Duration,
    ) -> Result<Vec<bool>, Error> {
        self.first_seen_many_as(event_ids, ttl, &OwnerToken::random())
            .await
    }

    /// [`Dedup::first_seen_many`] with the caller's token (same token, same answers).
    pub async fn first_seen_many_as(
        &self,
        event_ids: &[&str],
        ttl: Duration,
        token: &OwnerToken,
    ) -> Result<Vec<bool>, Error> {
        if event_ids.len() > MAX_BATCH {
            return Err(Error::BadArgument(format!(
                "a batch takes at most {MAX_BATCH} ids, got {}",
                event_ids.len()
            )));
        }
        let ttl_ms = millis("ttl", ttl, MAX_DEDUP_TTL)?;
        let keys = event_ids
            .iter()
            .map(|id| self.keys(id).map(|k| k.seen))
            .collect::<Result<Vec<_>, _>>()?;
        let answers =
            futures::future::try_join_all(keys.iter().map(|k| self.claim(k, ttl_ms, token)))
                .await?;
        let mut seen = HashSet::new();
        Ok(event_ids
            .iter()
            .zip(answers)
            .map(|(id, first)| first && seen.insert(*id))
            .collect())
    }

    /// `SET key token NX PX ttl GET` as one observed operation: resent (same token) within the
    /// client's retry policy after a transient refusal or an unknown outcome.
    async fn claim(&self, key: &str, ttl_ms: i64, token: &OwnerToken) -> Result<bool, Error> {
        let mut cmd = redis::cmd("SET");
        cmd.arg(key)
            .arg(token.as_str())
            .arg("NX")
            .arg("PX")
            .arg(ttl_ms)
            .arg("GET");
        self.client
            .run_op(
                FIRST_SEEN,
                Some(key),
                &|e| Verdict::of(e, true),
                &retry::no_conflict,
                &|first: &bool| if *first { "first" } else { "duplicate" },
                || self.send(key, &cmd, token),
            )
            .await
    }

    /// One `SET ... NX PX ttl GET` (with `WAIT` when the client asks for replicas): whether this
    /// token recorded the sighting. A duplicate wrote nothing, so only a first sighting needs its
    /// replicas ([`Error::NotReplicated`] otherwise: the sighting stands on the primary, and
    /// asking again with the same token waits again).
    async fn send(&self, key: &str, cmd: &redis::Cmd, token: &OwnerToken) -> Result<bool, Error> {
        let (reply, acked) = match self.client.config().replicas {
            Some(replicas) => {
                let (reply, acked) = self.client.command_and_wait(cmd, replicas).await?;
                (reply, Some((replicas, acked)))
            }
            None => (self.client.command(cmd).await?, None),
        };
        let (first, reply_was_own) = sighting(&reply, token)?;
        let Some((replicas, acked)) = acked.filter(|_| first) else {
            return Ok(first);
        };
        if reply_was_own {
            // Our own token came back: this request wrote nothing, so its WAIT proves nothing
            // (WAIT counts replicas that have *this connection's* writes; the earlier write was
            // on another). Write the record again — same value and TTL — and wait for that.
            let mut again = redis::cmd("SET");
            again.arg(key).arg(token.as_str()).arg("XX").arg("KEEPTTL");
            let (_, acked) = self.client.command_and_wait(&again, replicas).await?;
            return replicas.check(acked).map(|()| true);
        }
        replicas.check(acked).map(|()| true)
    }
}

/// `SET NX GET`'s reply judged for `token`: (first sighting, the value was our own token). Nil:
/// nothing was there, we wrote it. Our token: an earlier attempt of ours wrote it. Anything else
/// stored: a duplicate. Any other reply: [`Error::BadReply`].
pub(crate) fn sighting(reply: &Value, token: &OwnerToken) -> Result<(bool, bool), Error> {
    match reply {
        Value::Nil => Ok((true, false)),
        Value::BulkString(b) => {
            let own = b == token.as_str().as_bytes();
            Ok((own, own))
        }
        other => Err(crate::script::reply::unexpected("SET NX GET", Some(other))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use redis_atomic_testkit::arb;

    proptest! {
        /// Any reply to `SET NX GET` is a sighting or `BadReply`, never a panic.
        #[test]
        fn sighting_answers_any_value(reply in arb::reply()) {
            let token = OwnerToken::new("t1").unwrap();
            match sighting(&reply, &token) {
                Ok(_) | Err(Error::BadReply { script: "SET NX GET", .. }) => {}
                Err(other) => prop_assert!(false, "{other:?}"),
            }
        }
    }

    /// Nil is a first sighting; our own token is one (an earlier attempt of ours); another
    /// value is a duplicate.
    #[test]
    fn sightings() {
        let token = OwnerToken::new("t1").unwrap();
        assert_eq!(sighting(&Value::Nil, &token).unwrap(), (true, false));
        let own = Value::BulkString(b"t1".to_vec());
        assert_eq!(sighting(&own, &token).unwrap(), (true, true));
        let other = Value::BulkString(b"t2".to_vec());
        assert_eq!(sighting(&other, &token).unwrap(), (false, false));
    }
}
