//! Idempotency keys: each request's side effect happens once, however often it is sent.
//!
//! **Invariant.** At most one live claim per idempotency key; a claim's result, once stored, is
//! what every later duplicate gets, and no superseded executor can overwrite or extend it.
//!
//! **Keys** ([`IdemKeys`]). One Redis string per idempotency key: `<ns>:idem:v1:{<digest>}`,
//! where the digest is SHA-256 of (scope, key), so user-supplied bytes never reach key names,
//! every record is in one slot by construction, and tenants cannot collide. The string packs
//! state, fence (the claim's generation), owner token, request fingerprint, lease end (server ms)
//! and the stored response: one string stays compact where a hash with a large field would leave
//! listpack encoding.
//!
//! **Mechanism.** Lua scripts (`idem_begin`, `idem_heartbeat`, `idem_complete`): the decision
//! between claim, wait, replay and mismatch reads the record and writes it in one step, on the
//! server's clock. Seed 001's layout (a lock key plus a result key, completed by an unconditional
//! write) lets a stale executor overwrite a newer result; the AWS Powertools store decides on the
//! client and has run requests twice. Here the claim carries a token and a fence, and every
//! write checks both.
//!
//! **Shape.** The lease shape every lease-like primitive shares ([`crate::lease`]): `begin` →
//! [`Begin::Claimed`] with a [`Claim`] (`fence()`, `token()`, `expires_by()`, `extend(ttl)`,
//! `complete()`, `fail()`) or [`Begin::InProgress`] with a `retry_after`.
//! [`Idempotency::extend`], [`Idempotency::complete`] and [`Idempotency::fail`] do the same by
//! parts (scope, key, token, fence) for callers without a handle.
//!
//! **Takeover.** A claim whose lease ran out (server time) is taken over by the next `begin` with
//! the same fingerprint: its fence increases, and the old executor's later `complete`, `fail`
//! ([`Outcome::Lost`]) or `extend` ([`Extend::Lost`]) changes nothing.
//!
//! **Retry.** All scripts are `retry: safe`. `begin` with the same caller token while its claim is
//! live returns the same fence; `complete`/`fail` repeated with the same token and fence answer
//! [`Outcome::Stored`] again. So after [`Error::OutcomeUnknown`], repeat the same call (`begin`
//! through [`Idempotency::begin_with_token`] with the token of the lost call).
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

pub use claim::Claim;
use record::End;
pub use response::{Body, Response};

use crate::client::{Arg, Client};
use crate::keys::Keyspace;
use crate::lease::{millis, Extend, Fence, Held, OwnerToken};
use crate::script::registry::{IdemBeginOutcome, IdemBeginReply, IDEM_BEGIN};
use crate::Error;
use sha2::{Digest, Sha256};
use std::time::{Duration, Instant};

const SCHEMA: u32 = 1;
/// Longest idempotency key or scope accepted, in bytes.
pub const MAX_KEY_LEN: usize = 512;
/// Longest claim lease accepted: 1 day.
pub const MAX_LEASE: Duration = Duration::from_secs(24 * 3600);
/// Longest result TTL accepted: 30 days.
pub const MAX_RESULT_TTL: Duration = Duration::from_secs(30 * 24 * 3600);

/// Settings of an [`Idempotency`] store.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct IdemConfig {
    /// How long a claim lives without an extension before another request may take it over.
    pub lease: Duration,
    /// How long a stored result (and an unfinished claim's record) is kept: 24 h by default.
    pub result_ttl: Duration,
    /// Largest encoded response stored; larger ones are refused with a clear error (store a
    /// [`Body::Reference`] instead).
    pub max_response_bytes: usize,
}

impl Default for IdemConfig {
    fn default() -> Self {
        IdemConfig {
            lease: Duration::from_secs(30),
            result_ttl: Duration::from_secs(24 * 3600),
            max_response_bytes: 1 << 20,
        }
    }
}

impl IdemConfig {
    /// With this claim lease.
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// With this result TTL.
    pub fn result_ttl(mut self, ttl: Duration) -> Self {
        self.result_ttl = ttl;
        self
    }

    /// With this response size limit.
    pub fn max_response_bytes(mut self, limit: usize) -> Self {
        self.max_response_bytes = limit;
        self
    }
}

/// A request digest: equal requests under one key must have equal fingerprints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fingerprint([u8; 16]);

impl Fingerprint {
    /// SHA-256 over the canonical encoding of `parts` (each length-prefixed, so `["ab","c"]` and
    /// `["a","bc"]` differ), truncated to 128 bits.
    ///
    /// ```
    /// use redis_atomic::idempotency::Fingerprint;
    /// let a = Fingerprint::of(&[b"POST", b"/charges", br#"{"amount":5}"#]);
    /// assert_eq!(a, Fingerprint::of(&[b"POST", b"/charges", br#"{"amount":5}"#]));
    /// assert_ne!(Fingerprint::of(&[b"ab", b"c"]), Fingerprint::of(&[b"a", b"bc"]));
    /// ```
    pub fn of(parts: &[&[u8]]) -> Self {
        let mut h = Sha256::new();
        for p in parts {
            h.update((p.len() as u64).to_be_bytes());
            h.update(p);
        }
        let digest = h.finalize();
        let mut out = [0u8; 16];
        out.copy_from_slice(&digest[..16]);
        Fingerprint(out)
    }

