//! Locks with leases and fencing tokens.
//!
//! **Invariant.** At most one owner token holds a resource's lock at any instant of the server's
//! clock, and every acquisition gets a fence strictly greater than every fence issued before it
//! for that resource, including across failovers to a replica that lost the latest writes.
//!
//! **Keys** (one `{resource}` hash tag, so one slot): `<ns>:lock:v1:{resource}` holds
//! `"<fence>:<token>"` with the lease as its TTL; `<ns>:lock:v1:{resource}:fence` holds the last
//! fence issued, kept for a week beyond the lease.
//!
//! **Mechanism.** Lua scripts (`lock_acquire`, `lock_release`, `lock_extend`, `lock_inspect`): the
//! read-decide-write of ownership and the fence must not interleave, and `SET NX PX` alone cannot
//! issue a fence or recognise its own owner on retry. Expiry is the server's clock (`PX`, `TIME`).
//!
//! **Fences.** `fence = max(last_fence + 1, server TIME in µs)`. A plain `INCR` counter repeats
//! after a failover to a lagging replica (reproduced: token 2 issued twice after promotion); the
//! time floor does not, provided the promoted replica's clock is not behind the old primary's by
//! more than the failover took (seconds, with `cluster-node-timeout`): keep server clocks in sync
//! (NTP). Pass the fence to every downstream write and have the downstream reject smaller ones
//! (see [`crate::lock`] docs in `docs/` and the fenced-write primitive).
//!
//! **Retry.** All four scripts are `retry: safe`. Acquiring again with the *same owner token*
//! while it holds the lock returns the same fence and resets the lease, so a client that lost the
//! reply ([`Error::OutcomeUnknown`]) retries with [`Locks::acquire_with_token`] and ends up the single
//! holder. Release and extend act only for the current token; a retried release finds the lock
//! gone and answers [`Release::NotHeld`].
//!
//! **Not guaranteed.** Redis replication is asynchronous: after a failover the new primary may
//! not know the lock, and a second client can acquire it while the first still works. Fences
//! still increase, so a fenced downstream rejects the stale holder. With
//! [`crate::ClientConfig::replicas`] an acquisition counts only once that many replicas have it
//! (`WAIT`, pipelined); otherwise it is released again and [`Error::NotReplicated`] returned. A lease also ends while its
//! holder is paused (GC, SIGSTOP); the holder learns it at its next extend or fenced write.

mod watchdog;

pub use watchdog::{LockLost, WatchdogConfig, WatchedLock};

use crate::client::{Arg, Client};
use crate::keys::Keyspace;
use crate::reply::{millis, Reply};
use crate::script::registry::{LOCK_ACQUIRE, LOCK_EXTEND, LOCK_INSPECT, LOCK_RELEASE};
use crate::Error;
use std::fmt;
use std::time::{Duration, Instant};

/// Longest lease accepted: 7 days.
pub const MAX_TTL: Duration = Duration::from_secs(7 * 24 * 3600);
/// Longest owner token accepted, in bytes.
pub const MAX_TOKEN_LEN: usize = 256;
const SCHEMA: u32 = 1;

/// A fencing token: strictly increasing per resource. Compare fences to order holders.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Fence(pub u64);

impl fmt::Display for Fence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Who holds a lock: an opaque, unguessable string (128 random bits from the thread-local CSPRNG
/// by default). Reuse it to retry an acquisition whose outcome is unknown.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct OwnerToken(String);

impl OwnerToken {
    /// A fresh random token.
    pub fn random() -> Self {
        OwnerToken(format!("{:032x}", rand::random::<u128>()))
    }

    /// A caller-chosen token: non-empty UTF-8 of at most [`MAX_TOKEN_LEN`] bytes.
    pub fn new(token: impl Into<String>) -> Result<Self, Error> {
        let token = token.into();
        if token.is_empty() || token.len() > MAX_TOKEN_LEN {
            return Err(Error::BadArgument(format!(
                "owner token must be 1..={MAX_TOKEN_LEN} bytes, got {}",
                token.len()
            )));
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
        write!(f, "OwnerToken({}…)", self.0.get(..4).unwrap_or(""))
    }
}

/// Result of an acquisition attempt.
#[derive(Debug)]
#[non_exhaustive]
pub enum Acquire {
    /// The caller holds the lock.
    Acquired(LockGuard),
    /// Someone else holds it for about `ttl` more.
    Held {
        /// Remaining lease of the current holder.
        ttl: Duration,
    },
}

/// Result of a release.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Release {
    /// The lock was held by this token and is now free.
    Released {
        /// The fence of the released lease.
        fence: Fence,
    },
    /// This token does not hold the lock (expired, taken over, or already released).
    NotHeld,
}

/// Result of an extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Extend {
    /// The lease now ends `ttl` from the server's now.
    Extended {
        /// The (unchanged) fence.
        fence: Fence,
        /// The new remaining lease.
        ttl: Duration,
    },
    /// This token does not hold the lock any more.
    NotHeld,
}

