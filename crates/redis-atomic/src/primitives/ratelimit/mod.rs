//! Rate limits: fixed window, anchored window, sliding log, sliding window counter, token bucket
//! and GCRA, alone or several at once, decided on the server's clock in one round trip.
//!
//! **Invariant.** No limit ever admits more than its algorithm permits (e.g. exactly 100 of 1000
//! concurrent requests against 100 per window), a refused request is charged to no limit, and a
//! request id repeated within its TTL is charged once.
//!
//! **Keys** ([`RateLimitKeys`], from [`RateLimiter::keys`]; one hash tag per rate-limited
//! identity, so every limit of a policy is in one slot):
//! `<ns>:rl:v1:{<h>}:<limit name>:<algorithm>` holds each limit's state and
//! `<ns>:rl:v1:{<h>}:req:<p>:<r>` an admitted request's recorded decision, where `<h>` is a
//! SHA-256 digest of the identity (API keys never appear in key names), `<r>` of the request id
//! and `<p>` of the policy's limit keys: a record answers only the policy that wrote it (two
//! policies over one identity may see the same request id; each decides and records its own).
//! [`EntryLimiter`] decides many identities' limits at once under one hash tag:
//! `<ns>:rl:v1:{<t>}:<i>:<limit name>:<algorithm>` (`<t>` the tag's digest, `<i>` the
//! identity's), see [`entries`](EntryLimiter).
//!
//! **Shape.** A collection keyed per call (the first of the
//! [two constructor kinds](crate#primitives-two-constructor-kinds)):
//! [`RateLimiter::new`] takes a [`Keyspace`](crate::Keyspace) and, as a third argument, the
//! [`Policy`] it applies — a limiter is one policy over many identities, so the policy belongs to
//! it, not to a call; [`RateLimiter::with_request_ttl`] checks its setting; every consume names
//! its identity, and [`RateLimiter::keys`] shows an identity's keys. A refusal is a value
//! ([`Decision::Limited`] with a `retry_after`).
//!
//! **Mechanism** (rung: Lua script). `rl_<algorithm>` for one limit, `rl_policy` for several or
//! with a request id: the check and the charge must not interleave, `INCR` + `EXPIRE` cannot
//! refuse without charging (the usual recipe charges rejected requests, node-rate-limiter-flexible
//! #286), and a union of single-limit calls charges the limits that passed when another refuses
//! (#280). Each script checks every limit first and charges only when all admit (a check only
//! reads, except that the sliding log drops entries that already expired, which changes no
//! decision). Time is the server's `TIME` in µs; all arithmetic is on integers below 2^53
//! ([`Limit`] refuses sizes that would not be). Stored timestamps decide; key TTLs only collect
//! state that no longer matters — except for the anchored window, a plain counter whose key
//! expiry is its window (no `TIME`, no parsing: the cheapest script, at the classic `INCR` +
//! `EXPIRE`'s cost, but refusing without charging). Replies decode through the generated reply
//! types: the six single-limit ones share one conversion.
//!
//! **Retry.** Without a request id a consume is `retry: unsafe`: after
//! [`Error::OutcomeUnknown`] the request may or may not have been charged, and it is not resent.
//! With one ([`RateLimiter::consume_with_id`]) the script records the admitted decision and a
//! resend replays it charging nothing, so that call is made retry-safe (a per-call retry class):
//! the client's one retry loop resends it after an unknown outcome within its
//! [`crate::RetryPolicy`].
//!
//! **Not guaranteed.** Replication is asynchronous: a failover can lose recent charges, admitting
//! up to one more window's worth. A server clock stepping back is treated as standing still at the
//! latest time stored in a limit's state (no window reopens), except by the sliding log, whose
//! entries keep their own times, and the anchored window, whose window ends when the server's
//! clock says its key expired (a clock stepping forward closes it early).

mod decision;
mod entries;
mod limit;

pub use decision::{Decision, LimitStatus, Verdict};
pub use entries::{EntriesVerdict, Entry, EntryLimiter, EntryMode, EntryStatus, MAX_ENTRIES};
pub use limit::{
    Algorithm, Limit, Policy, EXACT, MAX_LIMIT, MAX_LIMITS, MAX_LOG_LIMIT, MAX_NAME_LEN,
    MAX_PERIOD, MIN_PERIOD,
};

