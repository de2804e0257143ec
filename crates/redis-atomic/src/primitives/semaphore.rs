//! Counting semaphores with expiring, fenced permits.
//!
//! **Invariant.** At no instant of the server's clock do more than `capacity` unexpired permits
//! exist, even when holders die without releasing; every acquisition gets a fence strictly
//! greater than every fence issued before it for that semaphore.
//!
//! **Keys** ([`SemaphoreKeys`], one `{name}` hash tag, so one slot): `<ns>:sem:v1:{name}` is a
//! sorted set holder token → lease end (server µs); `<ns>:sem:v1:{name}:holders` a hash holder
//! token → fence; `<ns>:sem:v1:{name}:fence` the last fence issued (kept a week beyond the lease,
//! like the lock's).
//!
//! **Mechanism.** Lua scripts (`sem_acquire`, `sem_release`, `sem_extend`, `sem_inspect`):
//! counting live permits and adding one must not interleave. Acquire first reclaims up to
//! [`RECLAIM_PER_ACQUIRE`] expired permits (bounded work per call), then counts only leases that
//! end after the server's now, so expired permits left over never block and never count.
//!
//! **Shape.** The lease shape every lease-like primitive shares ([`crate::lease`]), as a named
//! instance ([`Semaphore::new`] with a name and a [`SemaphoreConfig`], [`Semaphore::keys`] holding
//! every key): `acquire` → [`Permit`] (`fence()`, `token()`, `ttl()`, `expires_by()`,
//! `extend(ttl)`, `release()`, which consumes it) or [`Acquire::Full`] with a `retry_after`.
//! [`Semaphore::release`] and [`Semaphore::extend`] do the same by parts (token and fence) for
//! callers without a handle. [`crate::lease::Watched`] renews a permit in the background.
//!
//! **Fences.** Every acquisition issues one by [the one rule](crate::lease#fences), per semaphore.
//!
//! **Retry.** All scripts are `retry: safe`. A holder that acquires again while it holds a
//! permit gets the same fence back and a fresh lease, so after [`Error::OutcomeUnknown`] retry
//! with the same [`OwnerToken`] ([`Semaphore::acquire_with_token`]). Release and extend act only
//! for the token *and* fence of a live permit, so a holder whose permit expired and was
//! re-acquired under the same token cannot release or extend the newer one with the old permit;
//! a retried release finds the permit gone and answers [`Release::Lost`]. After an unknown outcome
//! of [`Permit::release`], repeat it by parts with the token and fence read before.
//!
//! **Not guaranteed.** A holder paused past its lease (GC, SIGSTOP) may still be working while
//! its permit has been given to someone else: capacity holds on the server, not in the paused
//! process. Check [`Permit::expires_by`] or extend before long steps, and fence downstream
//! writes. Capacity is passed on every call: callers that disagree about it each enforce their
//! own number. Asynchronous replication can lose permits in a failover (more than `capacity`
//! holders until the lost leases would have ended).

use crate::client::{Arg, Client};
use crate::keys::Keyspace;
use crate::lease::{lease_by_inherent, millis, Extend, Fence, Held, Lease, OwnerToken, Release};
use crate::script::registry::{
    SemAcquireReply, SemExtendReply, SemInspectReply, SemReleaseReply, SEM_ACQUIRE, SEM_EXTEND,
    SEM_INSPECT, SEM_RELEASE,
};
use crate::Error;
use std::time::{Duration, Instant};

/// Largest capacity accepted.
pub const MAX_CAPACITY: u32 = 100_000;
/// Longest lease (ttl) accepted: 7 days.
pub const MAX_TTL: Duration = Duration::from_secs(7 * 24 * 3600);
/// Expired permits an acquire reclaims at most (the bound on its work).
pub const RECLAIM_PER_ACQUIRE: usize = 64;
const SCHEMA: u32 = 1;

/// The keys of one semaphore (all under its `{name}` hash tag).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SemaphoreKeys {
    /// `<ns>:sem:v1:{name}`: sorted set, holder token → lease end (server µs).
    pub permits: String,
    /// `<ns>:sem:v1:{name}:holders`: hash, holder token → fence of its permit.
    pub holders: String,
    /// `<ns>:sem:v1:{name}:fence`: the last fence issued.
    pub fence: String,
}

