//! Idempotency keys: each request's side effect happens once, however often it is sent.
//!
//! **Invariant.** At most one live claim per idempotency key; a claim's result, once stored, is
//! what every later duplicate gets, and no superseded executor can overwrite or extend it.
//!
//! **Keys** ([`IdempotencyKeys`], from [`Idempotency::keys`]). One Redis string per idempotency
//! key: `<ns>:idem:v1:{<digest>}`, where the digest is SHA-256 of (scope, key), so user-supplied
//! bytes never reach key names, every record is in one slot by construction, and tenants cannot
//! collide. The string packs state, fence (the claim's generation), owner token, request
//! fingerprint, lease end (server ms) and the stored response: one string stays compact where a
//! hash with a large field would leave listpack encoding.
//!
//! **Mechanism.** Lua scripts (`idem_begin`, `idem_extend`, `idem_complete`): the decision
//! between claim, wait, replay and mismatch reads the record and writes it in one step, on the
//! server's clock. A layout of a lock key plus a result key, completed by an unconditional write,
//! lets a stale executor overwrite a newer result; the AWS Powertools store decides on the client
//! and has run requests twice. Here the claim carries a token and a fence, and every write checks
//! both.
//!
//! **Shape.** The lease shape every lease-like primitive shares ([`crate::lease`]), as a
//! collection keyed per call ([`Idempotency::new`] with a [`Keyspace`], settings through
//! [`Idempotency::with_config`], [`Idempotency::keys`] per (scope, key)): `begin` →
//! [`Begin::Claimed`] with a [`Claim`] (`fence()`, `token()`, `ttl()`, `expires_by()`,
//! `extend(ttl)`, then `complete()` or `fail()`, which consume it) or [`Begin::InProgress`] with a
//! `retry_after`. [`Idempotency::extend`], [`Idempotency::complete`] and [`Idempotency::fail`] do
//! the same by parts (scope, key, token, fence) for callers without a handle.
//!
//! **Fences.** Every claim issues one by [the one rule](crate::lease#fences), per idempotency key.
//!
//! **Takeover.** A claim whose lease ran out (server time) is taken over by the next `begin` with
//! the same fingerprint: its fence increases, and the old executor's later `complete`, `fail`
//! ([`Outcome::Lost`]) or `extend` ([`Extend::Lost`]) changes nothing.
//!
//! **Retry.** All scripts are `retry: safe`. `begin` with the same caller token while its claim is
//! live returns the same fence; `complete`/`fail` repeated with the same token and fence answer
//! [`Outcome::Stored`] again. So after [`Error::OutcomeUnknown`], repeat the same call: `begin`
//! through [`Idempotency::begin_with_token`] with the token of the lost call, an end of a
//! [`Claim`] by parts with the token and fence read before.
//!
//! **Not guaranteed.** Idempotency covers what the executor does between `begin` and `complete`
//! only as well as that work is itself fenced or idempotent: if an executor is paused past its
//! lease and the claim is taken over, both may perform the side effect (the stale one learns it
//! lost only at `complete`). Pass [`Claim::fence`] to the downstream store, or keep leases long
//! and extend them. After a failover, a record acknowledged by the old primary but not replicated
//! is gone: a duplicate then runs again.

mod claim;
mod record;
mod response;
mod types;

pub use claim::Claim;
use record::End;
pub use response::{Body, Response};
pub use types::{
    Begin, Failure, Fingerprint, IdempotencyConfig, IdempotencyKeys, Outcome, Stored, MAX_KEY_LEN,
    MAX_RESULT_TTL, MAX_TTL,
};

use crate::client::{Arg, Client};
use crate::keys::Keyspace;
use crate::lease::{millis, Extend, Fence, Held, OwnerToken};
use crate::script::registry::{IdemBeginOutcome, IdemBeginReply, IDEM_BEGIN};
use crate::Error;
use std::time::{Duration, Instant};

const SCHEMA: u32 = 1;

/// Idempotency records under one keyspace.
#[derive(Clone, Debug)]
pub struct Idempotency {
    client: Client,
    keyspace: Keyspace,
    config: IdempotencyConfig,
}

impl Idempotency {
    /// A store under `keyspace` with the default [`IdempotencyConfig`].
    pub fn new(client: Client, keyspace: Keyspace) -> Self {
        Idempotency {
            client,
            keyspace,
            config: IdempotencyConfig::default(),
        }
    }

    /// With these settings (claim ttl and result ttl checked against [`MAX_TTL`] and
    /// [`MAX_RESULT_TTL`]).
    ///
    /// ```
    /// # fn demo(client: redis_atomic::Client) -> Result<(), redis_atomic::Error> {
    /// use redis_atomic::idempotency::{Idempotency, IdempotencyConfig};
    /// use std::time::Duration;
    /// let config = IdempotencyConfig::default().ttl(Duration::from_secs(10));
    /// let store = Idempotency::new(client, redis_atomic::Keyspace::new("app")?).with_config(config)?;
    /// assert_eq!(store.config().ttl, Duration::from_secs(10));
    /// # Ok(()) }
    /// ```
    pub fn with_config(mut self, config: IdempotencyConfig) -> Result<Self, Error> {
        config.validate()?;
        self.config = config;
        Ok(self)
    }

