//! Quotas and counters, each on the weakest rung of seed 000's ladder that keeps its invariant.
//!
//! **Invariants.** A bounded counter never leaves its `[min, max]` (a refund never takes it below
//! zero); a counter's TTL, once set, is never extended by later writes; a TTL extension only ever
//! moves expiry later; a monotonic max never decreases; a batch "ZADD unless smaller" never
//! lowers a score.
//!
//! **Keys** ([`QuotaKeys`], from [`Quotas::keys`]). One key per counter or set:
//! `<ns>:quota:v1:{<name>}` (the name is the hash tag; names are the application's own, not
//! secrets, so they stay readable).
//!
//! **Rungs, and why.**
//! * [`Quotas::add`] / [`Quotas::add_clamped`]: a Lua script (`quota_add`). `INCRBY` cannot refuse
//!   to pass a bound, and `INCRBY` + compensating `DECRBY` lets others see and act on the
//!   overshoot. Inside it, `PEXPIRE NX` sets the TTL on the first write only: with `INCR` +
//!   `EXPIRE` every write pushes expiry back, and a busy counter never resets.
//! * [`Quotas::expire_once`]: one command with an option, `PEXPIRE key ttl NX`.
//! * [`Quotas::extend_ttl`]: one command with an option, `PEXPIRE key ttl GT` (a key without a
//!   TTL counts as infinite, so it is left alone).
//! * [`Quotas::raise`]: a Lua script (`quota_max`): no command keeps the max of a string, and seed
//!   003's `GETSET` loop writes smaller values for a moment and needs a client retry loop.
//! * [`Quotas::add_unless_smaller`]: one command with an option, `ZADD key GT CH s m ...`: seed
//!   002's "ZADD unless smaller" Lua loop is exactly what `GT` does natively since Redis 6.2.
//!
//! **Retry.** `add` is `retry: unsafe` (a resend adds twice): after [`Error::OutcomeUnknown`] the
//! caller decides (read the counter, or use the rate limiter's request ids). Everything else is
//! idempotent and resent within the client's [`crate::RetryPolicy`]: `raise` as a `retry: safe`
//! script, and the commands (`GET`, `PEXPIRE NX|GT`, `ZADD GT CH`) on the client's one call path
//! for idempotent commands, observed like scripts (ops `get`, `expire_once`, `extend_ttl`,
//! `add_unless_smaller`; commands `get`, `pexpire_nx`, `pexpire_gt`, `zadd_gt_ch`).
//!
//! **Not guaranteed.** Values are integers of at most 53 bits (exact in Lua and as sorted-set
//! scores); larger ones are refused. Replication is asynchronous: a failover may lose the latest
//! writes.

use crate::client::{Arg, Client};
use crate::keys::Keyspace;
use crate::lease::millis;
use crate::observe::Op;
use crate::script::registry::{QuotaAddReply, QuotaMaxReply, QUOTA_ADD, QUOTA_MAX};
use crate::Error;
use redis::Value;
use std::time::Duration;

const SCHEMA: u32 = 1;
/// Largest magnitude of a value, bound, delta or score: 2^53 − 1 (exact as a Lua number).
pub const MAX_VALUE: i64 = (1 << 53) - 1;
/// Longest counter TTL: 366 days.
pub const MAX_TTL: Duration = Duration::from_secs(366 * 24 * 3600);
/// Most entries in one [`Quotas::add_unless_smaller`] batch.
pub const MAX_BATCH: usize = 1000;

/// The key of one counter or set.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct QuotaKeys {
    /// `<ns>:quota:v1:{<name>}`: the counter (an integer string, with the TTL the first add
    /// set, if any) or, for [`Quotas::add_unless_smaller`], the sorted set.
    pub value: String,
}

/// `n` when its magnitude is at most [`MAX_VALUE`]; a typed error naming `what` otherwise.
/// `unsigned_abs`, not `abs`: `i64::MIN.abs()` overflows (a panic in debug builds, `i64::MIN`
/// itself — which passes a `> MAX_VALUE` check — in release).
fn within(what: &str, n: i64) -> Result<i64, Error> {
    if n.unsigned_abs() > MAX_VALUE.unsigned_abs() {
        return Err(Error::BadArgument(format!("{what} {n} beyond ±(2^53 - 1)")));
    }
    Ok(n)
}