/// Result of an acquisition attempt.
#[derive(Debug)]
#[non_exhaustive]
pub enum Acquire {
    /// A permit is held.
    Acquired(Permit),
    /// All permits are taken; the earliest lease ends in `retry_after` (a release may free one
    /// sooner).
    Full {
        /// Time until the earliest live lease ends.
        retry_after: Duration,
    },
}

/// Settings of a [`Semaphore`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SemaphoreConfig {
    /// Permits in all, 1..=[`MAX_CAPACITY`]. Every caller of one semaphore should pass the same
    /// (it is passed on every acquisition, not stored).
    pub capacity: u32,
}

impl SemaphoreConfig {
    /// `capacity` permits (checked by [`Semaphore::new`]).
    pub fn new(capacity: u32) -> Self {
        SemaphoreConfig { capacity }
    }

    fn validate(&self) -> Result<(), Error> {
        if self.capacity == 0 || self.capacity > MAX_CAPACITY {
            return Err(Error::BadArgument(format!(
                "capacity must be in 1..={MAX_CAPACITY}, got {}",
                self.capacity
            )));
        }
        Ok(())
    }
}

/// A semaphore's state, read without changing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SemaphoreState {
    /// Unexpired permits.
    pub live: u32,
    /// Time until the earliest live lease ends (zero when none).
    pub next_expiry: Duration,
    /// Last fence issued.
    pub last_fence: Fence,
}

/// One named semaphore of a fixed capacity.
#[derive(Clone, Debug)]
pub struct Semaphore {
    client: Client,
    keys: SemaphoreKeys,
    config: SemaphoreConfig,
}

impl Semaphore {
    /// The semaphore `name` under `keyspace` with `config` (its capacity, validated).
    pub fn new(
        client: Client,
        keyspace: &Keyspace,
        name: &str,
        config: SemaphoreConfig,
    ) -> Result<Self, Error> {
        config.validate()?;
        let keys = SemaphoreKeys {
            permits: keyspace.key("sem", SCHEMA, name, &[])?,
            holders: keyspace.key("sem", SCHEMA, name, &["holders"])?,
            fence: keyspace.key("sem", SCHEMA, name, &["fence"])?,
        };
        Ok(Semaphore {
            client,
            keys,
            config,
        })
    }

    /// The keys of this semaphore.
    ///
    /// ```
    /// # fn demo(client: redis_atomic::Client) -> Result<(), redis_atomic::Error> {
    /// use redis_atomic::semaphore::{Semaphore, SemaphoreConfig};
    /// let ks = redis_atomic::Keyspace::new("app")?;
    /// let sem = Semaphore::new(client, &ks, "exports", SemaphoreConfig::new(5))?;
    /// assert_eq!(sem.keys().holders, "app:sem:v1:{exports}:holders");
    /// # Ok(()) }
    /// ```
    pub fn keys(&self) -> &SemaphoreKeys {
        &self.keys
    }

    /// The settings.
    pub fn config(&self) -> &SemaphoreConfig {
        &self.config
    }

    /// The capacity.
    pub fn capacity(&self) -> u32 {
        self.config.capacity
    }

    /// Tries once to take a permit for `ttl` with a fresh random owner token.
    pub async fn acquire(&self, ttl: Duration) -> Result<Acquire, Error> {
        // The caller never saw the token: a resend would take a second permit.
        self.acquire_with_token(&OwnerToken::random(), ttl)
            .await
            .map_err(|e| e.retry_safe_if(false))
    }

    /// Tries once with the caller's `token`. Retrying with the same token after an unknown
    /// outcome is safe: while it holds a permit, the same fence comes back (with a fresh lease).
    pub async fn acquire_with_token(
        &self,
        token: &OwnerToken,
        ttl: Duration,
    ) -> Result<Acquire, Error> {
        let ttl_ms = millis("ttl", ttl, MAX_TTL)?;
        let k = &self.keys;
        let sent = Instant::now();
        let args = [
            token.as_str().into(),
            Arg::Int(i64::from(self.config.capacity)),
            Arg::Int(ttl_ms),
        ];
        let reply = self
            .client
            .call(&SEM_ACQUIRE, [&k.permits, &k.holders, &k.fence], args)
            .await?;
        Ok(match reply {
            SemAcquireReply::Acquired { fence, .. } => Acquire::Acquired(Permit {
                sem: self.clone(),
                held: Held::new(token.clone(), fence, sent, ttl),
            }),
            SemAcquireReply::Full { retry_after } => Acquire::Full { retry_after },
        })
    }