    fn hex(&self) -> String {
        hex::encode(self.0)
    }
}

/// The keys of one idempotency record.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct IdemKeys {
    /// `<ns>:idem:v1:{<digest>}`, digest = SHA-256 of (scope, key) in hex: one string packing
    /// state, fence, owner token, fingerprint, lease end (server ms) and the stored response.
    pub record: String,
}

/// What `begin` decided.
#[derive(Debug)]
#[non_exhaustive]
pub enum Begin {
    /// The caller runs the request now.
    Claimed(Claim),
    /// Another executor holds a live claim; try again after `retry_after`.
    InProgress {
        /// Time left on the other executor's lease.
        retry_after: Duration,
    },
    /// The request already finished: replay this.
    Replay(Stored),
    /// The key was used with a different request (fingerprint mismatch).
    Mismatch,
}

/// A stored result.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stored {
    /// The request completed with this response.
    Completed(Response),
    /// The request failed for good with this response.
    Failed(Response),
}

/// How an execution failed.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Failure {
    /// Free the key: the next attempt runs the request again.
    Retryable,
    /// Store this failure: duplicates replay it.
    Final(Response),
}

/// What ending a claim (`complete` or `fail`) achieved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// Stored (or, for [`Failure::Retryable`], the key freed).
    Stored,
    /// This claim was superseded (taken over after its lease ran out, or already ended another
    /// way): nothing written.
    Lost,
}

/// Idempotency records under one keyspace.
#[derive(Clone, Debug)]
pub struct Idempotency {
    client: Client,
    keyspace: Keyspace,
    config: IdemConfig,
}

impl Idempotency {
    /// A store under `keyspace`.
    pub fn new(client: Client, keyspace: Keyspace, config: IdemConfig) -> Result<Self, Error> {
        millis("lease", config.lease, MAX_LEASE)?;
        millis("result_ttl", config.result_ttl, MAX_RESULT_TTL)?;
        Ok(Idempotency {
            client,
            keyspace,
            config,
        })
    }

    /// The settings.
    pub fn config(&self) -> &IdemConfig {
        &self.config
    }

    /// The keys of (`scope`, `key`): each 1..=[`MAX_KEY_LEN`] bytes.
    ///
    /// ```
    /// # fn demo(client: redis_atomic::Client) -> Result<(), redis_atomic::Error> {
    /// use redis_atomic::idempotency::{IdemConfig, Idempotency};
    /// let store = Idempotency::new(client, redis_atomic::Keyspace::new("app")?, IdemConfig::default())?;
    /// assert!(store.keys("tenant-1", b"key-from-client")?.record.starts_with("app:idem:v1:{"));
    /// # Ok(()) }
    /// ```
    pub fn keys(&self, scope: &str, key: &[u8]) -> Result<IdemKeys, Error> {
        for (what, v) in [("scope", scope.as_bytes()), ("idempotency key", key)] {
            if v.is_empty() || v.len() > MAX_KEY_LEN {
                return Err(Error::BadArgument(format!(
                    "{what} must be 1..={MAX_KEY_LEN} bytes, got {}",
                    v.len()
                )));
            }
        }
        let digest = Fingerprint::of(&[scope.as_bytes(), key]).hex();
        Ok(IdemKeys {
            record: self.keyspace.key("idem", SCHEMA, &digest, &[])?,
        })
    }

    /// Claims (`scope`, `key`) for a request with `fp`, with a fresh random owner token.
    pub async fn begin(&self, scope: &str, key: &[u8], fp: Fingerprint) -> Result<Begin, Error> {
        self.begin_with_token(scope, key, fp, &OwnerToken::random())
            .await
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
        let lease = self.config.lease;
        let lease_ms = millis("lease", lease, MAX_LEASE)?;
        let ttl_ms = millis("result_ttl", self.config.result_ttl, MAX_RESULT_TTL)?;
        let fp_hex = fp.hex();
        let args = [
            token.as_str().into(),
            fp_hex.as_str().into(),
            Arg::Int(lease_ms),
            Arg::Int(ttl_ms),
        ];
        let sent = Instant::now();
        let reply = self.client.call(&IDEM_BEGIN, [&keys.record], args).await?;
        Ok(match reply {
            IdemBeginReply::Claimed {
                generation,
                takeover,
                ..
            } => Begin::Claimed(Claim::new(
                self.clone(),
                keys,
                Held::new(token.clone(), generation, sent, lease),
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

    /// Sets the lease of the claim `token` holds on (`scope`, `key`) with `fence` to end `lease`
    /// from the server's now (absolute, never added).
    pub async fn extend(
        &self,
        scope: &str,
        key: &[u8],
        token: &OwnerToken,
        fence: Fence,
        lease: Duration,
    ) -> Result<Extend, Error> {
        let keys = self.keys(scope, key)?;
        self.extend_record(&keys, token, fence, lease).await
    }

    /// Stores `response` for replay as the result of the claim `token` holds on (`scope`, `key`)
    /// with `fence`. Repeating it is safe.
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

    /// Ends the claim `token` holds on (`scope`, `key`) with `fence` with a failure:
    /// [`Failure::Retryable`] frees the key, [`Failure::Final`] stores the response for replay.
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