/// Inclusive bounds of a counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    min: i64,
    max: i64,
}

impl Bounds {
    /// `[min, max]`, with `min <= max`, both within ±[`MAX_VALUE`].
    ///
    /// ```
    /// use redis_atomic::quota::Bounds;
    /// assert!(Bounds::new(0, 100).is_ok());
    /// assert!(Bounds::new(5, 1).is_err());
    /// ```
    pub fn new(min: i64, max: i64) -> Result<Bounds, Error> {
        if min > max || min < -MAX_VALUE || max > MAX_VALUE {
            return Err(Error::BadArgument(format!(
                "bounds must satisfy -2^53 < min <= max < 2^53, got [{min}, {max}]"
            )));
        }
        Ok(Bounds { min, max })
    }

    /// `[0, max]`: a quota that refunds never take below zero.
    pub fn up_to(max: i64) -> Result<Bounds, Error> {
        Bounds::new(0, max)
    }

    /// The lower bound.
    pub fn min(&self) -> i64 {
        self.min
    }

    /// The upper bound.
    pub fn max(&self) -> i64 {
        self.max
    }
}

/// Result of a bounded add.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Bounded {
    /// Applied (clamped, for [`Quotas::add_clamped`]); the new value.
    Applied {
        /// The counter after the add.
        value: i64,
    },
    /// Refused: it would have left the bounds. Nothing changed.
    Refused {
        /// The unchanged counter.
        value: i64,
    },
}

/// Result of a monotonic max.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Raise {
    /// The value was below the candidate and now equals it.
    Raised {
        /// The new value.
        value: i64,
    },
    /// The value was already at least the candidate; unchanged.
    Kept {
        /// The current value.
        value: i64,
    },
}

/// Counters and sorted sets under one keyspace.
#[derive(Clone, Debug)]
pub struct Quotas {
    client: Client,
    keyspace: Keyspace,
}

impl Quotas {
    /// Quotas whose keys live under `keyspace`.
    pub fn new(client: Client, keyspace: Keyspace) -> Self {
        Quotas { client, keyspace }
    }

    /// The key of counter (or set) `name`.
    ///
    /// ```
    /// # fn demo(client: redis_atomic::Client) -> Result<(), redis_atomic::Error> {
    /// let quotas = redis_atomic::quota::Quotas::new(client, redis_atomic::Keyspace::new("app")?);
    /// assert_eq!(quotas.keys("api-calls")?.value, "app:quota:v1:{api-calls}");
    /// # Ok(()) }
    /// ```
    pub fn keys(&self, name: &str) -> Result<QuotaKeys, Error> {
        Ok(QuotaKeys {
            value: self.keyspace.key("quota", SCHEMA, name, &[])?,
        })
    }

    /// Adds `delta` unless the result would leave `bounds` ([`Bounded::Refused`], nothing
    /// changed). `ttl`, if given, is set when the counter is created and never extended.
    pub async fn add(
        &self,
        name: &str,
        delta: i64,
        bounds: Bounds,
        ttl: Option<Duration>,
    ) -> Result<Bounded, Error> {
        self.add_mode(name, delta, bounds, ttl, "refuse").await
    }

    /// Adds `delta`, clamping the result into `bounds` (a refund larger than what was used stops
    /// at the minimum). Always [`Bounded::Applied`].
    pub async fn add_clamped(
        &self,
        name: &str,
        delta: i64,
        bounds: Bounds,
        ttl: Option<Duration>,
    ) -> Result<Bounded, Error> {
        self.add_mode(name, delta, bounds, ttl, "clamp").await
    }

