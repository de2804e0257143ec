//! Rate limits: fixed window, sliding log, sliding window counter, token bucket and GCRA, alone
//! or several at once, decided on the server's clock in one round trip.
//!
//! **Invariant.** No limit ever admits more than its algorithm permits (e.g. exactly 100 of 1000
//! concurrent requests against 100 per window), a refused request is charged to no limit, and a
//! request id repeated within its TTL is charged once.
//!
//! **Keys** (one hash tag per rate-limited identity, so every limit of a policy is in one slot):
//! `<ns>:rl:v1:{<h>}:<limit name>:<algorithm>` holds each limit's state and
//! `<ns>:rl:v1:{<h>}:req:<r>` an admitted request's recorded decision, where `<h>` is a SHA-256
//! digest of the identity (API keys never appear in key names) and `<r>` of the request id.
//!
//! **Mechanism.** Lua scripts (`rl_<algorithm>` for one limit, `rl_policy` for several or with a
//! request id): the check and the charge must not interleave, `INCR` + `EXPIRE` cannot refuse
//! without charging (seed 000 §7 charges rejected requests, node-rate-limiter-flexible #286), and
//! a union of single-limit
//! calls charges the limits that passed when another refuses (#280). Each script checks every
//! limit first and charges only when all admit (a check only reads, except that the sliding
//! log drops entries that already expired, which changes no decision). Time is the server's `TIME` in µs; all arithmetic
//! is on integers below 2^53 ([`Limit`] refuses sizes that would not be). Stored timestamps
//! decide; key TTLs only collect state that no longer matters.
//!
//! **Retry.** Without a request id a consume is `retry: unsafe`: after
//! [`Error::OutcomeUnknown`] the request may or may not have been charged, and it is not resent.
//! With one ([`RateLimiter::consume_with_id`]) the script records the admitted decision, a resend
//! replays it charging nothing, and the binding itself resends after an unknown outcome within
//! the client's [`crate::RetryPolicy`].
//!
//! **Not guaranteed.** Replication is asynchronous: a failover can lose recent charges, admitting
//! up to one more window's worth. A server clock stepping back is treated as standing still at the
//! latest time stored in a limit's state (no window reopens), except by the sliding log, whose
//! entries keep their own times.

mod decision;
mod limit;

pub use decision::{Decision, LimitStatus, Verdict};
pub use limit::{
    Algorithm, Limit, Policy, EXACT, MAX_LIMIT, MAX_LIMITS, MAX_LOG_LIMIT, MAX_NAME_LEN,
    MAX_PERIOD, MIN_PERIOD,
};

use crate::client::{Arg, Client};
use crate::keys::Keyspace;
use crate::reply::Reply;
use crate::script::registry::{
    RL_FIXED_WINDOW, RL_GCRA, RL_POLICY, RL_SLIDING_LOG, RL_SLIDING_WINDOW, RL_TOKEN_BUCKET,
};
use crate::script::ScriptDef;
use crate::Error;
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::{Duration, Instant};

const SCHEMA: u32 = 1;
/// Longest rate-limited identity accepted, in bytes (it is hashed into the key).
pub const MAX_KEY_LEN: usize = 1024;
/// Longest request id accepted, in bytes.
pub const MAX_REQUEST_ID_LEN: usize = 256;
/// Longest time a request id is remembered.
pub const MAX_REQUEST_TTL: Duration = Duration::from_secs(24 * 3600);

/// Rate limits under one keyspace: one [`Policy`] applied per identity (user, API key, IP).
#[derive(Clone, Debug)]
pub struct RateLimiter {
    client: Client,
    keys: Keyspace,
    policy: Arc<Policy>,
    /// The limits' script arguments (algorithm, limit, period_us, burst), encoded once.
    specs: Arc<[[String; 4]]>,
    request_ttl: Duration,
}