/// A lock's state, read without changing it (runs on replicas).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LockState {
    /// Held with this fence for about `ttl` more.
    Held {
        /// Current fence.
        fence: Fence,
        /// Remaining lease.
        ttl: Duration,
    },
    /// Free; the last fence issued (0 if none is remembered).
    Free {
        /// Last fence issued.
        last_fence: Fence,
    },
}

/// Locks under one keyspace.
#[derive(Clone, Debug)]
pub struct Locks {
    client: Client,
    keys: Keyspace,
}

impl Locks {
    /// Locks whose keys live under `keyspace`.
    pub fn new(client: Client, keyspace: Keyspace) -> Self {
        Locks {
            client,
            keys: keyspace,
        }
    }

    fn lock_keys(&self, resource: &str) -> Result<(String, String), Error> {
        if resource.is_empty() {
            return Err(Error::BadArgument("resource must not be empty".into()));
        }
        Ok((
            self.keys.key("lock", SCHEMA, resource, &[])?,
            self.keys.key("lock", SCHEMA, resource, &["fence"])?,
        ))
    }

    /// Tries once to acquire `resource` for `ttl` with a fresh random owner token.
    pub async fn acquire(&self, resource: &str, ttl: Duration) -> Result<Acquire, Error> {
        self.acquire_with_token(resource, &OwnerToken::random(), ttl)
            .await
    }

    /// Tries once with the caller's `token`. Retrying with the same token after an unknown outcome
    /// is safe: while the token holds the lock, the same fence comes back.
    pub async fn acquire_with_token(
        &self,
        resource: &str,
        token: &OwnerToken,
        ttl: Duration,
    ) -> Result<Acquire, Error> {
        let ttl_ms = millis("ttl", ttl, ms(MAX_TTL))?;
        let (lock, fence) = self.lock_keys(resource)?;
        let sent = Instant::now();
        let value = match self
            .client
            .invoke(
                &LOCK_ACQUIRE,
                [&lock, &fence],
                [token.as_str().into(), Arg::Int(ttl_ms)],
            )
            .await
        {
            // Held on the primary only (`ClientConfig::replicas`): a failover could give the lock
            // to someone else while we work. Give it back (best effort, as Redisson does) and say
            // why; the caller may try again.
            Err(err @ Error::NotReplicated { .. }) => {
                let _ = self.release(resource, token).await;
                return Err(err);
            }
            other => other?,
        };
        let reply = Reply::parse(LOCK_ACQUIRE.name, value)?;
        match reply.status.as_str() {
            "acquired" => Ok(Acquire::Acquired(LockGuard {
                locks: self.clone(),
                resource: resource.to_string(),
                token: token.clone(),
                fence: Fence(reply.uint(0)?),
                acquired_at: sent,
                ttl,
            })),
            "held" => Ok(Acquire::Held {
                ttl: Duration::from_millis(reply.uint(0).unwrap_or(0)),
            }),
            _ => Err(reply.unexpected()),
        }
    }

    /// Waits up to `wait` for the lock, retrying with bounded, jittered backoff (never longer
    /// than the holder's remaining lease). Returns [`Acquire::Held`] when `wait` runs out.
    pub async fn acquire_timeout(
        &self,
        resource: &str,
        ttl: Duration,
        wait: Duration,
    ) -> Result<Acquire, Error> {
        let token = OwnerToken::random();
        let started = Instant::now();
        let mut attempt = 0;
        loop {
            let outcome = self.acquire_with_token(resource, &token, ttl).await?;
            let Acquire::Held { ttl: held_for } = outcome else {
                return Ok(outcome);
            };
            let left = wait.saturating_sub(started.elapsed());
            if left.is_zero() {
                return Ok(outcome);
            }
            attempt += 1;
            let jitter = crate::client::full_jitter(
                Duration::from_millis(2),
                Duration::from_millis(100),
                attempt,
            );
            let pause = jitter
                .max(Duration::from_millis(1))
                .min(held_for.max(Duration::from_millis(1)));
            tokio::time::sleep(pause.min(left)).await;
        }
    }