    async fn add_mode(
        &self,
        name: &str,
        delta: i64,
        bounds: Bounds,
        ttl: Option<Duration>,
        mode: &str,
    ) -> Result<Bounded, Error> {
        within("delta", delta)?;
        let ttl_ms = match ttl {
            Some(t) => millis("ttl", t, MAX_TTL)?,
            None => 0,
        };
        let keys = self.keys(name)?;
        let args = [
            Arg::Int(delta),
            Arg::Int(bounds.min),
            Arg::Int(bounds.max),
            mode.into(),
            Arg::Int(ttl_ms),
        ];
        let reply = self.client.call(&QUOTA_ADD, [&keys.value], args).await?;
        Ok(match reply {
            QuotaAddReply::Applied { value } => Bounded::Applied { value },
            QuotaAddReply::Refused { value } => Bounded::Refused { value },
        })
    }

    /// The counter's value (0 when absent).
    pub async fn get(&self, name: &str) -> Result<i64, Error> {
        let key = self.keys(name)?.value;
        let get = Op::command("quota", "get", "get");
        match self
            .client
            .idempotent(get, &key, redis::cmd("GET").arg(&key))
            .await?
        {
            Value::Nil => Ok(0),
            other => redis::from_redis_value(other).map_err(|e| Error::WrongType(e.to_string())),
        }
    }

    /// Sets the counter's TTL only if it has none: `true` when set.
    pub async fn expire_once(&self, name: &str, ttl: Duration) -> Result<bool, Error> {
        let op = Op::command("quota", "expire_once", "pexpire_nx");
        self.pexpire(op, name, ttl, "NX").await
    }

    /// Moves the counter's expiry to `ttl` from now only if that is later than its current
    /// expiry (never shortens; a key without TTL is left alone): `true` when moved.
    pub async fn extend_ttl(&self, name: &str, ttl: Duration) -> Result<bool, Error> {
        let op = Op::command("quota", "extend_ttl", "pexpire_gt");
        self.pexpire(op, name, ttl, "GT").await
    }

    async fn pexpire(
        &self,
        op: Op,
        name: &str,
        ttl: Duration,
        option: &str,
    ) -> Result<bool, Error> {
        let ttl_ms = millis("ttl", ttl, MAX_TTL)?;
        let key = self.keys(name)?.value;
        let mut cmd = redis::cmd("PEXPIRE");
        cmd.arg(&key).arg(ttl_ms).arg(option);
        let reply = self.client.idempotent(op, &key, &cmd).await?;
        Ok(matches!(reply, Value::Int(1)))
    }

    /// Raises the value to `candidate` unless it already holds at least that (monotonic max).
    pub async fn raise(&self, name: &str, candidate: i64) -> Result<Raise, Error> {
        within("candidate", candidate)?;
        let keys = self.keys(name)?;
        let args = [Arg::Int(candidate)];
        let reply = self.client.call(&QUOTA_MAX, [&keys.value], args).await?;
        Ok(match reply {
            QuotaMaxReply::Raised { value } => Raise::Raised { value },
            QuotaMaxReply::Kept { value } => Raise::Kept { value },
        })
    }

    /// Seed 002's "ZADD unless smaller" for a batch of `(score, member)`: adds new members and
    /// raises existing ones whose score is smaller, never lowering one (`ZADD GT CH`). Returns
    /// how many members were added or raised.
    pub async fn add_unless_smaller(
        &self,
        set: &str,
        entries: &[(i64, &[u8])],
    ) -> Result<u64, Error> {
        if entries.is_empty() || entries.len() > MAX_BATCH {
            return Err(Error::BadArgument(format!(
                "a batch has 1..={MAX_BATCH} entries, got {}",
                entries.len()
            )));
        }
        let key = self.keys(set)?.value;
        let mut cmd = redis::cmd("ZADD");
        cmd.arg(&key).arg("GT").arg("CH");
        for (score, member) in entries {
            cmd.arg(within("score", *score)?).arg(*member);
        }
        let op = Op::command("quota", "add_unless_smaller", "zadd_gt_ch");
        let reply = self.client.idempotent(op, &key, &cmd).await?;
        redis::from_redis_value(reply).map_err(|e| Error::BadReply {
            script: "ZADD",
            detail: e.to_string(),
        })
    }
}
