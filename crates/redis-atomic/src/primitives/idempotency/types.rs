//! The value types of idempotency: settings, the request fingerprint, the record's keys, and
//! every outcome.

use super::{Claim, Response};
use crate::lease::millis;
use crate::Error;
use sha2::{Digest, Sha256};
use std::time::Duration;

/// Longest idempotency key or scope accepted, in bytes.
pub const MAX_KEY_LEN: usize = 512;
/// Longest claim lease (ttl) accepted: 1 day.
pub const MAX_TTL: Duration = Duration::from_secs(24 * 3600);
/// Longest result TTL accepted: 30 days.
pub const MAX_RESULT_TTL: Duration = Duration::from_secs(30 * 24 * 3600);

/// Settings of an [`Idempotency`](super::Idempotency) store.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct IdempotencyConfig {
    /// The claim's lease: how long a claim lives without an extension before another request
    /// may take it over (1 ms ..= [`MAX_TTL`]); 30 s by default.
    pub ttl: Duration,
    /// How long a stored result (and an unfinished claim's record) is kept (1 ms ..=
    /// [`MAX_RESULT_TTL`]): 24 h by default.
    pub result_ttl: Duration,
    /// Largest encoded response stored; larger ones are refused with a clear error (store a
    /// [`Body::Reference`](super::Body::Reference) instead).
    pub max_response_bytes: usize,
}

impl Default for IdempotencyConfig {
    fn default() -> Self {
        IdempotencyConfig {
            ttl: Duration::from_secs(30),
            result_ttl: Duration::from_secs(24 * 3600),
            max_response_bytes: 1 << 20,
        }
    }
}

impl IdempotencyConfig {
    /// With this claim lease.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
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

    pub(super) fn validate(&self) -> Result<(), Error> {
        millis("ttl", self.ttl, MAX_TTL)?;
        millis("result_ttl", self.result_ttl, MAX_RESULT_TTL)?;
        Ok(())
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

    pub(super) fn hex(&self) -> String {
        hex::encode(self.0)
    }
}

/// The keys of one idempotency record.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct IdempotencyKeys {
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