    /// Releases `resource` if `token` holds it.
    pub async fn release(&self, resource: &str, token: &OwnerToken) -> Result<Release, Error> {
        let (lock, _) = self.lock_keys(resource)?;
        let value = self
            .client
            .invoke(&LOCK_RELEASE, [&lock], [token.as_str().into()])
            .await?;
        let reply = Reply::parse(LOCK_RELEASE.name, value)?;
        match reply.status.as_str() {
            "released" => Ok(Release::Released {
                fence: Fence(reply.uint(0)?),
            }),
            "not_held" => Ok(Release::NotHeld),
            _ => Err(reply.unexpected()),
        }
    }

    /// Sets the lease of `token`'s lock to end `ttl` from the server's now (absolute, not added).
    pub async fn extend(
        &self,
        resource: &str,
        token: &OwnerToken,
        ttl: Duration,
    ) -> Result<Extend, Error> {
        let ttl_ms = millis("ttl", ttl, ms(MAX_TTL))?;
        let (lock, _) = self.lock_keys(resource)?;
        let value = self
            .client
            .invoke(
                &LOCK_EXTEND,
                [&lock],
                [token.as_str().into(), Arg::Int(ttl_ms)],
            )
            .await?;
        let reply = Reply::parse(LOCK_EXTEND.name, value)?;
        match reply.status.as_str() {
            "extended" => Ok(Extend::Extended {
                fence: Fence(reply.uint(0)?),
                ttl: Duration::from_millis(reply.uint(1)?),
            }),
            "not_held" => Ok(Extend::NotHeld),
            _ => Err(reply.unexpected()),
        }
    }

    /// Reads the lock's state (read-only script: `EVALSHA_RO` / `FCALL_RO`).
    pub async fn inspect(&self, resource: &str) -> Result<LockState, Error> {
        let (lock, fence) = self.lock_keys(resource)?;
        let value = self
            .client
            .invoke(&LOCK_INSPECT, [&lock, &fence], [])
            .await?;
        let reply = Reply::parse(LOCK_INSPECT.name, value)?;
        match reply.status.as_str() {
            "held" => Ok(LockState::Held {
                fence: Fence(reply.uint(0)?),
                ttl: Duration::from_millis(reply.uint(1).unwrap_or(0)),
            }),
            "free" => Ok(LockState::Free {
                last_fence: Fence(reply.uint(0)?),
            }),
            _ => Err(reply.unexpected()),
        }
    }
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// A held lock. Release it with [`LockGuard::release`]; dropping it does nothing (it never blocks
/// and never spawns): the lease then simply runs out.
#[derive(Debug)]
#[must_use = "a lock guard should be released when the work is done"]
pub struct LockGuard {
    locks: Locks,
    resource: String,
    token: OwnerToken,
    fence: Fence,
    acquired_at: Instant,
    ttl: Duration,
}

impl LockGuard {
    /// The fence of this lease: pass it to every write the lock protects.
    pub fn fence(&self) -> Fence {
        self.fence
    }

    /// The owner token (reuse it to retry after an unknown outcome).
    pub fn token(&self) -> &OwnerToken {
        &self.token
    }

    /// The locked resource.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// Until when, by the local clock, the lease surely lasts: the time the acquiring request was
    /// sent plus the ttl (the server started the lease later). Stop work that needs the lock
    /// before this, or extend.
    pub fn expires_by(&self) -> Instant {
        self.acquired_at + self.ttl
    }

    /// Sets the lease to `ttl` from now.
    pub async fn extend(&mut self, ttl: Duration) -> Result<Extend, Error> {
        let sent = Instant::now();
        let outcome = self.locks.extend(&self.resource, &self.token, ttl).await?;
        if let Extend::Extended { .. } = outcome {
            self.acquired_at = sent;
            self.ttl = ttl;
        }
        Ok(outcome)
    }

    /// Releases the lock if this guard still holds it.
    pub async fn release(self) -> Result<Release, Error> {
        self.locks.release(&self.resource, &self.token).await
    }
}
