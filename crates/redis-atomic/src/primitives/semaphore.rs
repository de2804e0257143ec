//! Counting semaphores with expiring, fenced permits.
//!
//! **Invariant.** At no instant of the server's clock do more than `capacity` unexpired permits
//! exist, even when holders die without releasing; every acquisition gets a fence strictly
//! greater than every fence issued before it for that semaphore.
//!
//! **Keys** (one `{name}` hash tag): `<ns>:sem:v1:{name}` is a sorted set holder → lease end
//! (server ms); `<ns>:sem:v1:{name}:holders` a hash holder → fence; `<ns>:sem:v1:{name}:fence`
//! the last fence issued (kept a week beyond the lease, like the lock's).
//!
//! **Mechanism.** Lua scripts (`sem_acquire`, `sem_release`, `sem_refresh`, `sem_inspect`): counting
//! live permits and adding one must not interleave. Acquire first reclaims up to
//! [`RECLAIM_PER_ACQUIRE`] expired permits (bounded work per call), then counts only leases that
//! end after the server's now, so expired permits left over never block and never count.
//!
//! **Retry.** All scripts are `retry: safe`. A holder that acquires again while it holds a
//! permit gets the same fence back and a fresh lease, so after [`Error::OutcomeUnknown`] retry
//! with the same [`OwnerToken`]. Release and refresh act only for the holder *and* fence of a
//! live permit, so a holder whose permit expired and was re-acquired under the same token cannot
//! release or extend the newer one with the old permit.
//!
//! **Not guaranteed.** A holder paused past its lease (GC, SIGSTOP) may still be working while
//! its permit has been given to someone else: capacity holds on the server, not in the paused
//! process. Check [`Permit::expires_by`] or refresh before long steps, and fence downstream
//! writes. Capacity is passed on every call: callers that disagree about it each enforce their
//! own number. Asynchronous replication can lose permits in a failover (more than `capacity`
//! holders until the lost leases would have ended).

use crate::client::{Arg, Client};
use crate::keys::Keyspace;
use crate::lease::{Fence, OwnerToken};
use crate::reply::{millis, Reply};
use crate::script::registry::{SEM_ACQUIRE, SEM_INSPECT, SEM_REFRESH, SEM_RELEASE};
use crate::Error;
use std::time::{Duration, Instant};

/// Largest capacity accepted.
pub const MAX_CAPACITY: u32 = 100_000;
/// Longest lease accepted: 7 days.
pub const MAX_LEASE: Duration = Duration::from_secs(7 * 24 * 3600);
/// Expired permits an acquire reclaims at most (the bound on its work).
pub const RECLAIM_PER_ACQUIRE: usize = 64;
const SCHEMA: u32 = 1;

/// A held permit: its holder and fence. Release or refresh it through its [`Semaphore`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use = "a permit should be released when the work is done"]
pub struct Permit {
    holder: OwnerToken,
    fence: Fence,
    sent: Instant,
    lease: Duration,
}

impl Permit {
    /// The fence of this permit.
    pub fn fence(&self) -> Fence {
        self.fence
    }

    /// The holder token.
    pub fn holder(&self) -> &OwnerToken {
        &self.holder
    }

    /// Until when, by the local clock, the lease surely lasts (request sent + lease).
    pub fn expires_by(&self) -> Instant {
        self.sent + self.lease
    }
}

/// Result of an acquisition attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Acquire {
    /// A permit is held.
    Acquired {
        /// The permit.
        permit: Permit,
        /// Its fence (also [`Permit::fence`]).
        fence: Fence,
    },
    /// All permits are taken; the earliest lease ends in `retry_after` (a release may free one
    /// sooner).
    Full {
        /// Time until the earliest live lease ends.
        retry_after: Duration,
    },
}

/// Result of a release.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Release {
    /// The live permit was given back.
    Released {
        /// Its fence.
        fence: Fence,
    },
    /// The permit was not live (expired, reclaimed, or already released).
    NotHeld,
}

/// Result of a refresh.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refresh {
    /// The lease now ends `lease` from the server's now.
    Refreshed {
        /// The (unchanged) fence.
        fence: Fence,
    },
    /// The permit is not live any more.
    NotHeld,
}

/// A semaphore's state, read without changing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SemState {
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
    permits: String,
    holders: String,
    fence: String,
    capacity: u32,
}

