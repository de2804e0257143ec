//! Quotas and counters, each on the weakest mechanism (rung) that keeps its invariant.
//!
//! **Invariants.** A bounded counter never leaves its `[min, max]` (a refund never takes it below
//! zero); a counter's TTL, once set, is never extended by later writes; a TTL extension only ever
//! moves expiry later; a monotonic max never decreases; a batch "ZADD unless smaller" never
//! lowers a score.
//!
//! **Keys** ([`QuotaKeys`], from [`Quotas::keys`]). One key per counter or set:
//! `<ns>:quota:v1:{<name>}` (the name is the hash tag; names are the application's own, not
//! secrets, so they stay readable), and per request id of [`Quotas::add_with_id`] a record
//! `<ns>:quota:v1:{<name>}:req:<r>` in the same slot (`<r>`: 128 bits of SHA-256 of the id).
//!
//! **Shape.** A collection keyed per call (the first of the
//! [two constructor kinds](crate#primitives-two-constructor-kinds)): [`Quotas::new`]
//! with a [`Keyspace`](crate::Keyspace), [`Quotas::with_request_ttl`] checked, every call naming
//! its counter, [`Quotas::keys`] per counter (and request id). A refused add is a value
//! ([`Bounded::Refused`]).
//!
//! **Rungs, and why.**
//! * [`Quotas::add`] / [`Quotas::add_clamped`]: a Lua script (`quota_add`). `INCRBY` cannot refuse
//!   to pass a bound, and `INCRBY` + compensating `DECRBY` lets others see and act on the
//!   overshoot. Inside it, `PEXPIRE NX` sets the TTL on the first write only: with `INCR` +
//!   `EXPIRE` every write pushes expiry back, and a busy counter never resets.
//! * [`Quotas::expire_once`]: one command with an option, `PEXPIRE key ttl NX`.
//! * [`Quotas::extend_ttl`]: one command with an option, `PEXPIRE key ttl GT` (a key without a
//!   TTL counts as infinite, so it is left alone).
//! * [`Quotas::raise`]: a Lua script (`quota_max`): no command keeps the max of a string, and a
//!   `GETSET` loop writes smaller values for a moment and needs a client retry loop.
//! * [`Quotas::add_unless_smaller`]: one command with an option, `ZADD key GT CH s m ...`: the
//!   usual "ZADD unless smaller" Lua loop is exactly what `GT` does natively since Redis 6.2.
//!
//! **Retry.** `add` is `retry: unsafe` (a resend adds twice): after [`Error::OutcomeUnknown`] the
//! caller cannot tell whether it was charged. [`Quotas::add_with_id`] (and
//! [`Quotas::add_clamped_with_id`]) is the same add with a request id (`quota_add_id`, `retry:
//! safe`): the first run records its answer (applied or refused, and the value) for the request
//! TTL ([`Quotas::with_request_ttl`], 1 h by default); a repeat of the id returns that answer and
//! adds nothing, so the client's one retry loop resends it after a lost reply, and a caller that
//! still gets `OutcomeUnknown` resends the same id. After the record expires the id is new again.
//! Everything else is idempotent and resent within the client's [`crate::RetryPolicy`]: `raise`
//! as a `retry: safe` script, and the commands (`GET`, `PEXPIRE NX|GT`, `ZADD GT CH`) on the client's one call path
//! for idempotent commands, observed like scripts (ops `get`, `expire_once`, `extend_ttl`,
//! `add_unless_smaller`; commands `get`, `pexpire_nx`, `pexpire_gt`, `zadd_gt_ch`).
//!
//! **Not guaranteed.** Values are integers of at most 53 bits (exact in Lua and as sorted-set
//! scores); larger ones are refused. Replication is asynchronous: a failover may lose the latest
//! writes.