use crate::client::{Arg, Client};
use crate::keys::{digest, Keyspace};
use crate::script::registry::{
    RL_ANCHORED_WINDOW, RL_FIXED_WINDOW, RL_GCRA, RL_POLICY, RL_SLIDING_LOG, RL_SLIDING_WINDOW,
    RL_TOKEN_BUCKET,
};
use crate::script::{RetryClass, Script};
use crate::Error;
use decision::SingleReply;
use std::sync::Arc;
use std::time::Duration;

const SCHEMA: u32 = 1;
/// Longest rate-limited identity accepted, in bytes (it is hashed into the key).
pub const MAX_KEY_LEN: usize = 1024;
/// Longest request id accepted, in bytes.
pub const MAX_REQUEST_ID_LEN: usize = 256;
/// Longest time a request id is remembered.
pub const MAX_REQUEST_TTL: Duration = Duration::from_secs(24 * 3600);

/// The keys one consume for an identity uses (one `{<h>}` hash tag, so one slot). `<h>` is 128
/// bits of SHA-256 of the identity in hex, `<r>` the same of the request id.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RateLimitKeys {
    /// `<ns>:rl:v1:{<h>}:req:<p>:<r>`: an admitted request's recorded decision (`<p>`: the
    /// policy's digest, so another policy's record of the same id is never replayed),
    /// `"<expires_at>|<remaining>|<reset_at>|<remaining_1>,<reset_at_1>|..."` (absolute server
    /// µs), kept for the request TTL. `Some` exactly when a request id is given, which makes the
    /// consume run `rl_policy`.
    pub request: Option<String>,
    /// `<ns>:rl:v1:{<h>}:<limit name>:<algorithm>`, in the policy's order: each limit's state,
    /// `"<window_start>:<count>"` (fixed window), a sorted set of admitted units scored by server
    /// µs (sliding log), `"<window_start>:<prev>:<curr>"` (sliding window),
    /// `"<tokens>:<refilled_at>"` (token bucket) or the theoretical arrival time (GCRA).
    pub limits: Vec<String>,
}

/// Rate limits under one keyspace: one [`Policy`] applied per identity (user, API key, IP).
#[derive(Clone, Debug)]
pub struct RateLimiter {
    client: Client,
    keyspace: Keyspace,
    policy: Arc<Policy>,
    /// The limits' script arguments (algorithm, limit, period_us, burst), encoded once.
    specs: Arc<[[String; 4]]>,
    /// The digest of the policy's limit keys (`name:algorithm` each), scoping request records.
    scope: Arc<str>,
    request_ttl: Duration,
}

impl RateLimiter {
    /// A limiter applying `policy` (a [`Limit`] or a [`Policy`]). Request ids are remembered for
    /// the policy's longest period, at most [`MAX_REQUEST_TTL`].
    pub fn new(client: Client, keyspace: Keyspace, policy: impl Into<Policy>) -> Self {
        let policy = policy.into();
        let request_ttl = policy.longest_period().min(MAX_REQUEST_TTL);
        let specs = policy.limits().iter().map(spec).collect();
        let names = policy
            .limits()
            .iter()
            .map(|l| format!("{}:{}", l.name(), l.algorithm().code()));
        let scope = scope_of(names).into();
        RateLimiter {
            client,
            keyspace,
            policy: Arc::new(policy),
            specs,
            scope,
            request_ttl,
        }
    }

    /// With request ids remembered for `ttl` (1 ms ..= 24 h).
    pub fn with_request_ttl(mut self, ttl: Duration) -> Result<Self, Error> {
        if ttl < Duration::from_millis(1) || ttl > MAX_REQUEST_TTL {
            return Err(Error::BadArgument(format!(
                "request ttl must be between 1 ms and 24 h, got {ttl:?}"
            )));
        }
        self.request_ttl = ttl;
        Ok(self)
    }

    /// The policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// How long request ids are remembered.
    pub fn request_ttl(&self) -> Duration {
        self.request_ttl
    }

    /// Charges `cost` units to every limit of `key`'s policy, or to none.
    pub async fn consume(&self, key: &str, cost: u64) -> Result<Decision, Error> {
        Ok(self.consume_detailed(key, cost, None).await?.decision)
    }