    /// The settings.
    pub fn config(&self) -> &IdempotencyConfig {
        &self.config
    }

    /// The keys of (`scope`, `key`): each 1..=[`MAX_KEY_LEN`] bytes.
    ///
    /// ```
    /// # fn demo(client: redis_atomic::Client) -> Result<(), redis_atomic::Error> {
    /// use redis_atomic::idempotency::Idempotency;
    /// let store = Idempotency::new(client, redis_atomic::Keyspace::new("app")?);
    /// assert!(store.keys("tenant-1", b"key-from-client")?.record.starts_with("app:idem:v1:{"));
    /// # Ok(()) }
    /// ```
    pub fn keys(&self, scope: &str, key: &[u8]) -> Result<IdempotencyKeys, Error> {
        for (what, v) in [("scope", scope.as_bytes()), ("idempotency key", key)] {
            if v.is_empty() || v.len() > MAX_KEY_LEN {
                return Err(Error::BadArgument(format!(
                    "{what} must be 1..={MAX_KEY_LEN} bytes, got {}",
                    v.len()
                )));
            }
        }
        let digest = Fingerprint::of(&[scope.as_bytes(), key]).hex();
        Ok(IdempotencyKeys {
            record: self.keyspace.key("idem", SCHEMA, &digest, &[])?,
        })
    }

    /// Claims (`scope`, `key`) for a request with `fp`, with a fresh random owner token.
    pub async fn begin(&self, scope: &str, key: &[u8], fp: Fingerprint) -> Result<Begin, Error> {
        // The caller never saw the token: a resend would find its own claim in progress.
        self.begin_with_token(scope, key, fp, &OwnerToken::random())
            .await
            .map_err(|e| e.retry_safe_if(false))
    }

    /// Like [`Idempotency::begin`] with the caller's token: repeating it after an unknown outcome
    /// returns the same claim (same fence, lease reset).
    pub async fn begin_with_token(
        &self,
        scope: &str,
        key: &[u8],
        fp: Fingerprint,
        token: &OwnerToken,
    ) -> Result<Begin, Error> {
        let keys = self.keys(scope, key)?;
        let ttl = self.config.ttl;
        let ttl_ms = millis("ttl", ttl, MAX_TTL)?;
        let result_ttl_ms = millis("result_ttl", self.config.result_ttl, MAX_RESULT_TTL)?;
        let fp_hex = fp.hex();
        let args = [
            token.as_str().into(),
            fp_hex.as_str().into(),
            Arg::Int(ttl_ms),
            Arg::Int(result_ttl_ms),
        ];
        let sent = Instant::now();
        let reply = self.client.call(&IDEM_BEGIN, [&keys.record], args).await?;
        Ok(match reply {
            IdemBeginReply::Claimed {
                fence, takeover, ..
            } => Begin::Claimed(Claim::new(
                self.clone(),
                keys,
                Held::new(token.clone(), fence, sent, ttl),
                takeover,
            )),
            IdemBeginReply::InProgress { retry_after } => Begin::InProgress { retry_after },
            IdemBeginReply::Replay { outcome, payload } => {
                let response = Response::decode(&payload)?;
                Begin::Replay(match outcome {
                    IdemBeginOutcome::Completed => Stored::Completed(response),
                    IdemBeginOutcome::Failed => Stored::Failed(response),
                })
            }
            IdemBeginReply::Mismatch => Begin::Mismatch,
        })
    }

    /// Sets the lease of the claim `token` holds on (`scope`, `key`) with `fence` to end `ttl`
    /// from the server's now (absolute, never added): the by-parts twin of [`Claim::extend`].
    pub async fn extend(
        &self,
        scope: &str,
        key: &[u8],
        token: &OwnerToken,
        fence: Fence,
        ttl: Duration,
    ) -> Result<Extend, Error> {
        let keys = self.keys(scope, key)?;
        self.extend_record(&keys, token, fence, ttl).await
    }

    /// Stores `response` for replay as the result of the claim `token` holds on (`scope`, `key`)
    /// with `fence`: the by-parts twin of [`Claim::complete`]. Repeating it is safe.
    pub async fn complete(
        &self,
        scope: &str,
        key: &[u8],
        token: &OwnerToken,
        fence: Fence,
        response: &Response,
    ) -> Result<Outcome, Error> {
        let keys = self.keys(scope, key)?;
        self.finish(&keys, token, fence, End::Completed(response))
            .await
    }

    /// Ends the claim `token` holds on (`scope`, `key`) with `fence` with a failure (the by-parts
    /// twin of [`Claim::fail`]): [`Failure::Retryable`] frees the key, [`Failure::Final`] stores
    /// the response for replay.
    pub async fn fail(
        &self,
        scope: &str,
        key: &[u8],
        token: &OwnerToken,
        fence: Fence,
        failure: &Failure,
    ) -> Result<Outcome, Error> {
        let keys = self.keys(scope, key)?;
        self.finish(&keys, token, fence, End::Failed(failure)).await
    }
}