use crate::client::{Arg, Client};
use crate::keys::{digest, Keyspace};
use crate::lease::millis;
use crate::observe::Op;
use crate::script::registry::{
    QuotaAddIdReply, QuotaAddReply, QuotaMaxReply, QUOTA_ADD, QUOTA_ADD_ID, QUOTA_MAX,
};
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
/// Longest request id of [`Quotas::add_with_id`], in bytes (it is hashed into the record's key).
pub const MAX_REQUEST_ID_LEN: usize = 256;
/// Shortest request TTL ([`Quotas::with_request_ttl`]).
pub const MIN_REQUEST_TTL: Duration = Duration::from_secs(1);
/// Longest request TTL ([`Quotas::with_request_ttl`]).
pub const MAX_REQUEST_TTL: Duration = Duration::from_secs(24 * 3600);
/// The request TTL of new [`Quotas`]: one hour.
pub const DEFAULT_REQUEST_TTL: Duration = Duration::from_secs(3600);

/// The key of one counter or set.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct QuotaKeys {
    /// `<ns>:quota:v1:{<name>}`: the counter (an integer string, with the TTL the first add
    /// set, if any) or, for [`Quotas::add_unless_smaller`], the sorted set.
    pub value: String,
    /// `<ns>:quota:v1:{<name>}:req:<r>`: the first answer of [`Quotas::add_with_id`] for one
    /// request id, `"a:<value>"` (applied) or `"r:<value>"` (refused), kept for the request TTL.
    /// `Some` exactly when a request id is given.
    pub request: Option<String>,
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
    request_ttl: Duration,
}

impl Quotas {
    /// Quotas whose keys live under `keyspace`.
    pub fn new(client: Client, keyspace: Keyspace) -> Self {
        Quotas {
            client,
            keyspace,
            request_ttl: DEFAULT_REQUEST_TTL,
        }
    }

    /// With request ids remembered for `ttl` ([`MIN_REQUEST_TTL`]..=[`MAX_REQUEST_TTL`]): how
    /// long a repeat of an id returns the first answer. Keep it longer than any caller may keep
    /// resending one request; each remembered id costs one small key.
    pub fn with_request_ttl(mut self, ttl: Duration) -> Result<Self, Error> {
        if !(MIN_REQUEST_TTL..=MAX_REQUEST_TTL).contains(&ttl) {
            return Err(Error::BadArgument(format!(
                "request ttl must be 1 s ..= 1 day, got {ttl:?}"
            )));
        }
        self.request_ttl = ttl;
        Ok(self)
    }

    /// How long a request id is remembered.
    pub fn request_ttl(&self) -> Duration {
        self.request_ttl
    }

