//! What every lease-like primitive shares: fences, owner tokens, one handle shape, one extend
//! vocabulary and one watchdog.
//!
//! Locks, semaphore permits, idempotency claims and queue jobs are all leases: a holder
//! identified by an [`OwnerToken`] holds something until a server-side deadline, and every
//! lease carries a [`Fence`] strictly greater than every earlier one of the same resource
//! ([Fences](#fences)). So they have one shape:
//!
//! | primitive | take | handle | refusal | end (consumes the handle) | by parts (token + fence) |
//! |---|---|---|---|---|---|
//! | [`crate::lock`] | `acquire(resource, ttl)` | `LockGuard` | `Held { retry_after }` | `release()` | `Locks::{extend, release}(resource, token, fence, ..)` |
//! | [`crate::semaphore`] | `acquire(ttl)` | `Permit` | `Full { retry_after }` | `release()` | `Semaphore::{extend, release}(token, fence, ..)` |
//! | [`crate::idempotency`] | `begin(scope, key, fp)` | `Claim` | `InProgress { retry_after }` | `complete(..)` / `fail(..)` | `Idempotency::{extend, complete, fail}(scope, key, token, fence, ..)` |
//! | [`crate::queue`] | `claim(worker, ttl, max_jobs)` | `Job` | `Empty { retry_after }` / `Idle` | `ack()` / `nack(..)` | `Queue::{extend, ack, nack}(job_id, token, fence, ..)` |
//!
//! Every handle implements [`Lease`]: `fence()`, `token()`, `ttl()`, `expires_by()` and
//! `extend(ttl)`, which answers [`Extend`]. Each primitive extends with one script,
//! `lock_extend`, `sem_extend`, `idem_extend`, `queue_extend`, all answering
//! `extended {fence, ttl}` or `lost`; releases answer `released {fence}` or `lost`. A handle that
//! no longer holds its lease learns it as [`Extend::Lost`] (or [`Release::Lost`]), a value, not
//! an error. The `ttl` is always the lease's length from the server's now, never added to what
//! was left; durations that mean something else keep their own names (`result_ttl`,
//! `dedup_window`, `retry_after`).
//!
//! **By parts.** Every call a handle makes is also a method of its collection or instance that
//! names the lease by token *and* fence (for a job, the token is the worker it is leased to), for
//! callers that hold no handle: another process, an HTTP client, or a caller finishing after an
//! unknown outcome.
//!
//! **Ending after an unknown outcome.** The end verbs consume the handle, so read what names the
//! lease first. When the end verb fails with [`Error::OutcomeUnknown`] (or any error), repeat it
//! by parts: every end is retry-safe, and a repeat of one that did run answers as the first did
//! (`Release::Lost` after a release that ran, `Ack::Acked` within the dedup window, `Stored`
//! again for a completed claim).
//!
//! ```no_run
//! # async fn demo(locks: redis_atomic::lock::Locks) -> Result<(), redis_atomic::Error> {
//! use redis_atomic::lock::Acquire;
//! use std::time::Duration;
//! if let Acquire::Acquired(guard) = locks.acquire("report-7", Duration::from_secs(10)).await? {
//!     let (token, fence) = (guard.token().clone(), guard.fence());
//!     if let Err(e) = guard.release().await {
//!         if e.is_outcome_unknown() {
//!             locks.release("report-7", &token, fence).await?; // the same release, by parts
//!         }
//!     }
//! }
//! # Ok(()) }
//! ```
//!
//! **Local deadlines.** A handle's [`Lease::expires_by`] is the instant the request that started
//! (or last extended) the lease was *sent*, plus its ttl: the server started the lease later, so
//! the lease surely lasts at least that long on the local monotonic clock. [`Watched`] renews a
//! lease in the background on that basis and says when it is lost.
//!
//! # Fences
//!
//! One rule, one issuer: the script fragment `scripts/include/next_fence.lua`, included by every
//! script that starts a lease (`lock_acquire`, `sem_acquire`, `idem_begin`, `queue_claim`,
//! `queue_claim_id`):
//!
//! > `fence = max(last_fence + 1, server TIME in µs)`
//!
//! A plain `INCR` counter repeats after a failover to a replica that had not received the last
//! increments (reproduced: token 2 issued twice after promotion); the time floor does not, provided
//! the promoted replica's clock is not behind the old primary's by more than the failover took
//! (seconds, with `cluster-node-timeout`): keep server clocks in sync (NTP). Fences are therefore
//! strictly increasing per resource (per lock, per semaphore, per idempotency key, per job), and
//! comparing two fences orders their holders. Pass the fence to every write the lease protects and
//! have that store refuse smaller ones ([`crate::fenced`] does this for state kept in Redis).