impl RateLimiter {
    /// A limiter applying `policy` (a [`Limit`] or a [`Policy`]). Request ids are remembered for
    /// the policy's longest period, at most [`MAX_REQUEST_TTL`].
    pub fn new(client: Client, keyspace: Keyspace, policy: impl Into<Policy>) -> Self {
        let policy = policy.into();
        let request_ttl = policy.longest_period().min(MAX_REQUEST_TTL);
        let specs = policy.limits().iter().map(spec).collect();
        RateLimiter {
            client,
            keys: keyspace,
            policy: Arc::new(policy),
            specs,
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

    /// The state key of each limit for `key` (for inspection and tests).
    pub fn state_keys(&self, key: &str) -> Result<Vec<String>, Error> {
        self.state_keys_of(&digest(key, MAX_KEY_LEN, "rate-limit key")?)
    }

    fn state_keys_of(&self, tag: &str) -> Result<Vec<String>, Error> {
        self.policy
            .limits()
            .iter()
            .map(|l| {
                self.keys
                    .key("rl", SCHEMA, tag, &[l.name(), l.algorithm().code()])
            })
            .collect()
    }

    async fn run(
        &self,
        key: &str,
        cost: u64,
        request_id: Option<&str>,
        now_us: Option<u64>,
    ) -> Result<Verdict, Error> {
        self.policy.check_cost(cost)?;
        let tag = digest(key, MAX_KEY_LEN, "rate-limit key")?;
        let request = match request_id {
            Some(id) => digest(id, MAX_REQUEST_ID_LEN, "request id")?,
            None => String::new(),
        };
        // The request key only for rl_policy: the single-limit scripts take none.
        let mut keys = Vec::with_capacity(self.policy.limits().len() + 1);
        if self.uses_policy_script(&request) {
            let id = if request.is_empty() { "-" } else { &request };
            keys.push(self.keys.key("rl", SCHEMA, &tag, &["req", id])?);
        }
        keys.extend(self.state_keys_of(&tag)?);
        let call = Call {
            cost: cost.to_string(),
            request,
            now: now_us.map(|n| n.to_string()).unwrap_or_default(),
            keys,
        };
        let retry = &self.client.config().retry;
        let started = Instant::now();
        let mut attempt = 1;
        loop {
            match self.send(&call).await {
                Err(e) if request_id.is_some() && e.is_outcome_unknown() => {
                    let backoff = retry.pause(attempt);
                    if attempt >= retry.max_attempts || started.elapsed() + backoff > retry.deadline
                    {
                        return Err(e);
                    }
                    tokio::time::sleep(backoff).await;
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    /// Whether a consume runs `rl_policy` (several limits, or a request id to record) rather than
    /// its one limit's own script.
    fn uses_policy_script(&self, request: &str) -> bool {
        self.policy.limits().len() > 1 || !request.is_empty()
    }

    /// One script call: the algorithm's own script for a single limit without a request id (one
    /// key, five arguments, no request record: the common case, kept lean), `rl_policy` for
    /// several limits or a request id.
    async fn send(&self, call: &Call) -> Result<Verdict, Error> {
        let limits = self.policy.limits();
        let specs = &self.specs;
        if !self.uses_policy_script(&call.request) {
            let script = single_script(limits[0].algorithm());
            let [_, limit_arg, period, burst] = &specs[0];
            let args = [
                Arg::from(call.cost.as_str()),
                limit_arg.as_str().into(),
                period.as_str().into(),
                burst.as_str().into(),
                call.now.as_str().into(),
            ];
            let value = self
                .client
                .invoke_def(script, &[call.keys[0].as_str()], &args)
                .await?;
            return Verdict::parse_single(&Reply::parse(script.name, value)?);
        }
        let keys: Vec<&str> = call.keys.iter().map(String::as_str).collect();
        let ttl_us = u64::try_from(self.request_ttl.as_micros()).unwrap_or(u64::MAX);
        let ttl_us = ttl_us.to_string();
        let mut args = vec![
            Arg::from(call.cost.as_str()),
            call.request.as_str().into(),
            ttl_us.as_str().into(),
            call.now.as_str().into(),
        ];
        args.extend(specs.iter().flatten().map(|s| Arg::from(s.as_str())));
        let value = self.client.invoke_def(&RL_POLICY.def, &keys, &args).await?;
        Verdict::parse(&Reply::parse(RL_POLICY.name, value)?, limits.len())
    }
}

/// One consume's script inputs: `keys` is the request key (rl_policy only) then the state keys.
struct Call {
    cost: String,
    request: String,
    now: String,
    keys: Vec<String>,
}

fn spec(l: &Limit) -> [String; 4] {
    [
        l.algorithm().code().to_string(),
        l.limit().to_string(),
        l.period_us().to_string(),
        l.burst().to_string(),
    ]
}

fn single_script(algorithm: Algorithm) -> &'static ScriptDef {
    match algorithm {
        Algorithm::FixedWindow => &RL_FIXED_WINDOW.def,
        Algorithm::SlidingLog => &RL_SLIDING_LOG.def,
        Algorithm::SlidingWindow => &RL_SLIDING_WINDOW.def,
        Algorithm::TokenBucket => &RL_TOKEN_BUCKET.def,
        Algorithm::Gcra => &RL_GCRA.def,
    }
}

/// 128 bits of SHA-256 in hex: user bytes never reach key names, and any identity fits one tag.
fn digest(value: &str, max: usize, what: &str) -> Result<String, Error> {
    if value.is_empty() || value.len() > max {
        return Err(Error::BadArgument(format!(
            "{what} must be 1..={max} bytes, got {}",
            value.len()
        )));
    }
    Ok(hex::encode(&Sha256::digest(value.as_bytes())[..16]))
}
