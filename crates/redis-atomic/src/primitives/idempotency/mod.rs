//! Idempotency keys: each request's side effect happens once, however often it is sent.
//!
//! **Invariant.** At most one live claim per idempotency key; a claim's result, once stored, is
//! what every later duplicate gets, and no superseded executor can overwrite or extend it.
//!
//! **Keys.** One Redis string per idempotency key: `<ns>:idem:v1:{<digest>}`, where the digest is
//! SHA-256 of (scope, key), so user-supplied bytes never reach key names, every record is in one
//! slot by construction, and tenants cannot collide. The string packs state, generation, owner
//! token, request fingerprint, lease end (server ms) and the stored response: one string stays
//! compact where a hash with a large field would leave listpack encoding.
//!
//! **Mechanism.** Lua scripts (`idem_begin`, `idem_heartbeat`, `idem_complete`): the decision
//! between claim, wait, replay and mismatch reads the record and writes it in one step, on the
//! server's clock. Seed 001's layout (a lock key plus a result key, completed by an unconditional
//! write) lets a stale executor overwrite a newer result; the AWS Powertools store decides on the
//! client and has run requests twice. Here the claim carries a token and a generation, and every
//! write checks both.
//!
//! **Takeover.** A claim whose lease ran out (server time) is taken over by the next `begin` with
//! the same fingerprint: its generation increases, and the old executor's later `complete`,
//! `fail` or `heartbeat` answers [`Outcome::Lost`].
//!
//! **Retry.** All scripts are `retry: safe`. `begin` with the same caller token while its claim is
//! live returns the same generation; `complete`/`fail` repeated with the same token and
//! generation answer [`Outcome::Stored`] again. So after [`Error::OutcomeUnknown`], repeat the
//! same call.
//!
//! **Not guaranteed.** Idempotency covers what the executor does between `begin` and `complete`
//! only as well as that work is itself fenced or idempotent: if an executor is paused past its
//! lease and the claim is taken over, both may perform the side effect (the stale one learns it
//! lost only at `complete`). Pass [`Claim::generation`] to the downstream store as a fence, or
//! keep leases long and heartbeat. After a failover, a record acknowledged by the old primary but
//! not replicated is gone: a duplicate then runs again.

mod response;

pub use response::{Body, Response};

use crate::client::{Arg, Client};
use crate::keys::Keyspace;
use crate::reply::{millis, Reply};
use crate::script::registry::{IDEM_BEGIN, IDEM_COMPLETE, IDEM_HEARTBEAT};
use crate::Error;
use sha2::{Digest, Sha256};
use std::time::Duration;

const SCHEMA: u32 = 1;
/// Longest idempotency key or scope accepted, in bytes.
pub const MAX_KEY_LEN: usize = 512;

/// Settings of an [`Idempotency`] store.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct IdemConfig {
    /// How long a claim lives without a heartbeat before another request may take it over.
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

/// What a write by a claim's executor achieved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// Stored (or lease extended).
    Stored,
    /// This claim was superseded (taken over after its lease ran out, or released): nothing
    /// written.
    Lost,
}

/// Idempotency records under one keyspace.
#[derive(Clone, Debug)]
pub struct Idempotency {
    client: Client,
    keys: Keyspace,
    config: IdemConfig,
}

impl Idempotency {
    /// A store under `keyspace`.
    pub fn new(client: Client, keyspace: Keyspace, config: IdemConfig) -> Result<Self, Error> {
        millis("lease", config.lease, 86_400_000)?;
        millis("result_ttl", config.result_ttl, 2_592_000_000)?;
        Ok(Idempotency {
            client,
            keys: keyspace,
            config,
        })
    }

    /// The settings.
    pub fn config(&self) -> &IdemConfig {
        &self.config
    }

    /// The Redis key of (`scope`, `key`).
    pub fn record_key(&self, scope: &str, key: &[u8]) -> Result<String, Error> {
        for (what, v) in [("scope", scope.as_bytes()), ("idempotency key", key)] {
            if v.is_empty() || v.len() > MAX_KEY_LEN {
                return Err(Error::BadArgument(format!(
                    "{what} must be 1..={MAX_KEY_LEN} bytes, got {}",
                    v.len()
                )));
            }
        }
        let digest = Fingerprint::of(&[scope.as_bytes(), key]).hex();
        self.keys.key("idem", SCHEMA, &digest, &[])
    }

    /// Claims (`scope`, `key`) for a request with `fingerprint`, with a fresh owner token.
    pub async fn begin(&self, scope: &str, key: &[u8], fp: Fingerprint) -> Result<Begin, Error> {
        let token = format!("{:032x}", rand::random::<u128>());
        self.begin_with_token(scope, key, fp, &token).await
    }