    /// The keys of counter (or set) `name`, and of `request_id`'s record, if given.
    ///
    /// ```
    /// # fn demo(client: redis_atomic::Client) -> Result<(), redis_atomic::Error> {
    /// let quotas = redis_atomic::quota::Quotas::new(client, redis_atomic::Keyspace::new("app")?);
    /// assert_eq!(quotas.keys("api-calls", None)?.value, "app:quota:v1:{api-calls}");
    /// let record = quotas.keys("api-calls", Some("req-1"))?.request.unwrap();
    /// assert!(record.starts_with("app:quota:v1:{api-calls}:req:"));
    /// # Ok(()) }
    /// ```
    pub fn keys(&self, name: &str, request_id: Option<&str>) -> Result<QuotaKeys, Error> {
        let request = request_id
            .map(|id| {
                let r = digest(id, MAX_REQUEST_ID_LEN, "request id")?;
                self.keyspace.key("quota", SCHEMA, name, &["req", &r])
            })
            .transpose()?;
        Ok(QuotaKeys {
            value: self.keyspace.key("quota", SCHEMA, name, &[])?,
            request,
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
        self.add_mode(name, delta, bounds, ttl, "refuse", None)
            .await
    }

    /// [`Quotas::add`], retry-safe: the first call with `request_id` (1..=[`MAX_REQUEST_ID_LEN`]
    /// bytes) decides and records its answer; a repeat within the request TTL returns that answer
    /// (applied or refused, with the value then) and adds nothing. Resent by the client after a
    /// lost reply; if [`Error::OutcomeUnknown`] still comes back, resend the same id.
    pub async fn add_with_id(
        &self,
        name: &str,
        delta: i64,
        bounds: Bounds,
        ttl: Option<Duration>,
        request_id: &str,
    ) -> Result<Bounded, Error> {
        let id = Some(request_id);
        self.add_mode(name, delta, bounds, ttl, "refuse", id).await
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
        self.add_mode(name, delta, bounds, ttl, "clamp", None).await
    }

    /// [`Quotas::add_clamped`], retry-safe with `request_id` as in [`Quotas::add_with_id`].
    pub async fn add_clamped_with_id(
        &self,
        name: &str,
        delta: i64,
        bounds: Bounds,
        ttl: Option<Duration>,
        request_id: &str,
    ) -> Result<Bounded, Error> {
        let id = Some(request_id);
        self.add_mode(name, delta, bounds, ttl, "clamp", id).await
    }

    async fn add_mode(
        &self,
        name: &str,
        delta: i64,
        bounds: Bounds,
        ttl: Option<Duration>,
        mode: &str,
        request_id: Option<&str>,
    ) -> Result<Bounded, Error> {
        within("delta", delta)?;
        let ttl_ms = match ttl {
            Some(t) => millis("ttl", t, MAX_TTL)?,
            None => 0,
        };
        let keys = self.keys(name, request_id)?;
        let (min, max) = (Arg::Int(bounds.min), Arg::Int(bounds.max));
        let Some(request) = &keys.request else {
            let args = [Arg::Int(delta), min, max, mode.into(), Arg::Int(ttl_ms)];
            return Ok(
                match self.client.call(&QUOTA_ADD, [&keys.value], args).await? {
                    QuotaAddReply::Applied { value } => Bounded::Applied { value },
                    QuotaAddReply::Refused { value } => Bounded::Refused { value },
                },
            );
        };
        let request_ms = Arg::Int(millis("request ttl", self.request_ttl, MAX_REQUEST_TTL)?);
        let args = [
            Arg::Int(delta),
            min,
            max,
            mode.into(),
            Arg::Int(ttl_ms),
            request_ms,
        ];
        let keys = [keys.value.as_str(), request.as_str()];
        Ok(match self.client.call(&QUOTA_ADD_ID, keys, args).await? {
            QuotaAddIdReply::Applied { value } => Bounded::Applied { value },
            QuotaAddIdReply::Refused { value } => Bounded::Refused { value },
        })
    }

    /// The counter's value (0 when absent).
    pub async fn get(&self, name: &str) -> Result<i64, Error> {
        let key = self.keys(name, None)?.value;
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
        let key = self.keys(name, None)?.value;
        let mut cmd = redis::cmd("PEXPIRE");
        cmd.arg(&key).arg(ttl_ms).arg(option);
        let reply = self.client.idempotent(op, &key, &cmd).await?;
        Ok(matches!(reply, Value::Int(1)))
    }

    /// Raises the value to `candidate` unless it already holds at least that (monotonic max).
    pub async fn raise(&self, name: &str, candidate: i64) -> Result<Raise, Error> {
        within("candidate", candidate)?;
        let keys = self.keys(name, None)?;
        let args = [Arg::Int(candidate)];
        let reply = self.client.call(&QUOTA_MAX, [&keys.value], args).await?;
        Ok(match reply {
            QuotaMaxReply::Raised { value } => Raise::Raised { value },
            QuotaMaxReply::Kept { value } => Raise::Kept { value },
        })
    }

    /// "ZADD unless smaller" for a batch of `(score, member)`: adds new members and
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
        let key = self.keys(set, None)?.value;
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
