//! Locks with leases and fencing tokens.
//!
//! **Invariant.** At most one owner token holds a resource's lock at any instant of the server's
//! clock, and every acquisition gets a fence strictly greater than every fence issued before it
//! for that resource, including across failovers to a replica that lost the latest writes.
//!
//! **Keys** ([`LockKeys`], from [`Locks::keys`]; one `{resource}` hash tag, so one slot): `<ns>:lock:v1:{resource}`
//! holds `"<fence>:<token>"` with the lease as its TTL; `<ns>:lock:v1:{resource}:fence` holds the
//! last fence issued, kept 14 days from its last issue (at least a week beyond any lease).
//!
//! **Mechanism.** Lua scripts (`lock_acquire`, `lock_release`, `lock_extend`, `lock_inspect`): the
//! read-decide-write of ownership and the fence must not interleave, and `SET NX PX` alone cannot
//! issue a fence or recognise its own owner on retry. Expiry is the server's clock (`PX`, `TIME`).
//!
//! **Shape.** The lease shape every lease-like primitive shares ([`crate::lease`]), as a
//! collection keyed per call ([`Locks::new`] with a [`Keyspace`], [`Locks::keys`] per resource):
//! `acquire` → [`LockGuard`] (`fence()`, `token()`, `ttl()`, `expires_by()`, `extend(ttl)`,
//! `release()`, which consumes it) or [`Acquire::Held`] with a `retry_after`. [`Locks::extend`]
//! and [`Locks::release`] do the same by parts (resource, token and fence) for callers without a
//! handle. [`LockGuard::watch`] renews a lease in the background ([`Watched`]).
//!
//! **Fences.** Every acquisition issues one by [the one rule](crate::lease#fences). Pass the fence
//! to every downstream write and have the downstream reject smaller ones ([`crate::fenced`]).
//!
//! **Retry.** All four scripts are `retry: safe`. Acquiring again with the *same owner token*
//! while it holds the lock returns the same fence and resets the lease, so a client that lost the
//! reply ([`Error::OutcomeUnknown`]) retries with [`Locks::acquire_with_token`] and ends up the
//! single holder. Release and extend act only for the current token *and* fence (the `lock_extend`
//! and `lock_release` scripts, or natively `SET … IFEQ` and `DELIFEQ` / `DELEX … IFEQ` where the
//! server has them); a retried release finds the lock gone and answers [`Release::Lost`]. After an
//! unknown outcome of [`LockGuard::release`], repeat it by parts with the token and fence read
//! before.
//!
//! **Not guaranteed.** Redis replication is asynchronous: after a failover the new primary may
//! not know the lock, and a second client can acquire it while the first still works. Fences
//! still increase, so a fenced downstream rejects the stale holder. With
//! [`crate::ClientConfig::replicas`] an acquisition counts only once that many replicas have it
//! (`WAIT`, pipelined); otherwise it is released again and [`Error::NotReplicated`] returned. A
//! lease also ends while its holder is paused (GC, SIGSTOP); the holder learns it at its next
//! extend or fenced write.

mod native;

pub use crate::lease::{LeaseLost, WatchdogConfig};

/// A lock whose lease a watchdog renews ([`LockGuard::watchdog`]).
pub type WatchedLock = Watched<LockGuard>;
/// Why a watched lock was lost.
pub type LockLost = LeaseLost;

use crate::client::retry::{self, Rules, Verdict};
use crate::client::{Arg, Client};
use crate::keys::Keyspace;
use crate::lease::{
    lease_by_inherent, millis, Extend, Fence, Held, Lease, OwnerToken, Release, Watched,
};
use crate::script::registry::{
    LockAcquireReply, LockExtendReply, LockInspectReply, LockReleaseReply, LOCK_ACQUIRE,
    LOCK_EXTEND, LOCK_INSPECT, LOCK_RELEASE,
};
use crate::Error;
use std::time::{Duration, Instant};

/// Longest lease accepted: 7 days.
pub const MAX_TTL: Duration = Duration::from_secs(7 * 24 * 3600);
const SCHEMA: u32 = 1;

/// The keys of one resource's lock.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LockKeys {
    /// `<ns>:lock:v1:{resource}`: `"<fence>:<token>"`, the lease as its TTL.
    pub lock: String,
    /// `<ns>:lock:v1:{resource}:fence`: the last fence issued.
    pub fence: String,
}

/// Result of an acquisition attempt.
#[derive(Debug)]
#[non_exhaustive]
pub enum Acquire {
    /// The caller holds the lock.
    Acquired(LockGuard),
    /// Someone else holds it; its lease ends in `retry_after` (a release may free it sooner).
    Held {
        /// Remaining lease of the current holder.
        retry_after: Duration,
    },
}

/// A lock's state, read without changing it (runs on replicas).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LockState {
    /// Held with this fence for about `ttl` more.
    Locked {
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
    keyspace: Keyspace,
}

impl Locks {
    /// Locks whose keys live under `keyspace`.
    pub fn new(client: Client, keyspace: Keyspace) -> Self {
        Locks { client, keyspace }
    }