mod renewal;
mod watchdog;

pub use watchdog::{LeaseLost, WatchdogConfig, Watched};

use crate::Error;
use std::fmt;
use std::future::Future;
use std::time::{Duration, Instant};

/// Longest owner token accepted, in bytes.
pub const MAX_TOKEN_LEN: usize = 256;

/// A fencing token: strictly increasing per resource ([the rule](self#fences)). Compare fences to
/// order holders, and have every store a lease protects refuse writes with a smaller fence than
/// it has seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Fence(pub u64);

impl fmt::Display for Fence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Who holds a lease: an opaque, unguessable string (128 random bits from the thread-local
/// CSPRNG by default). Reuse it to retry a call whose outcome is unknown: the same token gets
/// the same lease back.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct OwnerToken(String);

impl OwnerToken {
    /// A fresh random token.
    pub fn random() -> Self {
        OwnerToken(format!("{:032x}", rand::random::<u128>()))
    }

    /// A caller-chosen token (e.g. a worker name): 1..=[`MAX_TOKEN_LEN`] bytes of UTF-8 without
    /// control characters (records separate fields with newlines).
    ///
    /// ```
    /// use redis_atomic::lease::OwnerToken;
    /// assert!(OwnerToken::new("worker-7").is_ok());
    /// assert!(OwnerToken::new("").is_err());
    /// assert!(OwnerToken::new("a\nb").is_err());
    /// ```
    pub fn new(token: impl Into<String>) -> Result<Self, Error> {
        let token = token.into();
        if token.is_empty() || token.len() > MAX_TOKEN_LEN {
            return Err(Error::BadArgument(format!(
                "owner token must be 1..={MAX_TOKEN_LEN} bytes, got {}",
                token.len()
            )));
        }
        if token.chars().any(char::is_control) {
            return Err(Error::BadArgument(
                "owner token must not contain control characters".into(),
            ));
        }
        Ok(OwnerToken(token))
    }

    /// From raw bytes, which must be UTF-8.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let s = std::str::from_utf8(bytes)
            .map_err(|_| Error::BadArgument("owner token must be UTF-8".into()))?;
        Self::new(s)
    }

    /// The token text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for OwnerToken {
    /// Tokens are credentials of a sort: never printed in full.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown: String = self.0.chars().take(4).collect();
        write!(f, "OwnerToken({shown}…)")
    }
}

/// Result of extending a lease (`extended` or `lost`, the extend scripts' status words).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Extend {
    /// The lease now ends `ttl` from the server's now (absolute, never added to what was left).
    Extended {
        /// The lease's (unchanged) fence.
        fence: Fence,
        /// The new remaining lease.
        ttl: Duration,
    },
    /// The handle no longer holds its lease (expired and taken over, reclaimed, released,
    /// acked): nothing changed.
    Lost,
}

/// Result of releasing a lease (`released` or `lost`, the release scripts' status words).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Release {
    /// The lease was held by this token and fence and is now free.
    Released {
        /// The fence of the released lease.
        fence: Fence,
    },
    /// This token and fence do not hold the lease (expired, taken over, or already released: a
    /// retried release after a lost reply answers this too).
    Lost,
}

/// The shape every lease handle shares ([`crate::lock::LockGuard`],
/// [`crate::semaphore::Permit`], [`crate::idempotency::Claim`], [`crate::queue::Job`]).
pub trait Lease {
    /// The primitive's module name (`lock`, `semaphore`, `idempotency`, `queue`): the
    /// `primitive` label of the watchdog's metrics.
    const PRIMITIVE: &'static str;

    /// The lease's fence: pass it to every write the lease protects.
    fn fence(&self) -> Fence;

    /// The owner token (reuse it to retry after an unknown outcome; for a job, the worker).
    fn token(&self) -> &OwnerToken;

    /// The lease's length as last set, by the take or the last confirmed extend.
    fn ttl(&self) -> Duration;