    /// Like [`Idempotency::begin`] with the caller's token: repeating it after an unknown outcome
    /// returns the same claim.
    pub async fn begin_with_token(
        &self,
        scope: &str,
        key: &[u8],
        fp: Fingerprint,
        token: &str,
    ) -> Result<Begin, Error> {
        if token.is_empty() || token.len() > 256 || token.contains('\n') {
            return Err(Error::BadArgument(
                "token must be 1..=256 bytes without newlines".into(),
            ));
        }
        let record = self.record_key(scope, key)?;
        let lease = millis("lease", self.config.lease, 86_400_000)?;
        let ttl = millis("result_ttl", self.config.result_ttl, 2_592_000_000)?;
        let fp_hex = fp.hex();
        let args = [
            token.into(),
            fp_hex.as_str().into(),
            Arg::Int(lease),
            Arg::Int(ttl),
        ];
        let value = self.client.invoke(&IDEM_BEGIN, [&record], args).await?;
        let reply = Reply::parse(IDEM_BEGIN.name, value)?;
        match reply.status.as_str() {
            "claimed" => Ok(Begin::Claimed(Claim {
                store: self.clone(),
                record,
                token: token.to_string(),
                generation: reply.uint(0)?,
                takeover: reply.int(2)? == 1,
            })),
            "in_progress" => Ok(Begin::InProgress {
                retry_after: Duration::from_millis(reply.uint(0)?),
            }),
            "replay" => {
                let response = Response::decode(reply.bytes(1)?)?;
                match reply.bytes(0)? {
                    b"failed" => Ok(Begin::Replay(Stored::Failed(response))),
                    _ => Ok(Begin::Replay(Stored::Completed(response))),
                }
            }
            "mismatch" => Ok(Begin::Mismatch),
            _ => Err(reply.unexpected()),
        }
    }
}

/// A live claim: the caller executes the request, then stores the result.
#[derive(Debug)]
#[must_use = "a claim should end with complete() or fail()"]
pub struct Claim {
    store: Idempotency,
    record: String,
    token: String,
    generation: u64,
    takeover: bool,
}

impl Claim {
    /// Strictly increasing per key: use it as a fence for the side effect's own store.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Whether this claim took over an earlier executor's expired lease.
    pub fn is_takeover(&self) -> bool {
        self.takeover
    }

    /// The owner token (reuse it with `begin_with_token` after an unknown outcome).
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Extends the lease to `lease` from the server's now.
    pub async fn heartbeat(&self, lease: Duration) -> Result<Outcome, Error> {
        let lease = millis("lease", lease, 86_400_000)?;
        let generation = self.generation.to_string();
        let args = [
            self.token.as_str().into(),
            generation.as_str().into(),
            Arg::Int(lease),
        ];
        let value = self
            .store
            .client
            .invoke(&IDEM_HEARTBEAT, [&self.record], args)
            .await?;
        let reply = Reply::parse(IDEM_HEARTBEAT.name, value)?;
        match reply.status.as_str() {
            "extended" => Ok(Outcome::Stored),
            "lost" => Ok(Outcome::Lost),
            _ => Err(reply.unexpected()),
        }
    }

    /// Stores `response` for replay. Repeating it (same claim) is safe.
    pub async fn complete(&self, response: &Response) -> Result<Outcome, Error> {
        self.finish("completed", Some(response)).await
    }

    /// Ends the claim with a failure: [`Failure::Retryable`] frees the key, [`Failure::Final`]
    /// stores the response for replay.
    pub async fn fail(&self, failure: &Failure) -> Result<Outcome, Error> {
        match failure {
            Failure::Retryable => self.finish("retry", None).await,
            Failure::Final(response) => self.finish("failed", Some(response)).await,
        }
    }

    async fn finish(&self, outcome: &str, response: Option<&Response>) -> Result<Outcome, Error> {
        let payload = match response {
            Some(r) => r.encode()?,
            None => Vec::new(),
        };
        let limit = self.store.config.max_response_bytes;
        if payload.len() > limit {
            return Err(Error::BadArgument(format!(
                "response is {} bytes encoded, over the {limit}-byte limit: store a Body::Reference",
                payload.len()
            )));
        }
        let ttl = millis("result_ttl", self.store.config.result_ttl, 2_592_000_000)?;
        let generation = self.generation.to_string();
        let args = [
            self.token.as_str().into(),
            generation.as_str().into(),
            outcome.into(),
            payload.as_slice().into(),
            Arg::Int(ttl),
        ];
        let value = self
            .store
            .client
            .invoke(&IDEM_COMPLETE, [&self.record], args)
            .await?;
        let reply = Reply::parse(IDEM_COMPLETE.name, value)?;
        match reply.status.as_str() {
            "stored" => Ok(Outcome::Stored),
            "lost" => Ok(Outcome::Lost),
            _ => Err(reply.unexpected()),
        }
    }
}