    /// Gives back the permit `token` holds with `fence`, if it is still live: the by-parts twin
    /// of [`Permit::release`].
    pub async fn release(&self, token: &OwnerToken, fence: Fence) -> Result<Release, Error> {
        let fence = fence.0.to_string();
        let k = &self.keys;
        let args = [token.as_str().into(), fence.as_str().into()];
        let reply = self
            .client
            .call(&SEM_RELEASE, [&k.permits, &k.holders], args)
            .await?;
        Ok(match reply {
            SemReleaseReply::Released { fence } => Release::Released { fence },
            SemReleaseReply::Lost => Release::Lost,
        })
    }

    /// Sets the lease of the permit `token` holds with `fence` to end `ttl` from the server's
    /// now (absolute, never added): the by-parts twin of [`Permit::extend`].
    pub async fn extend(
        &self,
        token: &OwnerToken,
        fence: Fence,
        ttl: Duration,
    ) -> Result<Extend, Error> {
        let ttl_ms = millis("ttl", ttl, MAX_TTL)?;
        let fence = fence.0.to_string();
        let k = &self.keys;
        let args = [
            token.as_str().into(),
            fence.as_str().into(),
            Arg::Int(ttl_ms),
        ];
        let reply = self
            .client
            .call(&SEM_EXTEND, [&k.permits, &k.holders], args)
            .await?;
        Ok(match reply {
            SemExtendReply::Extended { fence, ttl } => Extend::Extended { fence, ttl },
            SemExtendReply::Lost => Extend::Lost,
        })
    }

    /// Counts live permits (read-only script: `EVALSHA_RO` / `FCALL_RO`).
    pub async fn inspect(&self) -> Result<SemaphoreState, Error> {
        let k = &self.keys;
        let reply = self
            .client
            .call(&SEM_INSPECT, [&k.permits, &k.fence], [])
            .await?;
        Ok(match reply {
            SemInspectReply::Permits {
                live,
                next_expiry,
                last_fence,
            } => SemaphoreState {
                live: u32::try_from(live).unwrap_or(u32::MAX),
                next_expiry,
                last_fence,
            },
        })
    }
}

/// A held permit. Release it with [`Permit::release`]; dropping it does nothing (it never blocks
/// and never spawns): the lease then simply runs out.
#[derive(Debug)]
#[must_use = "a permit should be released when the work is done"]
pub struct Permit {
    sem: Semaphore,
    held: Held,
}

impl Permit {
    /// The fence of this permit: pass it to every write the permit protects.
    pub fn fence(&self) -> Fence {
        self.held.fence
    }

    /// The owner token (reuse it to retry after an unknown outcome).
    pub fn token(&self) -> &OwnerToken {
        &self.held.token
    }

    /// The lease's length as last set (by the acquisition or the last confirmed extend).
    pub fn ttl(&self) -> Duration {
        self.held.ttl
    }

    /// Until when, by the local clock, the lease surely lasts: the time the acquiring (or last
    /// extending) request was sent plus its ttl.
    pub fn expires_by(&self) -> Instant {
        self.held.expires_by()
    }

    /// Sets the lease to end `ttl` from the server's now.
    pub async fn extend(&mut self, ttl: Duration) -> Result<Extend, Error> {
        let sent = Instant::now();
        let outcome = self
            .sem
            .extend(&self.held.token, self.held.fence, ttl)
            .await?;
        self.held.extended(&outcome, sent, ttl);
        Ok(outcome)
    }

    /// Gives the permit back if it is still live. After an unknown outcome, repeat it by parts
    /// ([`Semaphore::release`] with this permit's token and fence).
    pub async fn release(self) -> Result<Release, Error> {
        self.sem.release(&self.held.token, self.held.fence).await
    }
}

impl Lease for Permit {
    const PRIMITIVE: &'static str = "semaphore";

    lease_by_inherent!(Permit);

    /// Gives the permit back: a freed permit only lets another holder in sooner, and this holder
    /// was already told to stop.
    async fn give_back(&mut self) -> Result<(), Error> {
        let held = &self.held;
        self.sem.release(&held.token, held.fence).await.map(drop)
    }
}