impl Semaphore {
    /// The semaphore `name` under `keyspace` with `capacity` permits (1..=[`MAX_CAPACITY`]).
    pub fn new(
        client: Client,
        keyspace: &Keyspace,
        name: &str,
        capacity: u32,
    ) -> Result<Self, Error> {
        if capacity == 0 || capacity > MAX_CAPACITY {
            return Err(Error::BadArgument(format!(
                "capacity must be in 1..={MAX_CAPACITY}, got {capacity}"
            )));
        }
        Ok(Semaphore {
            client,
            permits: keyspace.key("sem", SCHEMA, name, &[])?,
            holders: keyspace.key("sem", SCHEMA, name, &["holders"])?,
            fence: keyspace.key("sem", SCHEMA, name, &["fence"])?,
            capacity,
        })
    }

    /// The capacity.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Tries once to take a permit for `holder` for `lease`. Retrying with the same holder after
    /// an unknown outcome is safe: while it holds a permit, the same fence comes back.
    pub async fn acquire(&self, holder: &OwnerToken, lease: Duration) -> Result<Acquire, Error> {
        let lease_ms = millis("lease", lease, MAX_LEASE.as_millis() as u64)?;
        let sent = Instant::now();
        let value = self
            .client
            .invoke(
                &SEM_ACQUIRE,
                [&self.permits, &self.holders, &self.fence],
                [
                    holder.as_str().into(),
                    Arg::Int(i64::from(self.capacity)),
                    Arg::Int(lease_ms),
                ],
            )
            .await?;
        let reply = Reply::parse(SEM_ACQUIRE.name, value)?;
        match reply.status.as_str() {
            "acquired" => {
                let fence = Fence(reply.uint(0)?);
                let permit = Permit {
                    holder: holder.clone(),
                    fence,
                    sent,
                    lease,
                };
                Ok(Acquire::Acquired { permit, fence })
            }
            "full" => Ok(Acquire::Full {
                retry_after: Duration::from_millis(reply.uint(0)?),
            }),
            _ => Err(reply.unexpected()),
        }
    }

    /// Gives `permit` back, if it is still live.
    pub async fn release(&self, permit: &Permit) -> Result<Release, Error> {
        let fence = permit.fence.0.to_string();
        let value = self
            .client
            .invoke(
                &SEM_RELEASE,
                [&self.permits, &self.holders],
                [permit.holder.as_str().into(), fence.as_str().into()],
            )
            .await?;
        let reply = Reply::parse(SEM_RELEASE.name, value)?;
        match reply.status.as_str() {
            "released" => Ok(Release::Released {
                fence: Fence(reply.uint(0)?),
            }),
            "not_held" => Ok(Release::NotHeld),
            _ => Err(reply.unexpected()),
        }
    }

    /// Sets `permit`'s lease to end `lease` from the server's now (absolute, never added).
    pub async fn refresh(&self, permit: &mut Permit, lease: Duration) -> Result<Refresh, Error> {
        let lease_ms = millis("lease", lease, MAX_LEASE.as_millis() as u64)?;
        let fence = permit.fence.0.to_string();
        let sent = Instant::now();
        let value = self
            .client
            .invoke(
                &SEM_REFRESH,
                [&self.permits, &self.holders],
                [
                    permit.holder.as_str().into(),
                    fence.as_str().into(),
                    Arg::Int(lease_ms),
                ],
            )
            .await?;
        let reply = Reply::parse(SEM_REFRESH.name, value)?;
        match reply.status.as_str() {
            "refreshed" => {
                permit.sent = sent;
                permit.lease = lease;
                Ok(Refresh::Refreshed {
                    fence: Fence(reply.uint(0)?),
                })
            }
            "not_held" => Ok(Refresh::NotHeld),
            _ => Err(reply.unexpected()),
        }
    }

    /// Counts live permits (read-only script: `EVALSHA_RO` / `FCALL_RO`).
    pub async fn inspect(&self) -> Result<SemState, Error> {
        let value = self
            .client
            .invoke(&SEM_INSPECT, [&self.permits, &self.fence], [])
            .await?;
        let reply = Reply::parse(SEM_INSPECT.name, value)?;
        if reply.status != "permits" {
            return Err(reply.unexpected());
        }
        Ok(SemState {
            live: u32::try_from(reply.uint(0)?).unwrap_or(u32::MAX),
            next_expiry: Duration::from_millis(reply.uint(1)?),
            last_fence: Fence(reply.uint(2)?),
        })
    }
}