    /// The keys of `resource`'s lock.
    ///
    /// ```
    /// # fn demo(client: redis_atomic::Client) -> Result<(), redis_atomic::Error> {
    /// let locks = redis_atomic::lock::Locks::new(client, redis_atomic::Keyspace::new("app")?);
    /// assert_eq!(locks.keys("order-42")?.fence, "app:lock:v1:{order-42}:fence");
    /// # Ok(()) }
    /// ```
    pub fn keys(&self, resource: &str) -> Result<LockKeys, Error> {
        if resource.is_empty() {
            return Err(Error::BadArgument("resource must not be empty".into()));
        }
        Ok(LockKeys {
            lock: self.keyspace.key("lock", SCHEMA, resource, &[])?,
            fence: self.keyspace.key("lock", SCHEMA, resource, &["fence"])?,
        })
    }

    /// Tries once to acquire `resource` for `ttl` with a fresh random owner token. After an
    /// unknown outcome the caller cannot resend it (it never saw the token: a resend would take
    /// a second lease), so the error says `retry_safe() == false`; use
    /// [`Locks::acquire_with_token`] to be able to.
    pub async fn acquire(&self, resource: &str, ttl: Duration) -> Result<Acquire, Error> {
        self.acquire_with_token(resource, &OwnerToken::random(), ttl)
            .await
            .map_err(|e| e.retry_safe_if(false))
    }

    /// Tries once with the caller's `token`. Retrying with the same token after an unknown outcome
    /// is safe: while it holds the lock, the same fence comes back.
    pub async fn acquire_with_token(
        &self,
        resource: &str,
        token: &OwnerToken,
        ttl: Duration,
    ) -> Result<Acquire, Error> {
        let ttl_ms = millis("ttl", ttl, MAX_TTL)?;
        let keys = self.keys(resource)?;
        let sent = Instant::now();
        let args = [token.as_str().into(), Arg::Int(ttl_ms)];
        match self
            .client
            .call(&LOCK_ACQUIRE, [&keys.lock, &keys.fence], args)
            .await
        {
            Ok(LockAcquireReply::Acquired { fence, .. }) => Ok(Acquire::Acquired(LockGuard {
                locks: self.clone(),
                resource: resource.to_string(),
                held: Held::new(token.clone(), fence, sent, ttl),
            })),
            Ok(LockAcquireReply::Held { retry_after }) => Ok(Acquire::Held { retry_after }),
            // Held on the primary only (`ClientConfig::replicas`): a failover could give the lock
            // to someone else while we work. Give it back (best effort, as Redisson does) and say
            // why; the caller may try again.
            Err(err @ Error::NotReplicated { .. }) => {
                let _ = self.release_lease(resource, token, None).await;
                Err(err)
            }
            Err(err) => Err(err),
        }
    }

    /// Waits up to `wait` for the lock: retries while it is held, under the client's
    /// [`contention`](crate::ClientConfig::contention) backoff (never longer than the holder's
    /// remaining lease), the last attempt at `wait`. Returns [`Acquire::Held`] when `wait` runs
    /// out.
    pub async fn acquire_timeout(
        &self,
        resource: &str,
        ttl: Duration,
        wait: Duration,
    ) -> Result<Acquire, Error> {
        let token = OwnerToken::random();
        let policy = self
            .client
            .config()
            .contention
            .clone()
            .deadline(wait)
            .max_attempts(u32::MAX);
        let held = |a: &Acquire| match a {
            Acquire::Held { retry_after } => Some((*retry_after).max(Duration::from_millis(1))),
            _ => None,
        };
        let rules = Rules {
            policy: &policy,
            started: Instant::now(),
            judge: &|_| Verdict::Fail, // failures were retried inside each acquire already
            conflict: &held,
            on_retry: &retry::quiet,
        };
        // A wait cannot be resent as it was (its token is its own): not retry-safe.
        retry::run(rules, || self.acquire_with_token(resource, &token, ttl))
            .await
            .result
            .map_err(|e| e.retry_safe_if(false))
    }

    /// Releases `resource` if `token` holds it with the lease `fence`: the by-parts twin of
    /// [`LockGuard::release`]. A server with `DELIFEQ` / `DELEX … IFEQ` decides without Lua
    /// (the `native` rung).
    pub async fn release(
        &self,
        resource: &str,
        token: &OwnerToken,
        fence: Fence,
    ) -> Result<Release, Error> {
        self.release_lease(resource, token, Some(fence)).await
    }

    /// Releases the lease `fence` of `token`; None: any lease of `token`, only for giving back
    /// an acquisition whose reply (and so its fence) was not usable ([`Error::NotReplicated`]).
    async fn release_lease(
        &self,
        resource: &str,
        token: &OwnerToken,
        fence: Option<Fence>,
    ) -> Result<Release, Error> {
        let keys = self.keys(resource)?;
        let want = fence.map(|f| f.to_string()).unwrap_or_default();
        let args = [token.as_str().into(), want.as_str().into()];
        let lock = keys.lock.as_str();
        let native = fence.map(|fence| {
            move |caps: &crate::client::Capabilities| {
                native::release(caps, lock, fence, token.as_str())
            }
        });
        let reply = self
            .client
            .call_or_native(&LOCK_RELEASE, [&keys.lock], args, native)
            .await?;
        Ok(match reply {
            LockReleaseReply::Released { fence } => Release::Released { fence },
            LockReleaseReply::Lost => Release::Lost,
        })
    }