    /// Like [`RateLimiter::consume`], retry-safe: the same `request_id` within the request TTL
    /// gets the first admission's decision back and is charged once. Resent by itself after
    /// [`Error::OutcomeUnknown`]; if that error still comes back, resend the same id.
    pub async fn consume_with_id(
        &self,
        key: &str,
        cost: u64,
        request_id: &str,
    ) -> Result<Decision, Error> {
        Ok(self
            .consume_detailed(key, cost, Some(request_id))
            .await?
            .decision)
    }

    /// The decision with each limit's status (for `RateLimit` headers).
    pub async fn consume_detailed(
        &self,
        key: &str,
        cost: u64,
        request_id: Option<&str>,
    ) -> Result<Verdict, Error> {
        self.run(key, cost, request_id, None).await
    }

    /// Like [`RateLimiter::consume_detailed`] at a given "now" (µs since the epoch) instead of the
    /// server's clock: for deterministic tests only, behind the non-default `test-clock` feature.
    #[cfg(feature = "test-clock")]
    pub async fn consume_at(
        &self,
        key: &str,
        cost: u64,
        request_id: Option<&str>,
        now_us: u64,
    ) -> Result<Verdict, Error> {
        self.run(key, cost, request_id, Some(now_us)).await
    }

    /// The keys a consume for `identity` (with `request_id`, if any) uses.
    ///
    /// ```
    /// # fn demo(client: redis_atomic::Client) -> Result<(), redis_atomic::Error> {
    /// use redis_atomic::ratelimit::{Limit, RateLimiter};
    /// let limit = Limit::gcra(10, std::time::Duration::from_secs(1))?;
    /// let limiter = RateLimiter::new(client, redis_atomic::Keyspace::new("app")?, limit);
    /// let keys = limiter.keys("api-key-1", Some("req-1"))?;
    /// let state = &keys.limits[0]; // the one limit, named after its algorithm
    /// assert!(state.starts_with("app:rl:v1:{") && state.ends_with("}:gcra:gcra"));
    /// assert!(keys.request.is_some() && limiter.keys("api-key-1", None)?.request.is_none());
    /// # Ok(()) }
    /// ```
    pub fn keys(&self, identity: &str, request_id: Option<&str>) -> Result<RateLimitKeys, Error> {
        self.target(identity, request_id).map(|t| t.keys)
    }

    /// What a consume sends besides cost and clock: its keys and the request id's digest. The
    /// one place the key layout is built, for [`RateLimiter::run`] and [`RateLimiter::keys`].
    fn target(&self, identity: &str, request_id: Option<&str>) -> Result<Target, Error> {
        let tag = digest(identity, MAX_KEY_LEN, "rate-limit key")?;
        let request = request_id
            .map(|id| digest(id, MAX_REQUEST_ID_LEN, "request id"))
            .transpose()?;
        let limits = self
            .policy
            .limits()
            .iter()
            .map(|l| {
                self.keyspace
                    .key("rl", SCHEMA, &tag, &[l.name(), l.algorithm().code()])
            })
            .collect::<Result<Vec<_>, _>>()?;
        // rl_policy's KEYS[1]: the request's record, or, for several limits without a request
        // id, `req:-`, a key of the same slot it never touches. The single-limit scripts take
        // none.
        let first = match (&request, self.uses_policy_script(request.is_some())) {
            (Some(r), _) => {
                Some(
                    self.keyspace
                        .key("rl", SCHEMA, &tag, &["req", &self.scope, r])?,
                )
            }
            (None, true) => Some(self.keyspace.key("rl", SCHEMA, &tag, &["req", "-"])?),
            (None, false) => None,
        };
        Ok(Target {
            keys: RateLimitKeys {
                request: first.clone().filter(|_| request.is_some()),
                limits,
            },
            first,
            request: request.unwrap_or_default(),
        })
    }