    /// Until when, by the local clock, the lease surely lasts (see the module doc).
    fn expires_by(&self) -> Instant;

    /// Sets the lease to end `ttl` from the server's now; [`Extend::Lost`] once it is gone.
    fn extend(&mut self, ttl: Duration) -> impl Future<Output = Result<Extend, Error>> + Send;

    /// What a [`Watched`] lease does once it could not confirm the lease in time
    /// ([`LeaseLost::Unconfirmed`]): a renewal that ran late on the server may have re-armed it
    /// after the holder was told to stop. Kinds for which giving it back cannot cause harm give
    /// it back here (best effort, by token and fence); the others do nothing and let it run
    /// out. Each implementation says which it does and why.
    fn give_back(&mut self) -> impl Future<Output = Result<(), Error>> + Send;
}

/// The part of a handle's [`Lease`] impl that every handle writes alike: `fence`, `token`,
/// `ttl`, `expires_by` and `extend` are the handle's inherent methods of the same names (which
/// callers use without importing the trait, and where each is documented). What differs per
/// handle — `PRIMITIVE` and `give_back` — the impl writes itself:
/// `impl Lease for Job { const PRIMITIVE: &'static str = "queue"; lease_by_inherent!(Job); ... }`.
macro_rules! lease_by_inherent {
    ($handle:ty) => {
        fn fence(&self) -> $crate::lease::Fence {
            <$handle>::fence(self)
        }

        fn token(&self) -> &$crate::lease::OwnerToken {
            <$handle>::token(self)
        }

        fn ttl(&self) -> std::time::Duration {
            <$handle>::ttl(self)
        }

        fn expires_by(&self) -> std::time::Instant {
            <$handle>::expires_by(self)
        }

        async fn extend(
            &mut self,
            ttl: std::time::Duration,
        ) -> Result<$crate::lease::Extend, $crate::Error> {
            <$handle>::extend(self, ttl).await
        }
    };
}
pub(crate) use lease_by_inherent;

/// The local half of a lease a handle keeps: token, fence, and when it surely ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Held {
    pub(crate) token: OwnerToken,
    pub(crate) fence: Fence,
    /// When the request that started or last extended the lease was sent.
    pub(crate) sent: Instant,
    pub(crate) ttl: Duration,
}

impl Held {
    pub(crate) fn new(token: OwnerToken, fence: Fence, sent: Instant, ttl: Duration) -> Held {
        Held {
            token,
            fence,
            sent,
            ttl,
        }
    }

    pub(crate) fn expires_by(&self) -> Instant {
        self.sent + self.ttl
    }

    /// Records an extension sent at `sent` when the server confirmed it.
    pub(crate) fn extended(&mut self, outcome: &Extend, sent: Instant, ttl: Duration) {
        if let Extend::Extended { .. } = outcome {
            self.sent = sent;
            self.ttl = ttl;
        }
    }
}

/// A `Duration` as whole milliseconds in `1..=max`, or a typed error naming `what`.
pub(crate) fn millis(what: &str, d: Duration, max: Duration) -> Result<i64, Error> {
    let ms = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    let max_ms = u64::try_from(max.as_millis()).unwrap_or(u64::MAX);
    if ms == 0 || ms > max_ms {
        return Err(Error::BadArgument(format!(
            "{what} must be between 1 ms and {max_ms} ms, got {d:?}"
        )));
    }
    i64::try_from(ms).map_err(|_| Error::BadArgument(format!("{what} too large")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Durations outside `1 ms..=max` are typed errors; inside, whole milliseconds.
    #[test]
    fn millis_bounds() {
        let max = Duration::from_secs(1);
        assert_eq!(millis("ttl", Duration::from_millis(5), max).unwrap(), 5);
        assert!(millis("ttl", Duration::from_micros(999), max).is_err());
        assert!(millis("ttl", Duration::from_millis(1001), max).is_err());
        assert!(millis("ttl", Duration::MAX, Duration::MAX).is_err());
    }

    /// Tokens never print in full, even when short or multi-byte.
    #[test]
    fn token_debug_is_redacted() {
        let t = OwnerToken::new("éééééé-secret").unwrap();
        assert_eq!(format!("{t:?}"), "OwnerToken(éééé…)");
    }
}