    /// Sets the lease `fence` of `token`'s lock on `resource` to end `ttl` from the server's now
    /// (absolute, not added): the by-parts twin of [`LockGuard::extend`]. A server whose `SET`
    /// takes `IFEQ` decides without Lua (the `native` rung).
    pub async fn extend(
        &self,
        resource: &str,
        token: &OwnerToken,
        fence: Fence,
        ttl: Duration,
    ) -> Result<Extend, Error> {
        let ttl_ms = millis("ttl", ttl, MAX_TTL)?;
        let keys = self.keys(resource)?;
        let want = fence.to_string();
        let args = [
            token.as_str().into(),
            want.as_str().into(),
            Arg::Int(ttl_ms),
        ];
        let lock = keys.lock.as_str();
        let native = Some(move |caps: &crate::client::Capabilities| {
            native::extend(caps, lock, fence, token.as_str(), ttl_ms)
        });
        let reply = self
            .client
            .call_or_native(&LOCK_EXTEND, [&keys.lock], args, native)
            .await?;
        Ok(match reply {
            LockExtendReply::Extended { fence, ttl } => Extend::Extended { fence, ttl },
            LockExtendReply::Lost => Extend::Lost,
        })
    }

    /// Reads the lock's state (read-only script: `EVALSHA_RO` / `FCALL_RO`).
    pub async fn inspect(&self, resource: &str) -> Result<LockState, Error> {
        let keys = self.keys(resource)?;
        let reply = self
            .client
            .call(&LOCK_INSPECT, [&keys.lock, &keys.fence], [])
            .await?;
        Ok(match reply {
            LockInspectReply::Held { fence, ttl } => LockState::Locked { fence, ttl },
            LockInspectReply::Free { last_fence } => LockState::Free { last_fence },
        })
    }
}

/// A held lock. Release it with [`LockGuard::release`]; dropping it does nothing (it never blocks
/// and never spawns): the lease then simply runs out.
#[derive(Debug)]
#[must_use = "a lock guard should be released when the work is done"]
pub struct LockGuard {
    locks: Locks,
    resource: String,
    held: Held,
}

impl LockGuard {
    /// The fence of this lease: pass it to every write the lock protects.
    pub fn fence(&self) -> Fence {
        self.held.fence
    }

    /// The owner token (reuse it to retry after an unknown outcome).
    pub fn token(&self) -> &OwnerToken {
        &self.held.token
    }

    /// The locked resource.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The lease's length as last set (by the acquisition or the last confirmed extend).
    pub fn ttl(&self) -> Duration {
        self.held.ttl
    }

    /// Until when, by the local clock, the lease surely lasts: the time the acquiring (or last
    /// extending) request was sent plus its ttl. Stop work that needs the lock before this, or
    /// extend.
    pub fn expires_by(&self) -> Instant {
        self.held.expires_by()
    }

    /// Sets the lease to `ttl` from the server's now.
    pub async fn extend(&mut self, ttl: Duration) -> Result<Extend, Error> {
        let sent = Instant::now();
        let (token, fence) = (&self.held.token, self.held.fence);
        let outcome = self.locks.extend(&self.resource, token, fence, ttl).await?;
        self.held.extended(&outcome, sent, ttl);
        Ok(outcome)
    }

    /// Releases the lock if this lease still holds it. After an unknown outcome, repeat it by
    /// parts ([`Locks::release`] with this guard's token and fence).
    pub async fn release(self) -> Result<Release, Error> {
        self.locks
            .release(&self.resource, &self.held.token, self.held.fence)
            .await
    }

    /// Hands the lease to a watchdog with the default [`WatchdogConfig`] ([`Watched`]).
    pub fn watch(self) -> Result<Watched<LockGuard>, Error> {
        Watched::new(self)
    }

    /// Hands the lease to a watchdog that renews it for this guard's ttl every
    /// `renew_fraction × ttl`. Needs a tokio runtime.
    pub fn watch_with(self, config: WatchdogConfig) -> Result<Watched<LockGuard>, Error> {
        Watched::with_config(self, config)
    }
}

impl Watched<LockGuard> {
    /// Stops the renewals and releases the lock if this lease still holds it.
    pub async fn release(self) -> Result<Release, Error> {
        self.stop().await?.release().await
    }
}

impl Lease for LockGuard {
    const PRIMITIVE: &'static str = "lock";

    lease_by_inherent!(LockGuard);

    /// Gives the lock back: a released lock only lets the next holder in sooner, with a larger
    /// fence, and this holder was already told to stop.
    async fn give_back(&mut self) -> Result<(), Error> {
        let (token, fence) = (&self.held.token, self.held.fence);
        self.locks
            .release(&self.resource, token, fence)
            .await
            .map(drop)
    }
}