    async fn run(
        &self,
        identity: &str,
        cost: u64,
        request_id: Option<&str>,
        now_us: Option<u64>,
    ) -> Result<Verdict, Error> {
        self.policy.check_cost(cost)?;
        if now_us.is_some() {
            self.check_test_clock()?;
        }
        let target = self.target(identity, request_id)?;
        let cost = cost.to_string();
        let now = now_us.map(|n| n.to_string()).unwrap_or_default();
        let Some(first) = &target.first else {
            let key = target.keys.limits[0].as_str();
            return match self.policy.limits()[0].algorithm() {
                Algorithm::FixedWindow => self.single(&RL_FIXED_WINDOW, key, &cost, &now).await,
                Algorithm::AnchoredWindow => self.anchored(key, &cost).await,
                Algorithm::SlidingLog => self.single(&RL_SLIDING_LOG, key, &cost, &now).await,
                Algorithm::SlidingWindow => self.single(&RL_SLIDING_WINDOW, key, &cost, &now).await,
                Algorithm::TokenBucket => self.single(&RL_TOKEN_BUCKET, key, &cost, &now).await,
                Algorithm::Gcra => self.single(&RL_GCRA, key, &cost, &now).await,
            };
        };
        let mut keys = Vec::with_capacity(target.keys.limits.len() + 1);
        keys.push(first.as_str());
        keys.extend(target.keys.limits.iter().map(String::as_str));
        let ttl_us = u64::try_from(self.request_ttl.as_micros()).unwrap_or(u64::MAX);
        let ttl_us = ttl_us.to_string();
        let mut args = vec![
            Arg::from(cost.as_str()),
            target.request.as_str().into(),
            ttl_us.as_str().into(),
            now.as_str().into(),
        ];
        args.extend(self.specs.iter().flatten().map(Arg::from));
        // A request id makes the call safe to resend: a repeat replays the recorded decision.
        let reply = if target.request.is_empty() {
            self.client.call(&RL_POLICY, &keys, &args).await?
        } else {
            let safe = RetryClass::Safe;
            self.client.call_as(&RL_POLICY, &keys, &args, safe).await?
        };
        Verdict::of_policy(reply, self.policy.limits().len())
    }

    /// A test clock drives every limit or none: refused up front when one limit runs on its
    /// key's expiry (the scripts refuse it too, for callers that bypass this type).
    fn check_test_clock(&self) -> Result<(), Error> {
        match self
            .policy
            .limits()
            .iter()
            .find(|l| !l.algorithm().takes_test_clock())
        {
            Some(l) => Err(Error::BadArgument(format!(
                "limit {:?} ({}) runs on key expiry: no test clock can drive it",
                l.name(),
                l.algorithm()
            ))),
            None => Ok(()),
        }
    }

    /// Whether a consume runs `rl_policy` (several limits, or a request id to record) rather than
    /// its one limit's own script.
    fn uses_policy_script(&self, with_request_id: bool) -> bool {
        self.policy.limits().len() > 1 || with_request_id
    }

    /// The one limit's own script (one key, five arguments, no request record: the common case,
    /// kept lean); the five share one reply shape and this one call.
    async fn single<R: SingleReply>(
        &self,
        script: &'static Script<1, 5, R>,
        key: &str,
        cost: &str,
        now: &str,
    ) -> Result<Verdict, Error> {
        let [_, limit, period, burst] = &self.specs[0];
        let args = [
            cost.into(),
            limit.into(),
            period.into(),
            burst.into(),
            now.into(),
        ];
        Ok(self.client.call(script, [key], args).await?.verdict())
    }

    /// The anchored window's own script: no clock argument (it reads none) and its period in
    /// whole ms, as `PEXPIRE` takes it, so the script formats no number.
    async fn anchored(&self, key: &str, cost: &str) -> Result<Verdict, Error> {
        let ms = self.policy.limits()[0].period_ms().to_string();
        let args = [
            cost.into(),
            self.specs[0][1].as_str().into(),
            ms.as_str().into(),
        ];
        Ok(self
            .client
            .call(&RL_ANCHORED_WINDOW, [key], args)
            .await?
            .verdict())
    }
}

/// One consume's keys and request argument (see [`RateLimiter::target`]).
struct Target {
    keys: RateLimitKeys,
    /// `KEYS[1]` of `rl_policy`; `None` when the limit's own script runs.
    first: Option<String>,
    /// `ARGV[2]` of `rl_policy`: the request id's digest, empty without one.
    request: String,
}

/// 128 bits of SHA-256, in hex, of `parts` joined by `|`: the scope of a request record (the
/// limits that wrote it).
pub(crate) fn scope_of(parts: impl Iterator<Item = String>) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for (i, p) in parts.enumerate() {
        if i > 0 {
            h.update(b"|");
        }
        h.update(p.as_bytes());
    }
    hex::encode(&h.finalize()[..16])
}

pub(crate) fn spec(l: &Limit) -> [String; 4] {
    [
        l.algorithm().code().to_string(),
        l.limit().to_string(),
        l.period_us().to_string(),
        l.burst().to_string(),
    ]
}
