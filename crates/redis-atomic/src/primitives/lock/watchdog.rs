//! Lock watchdog: renews a held lease while its holder works, and says the moment it is lost.
//!
//! **Invariant.** While [`WatchedLock::is_held`] is true and [`WatchedLock::lost`] has not
//! resolved, the lease is provably held: every renewal that succeeded was *sent* at some local
//! instant `s`, so the server's lease lasts at least until `s + ttl` on the local clock, and the
//! watchdog declares the lock lost `margin` before that, whether or not the server answers.
//!
//! **Mechanism.** A tokio task calls [`Locks::extend`] (the `lock_extend` script, `retry: safe`)
//! every `renew_fraction × ttl`. A failed renewal (timeout, connection loss, `BUSY`, ...) is
//! retried with full-jitter backoff for as long as the last proven lease lasts: one error never
//! stops the renewals (Redisson #775, renewal stopped while the holder worked). Every renewal
//! races the proven deadline, so a stalled server cannot hold the loss signal back (Redisson
//! #5698, a late renewal let a second holder in while the first kept working unaware).
//!
//! **Retry.** Renewals are absolute (`PEXPIRE ttl`), so a renewal that ran twice is one renewal.
//! After a loss the task makes one best-effort release for its own token (a late renewal may have
//! re-armed the lease on the server after the holder was told to stop).
//!
//! **Not guaranteed.** The signal is only as prompt as the tokio runtime: a blocked runtime, a
//! paused process (GC, SIGSTOP) or a server whose clock jumps forward can end the lease before the
//! holder hears of it. The watchdog narrows that window, the fence closes it: pass
//! [`WatchedLock::fence`] to every protected write. Dropping a [`WatchedLock`] stops the renewals
//! (the lease then runs out); it never renews a lock nobody holds any more.

use super::{LockGuard, Locks};
use crate::lease::{Extend, Fence, OwnerToken, Release};
use crate::observe::OPS_TOTAL;
use crate::Error;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// How a [`WatchedLock`] renews its lease.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct WatchdogConfig {
    /// Renew after this fraction of the lease, in `(0, 1)`. Default 1/3: two renewals can fail
    /// before the lease is in danger.
    pub renew_fraction: f64,
    /// Declare the lock lost this fraction of the lease before the proven lease ends, in
    /// `[0, renew_fraction)`. Default 5%: room for timer lateness and clock-rate drift.
    pub margin_fraction: f64,
}

impl Default for WatchdogConfig {
    fn default() -> Self {
        WatchdogConfig {
            renew_fraction: 1.0 / 3.0,
            margin_fraction: 0.05,
        }
    }
}

impl WatchdogConfig {
    /// With this renewal fraction.
    pub fn renew_fraction(mut self, fraction: f64) -> Self {
        self.renew_fraction = fraction;
        self
    }

    /// With this safety margin fraction.
    pub fn margin_fraction(mut self, fraction: f64) -> Self {
        self.margin_fraction = fraction;
        self
    }

    fn check(&self) -> Result<(), Error> {
        let renew_ok = self.renew_fraction > 0.0 && self.renew_fraction < 1.0;
        let margin_ok = self.margin_fraction >= 0.0 && self.margin_fraction < self.renew_fraction;
        if renew_ok && margin_ok {
            Ok(())
        } else {
            Err(Error::BadArgument(format!(
                "watchdog fractions must satisfy 0 <= margin < renew < 1, got margin {} renew {}",
                self.margin_fraction, self.renew_fraction
            )))
        }
    }
}

/// Why a watched lock was lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LockLost {
    /// The server answered that this token no longer holds the lock (expired, taken over, or
    /// lost in a failover).
    NotHeld,
    /// No renewal succeeded before the proven lease ended (server unreachable or stalled).
    Unconfirmed,
}

impl LockLost {
    fn label(self) -> &'static str {
        match self {
            LockLost::NotHeld => "lost_not_held",
            LockLost::Unconfirmed => "lost_unconfirmed",
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Status {
    /// Held; loss is declared at `deadline` unless a renewal moves it.
    Held {
        deadline: Instant,
    },
    Lost(LockLost),
}

/// A lock whose lease a background task renews. Select on [`WatchedLock::lost`] while working.
///
/// ```no_run
/// # async fn demo(locks: redis_atomic::lock::Locks) -> Result<(), redis_atomic::Error> {
/// use redis_atomic::lock::Acquire;
/// use std::time::Duration;
/// if let Acquire::Acquired(guard) = locks.acquire("report-7", Duration::from_secs(10)).await? {
///     let held = guard.watchdog()?;
///     tokio::select! {
///         _ = tokio::time::sleep(Duration::from_secs(60)) => {} // the work, fenced by held.fence()
///         why = held.lost() => eprintln!("stopping: lock lost ({why:?})"),
///     }
///     held.release().await?;
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
#[must_use = "a watched lock should be released when the work is done"]
pub struct WatchedLock {
    locks: Locks,
    resource: String,
    token: OwnerToken,
    fence: Fence,
    status: watch::Receiver<Status>,
    failed: Arc<AtomicU32>,
    task: JoinHandle<()>,
}

impl LockGuard {
    /// Hands the lease to a watchdog with the default [`WatchdogConfig`].
    pub fn watchdog(self) -> Result<WatchedLock, Error> {
        self.watchdog_with(WatchdogConfig::default())
    }

    /// Hands the lease to a watchdog that renews it for `self`'s ttl every
    /// `renew_fraction × ttl`. Needs a tokio runtime.
    pub fn watchdog_with(self, config: WatchdogConfig) -> Result<WatchedLock, Error> {
        config.check()?;
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|_| Error::BadArgument("the lock watchdog needs a tokio runtime".into()))?;
        let (acquired_at, ttl) = (self.held.sent, self.held.ttl);
        let margin = ttl.mul_f64(config.margin_fraction);
        let deadline = Instant::from_std(acquired_at) + ttl - margin;
        let (tx, status) = watch::channel(Status::Held { deadline });
        let failed = Arc::new(AtomicU32::new(0));
        let renewer = Renewer {
            locks: self.locks.clone(),
            resource: self.resource.clone(),
            token: self.held.token.clone(),
            ttl,
            every: ttl.mul_f64(config.renew_fraction),
            margin,
            tx,
            failed: failed.clone(),
        };
        let first = Instant::from_std(acquired_at) + renewer.every;
        let task = runtime.spawn(renewer.run(first, deadline));
        Ok(WatchedLock {
            locks: self.locks,
            resource: self.resource,
            fence: self.held.fence,
            token: self.held.token,
            status,
            failed,
            task,
        })
    }
}

impl WatchedLock {
    /// The fence of this lease: pass it to every protected write.
    pub fn fence(&self) -> Fence {
        self.fence
    }

    /// The locked resource.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The owner token.
    pub fn token(&self) -> &OwnerToken {
        &self.token
    }

    /// Whether the lease is provably held right now (checked against the clock, so it is right
    /// even when the renewal task has not run yet).
    pub fn is_held(&self) -> bool {
        match *self.status.borrow() {
            Status::Held { deadline } => Instant::now() < deadline,
            Status::Lost(_) => false,
        }
    }

    /// Renewals that failed so far (each was retried while the lease lasted).
    pub fn failed_renewals(&self) -> u32 {
        self.failed.load(Ordering::Relaxed)
    }

    /// Resolves when the lock is lost, with the reason; never while it is held. The future owns
    /// what it needs (`'static`), so it can be stored and used in `tokio::select!`.
    pub fn lost(&self) -> impl std::future::Future<Output = LockLost> + Send + 'static {
        let mut status = self.status.clone();
        async move {
            loop {
                let current = *status.borrow_and_update();
                let deadline = match current {
                    Status::Lost(why) => return why,
                    Status::Held { deadline } => deadline,
                };
                if Instant::now() >= deadline {
                    return LockLost::Unconfirmed;
                }
                tokio::select! {
                    changed = status.changed() => {
                        if changed.is_err() {
                            // The renewal task ended without a verdict (released, dropped, or
                            // runtime shutting down): nothing renews any more.
                            tokio::time::sleep_until(deadline).await;
                            return LockLost::Unconfirmed;
                        }
                    }
                    // Loop to re-read: a renewal may have moved the deadline at the last moment.
                    _ = tokio::time::sleep_until(deadline) => {}
                }
            }
        }
    }

    /// Stops the renewals and releases the lock if this token still holds it.
    pub async fn release(self) -> Result<Release, Error> {
        self.task.abort();
        self.locks.release(&self.resource, &self.token).await
    }
}

impl Drop for WatchedLock {
    /// Stops renewing: a lock whose holder is gone must not be kept alive (Redisson #2714).
    fn drop(&mut self) {
        self.task.abort();
    }
}

struct Renewer {
    locks: Locks,
    resource: String,
    token: OwnerToken,
    ttl: Duration,
    every: Duration,
    margin: Duration,
    tx: watch::Sender<Status>,
    failed: Arc<AtomicU32>,
}

impl Renewer {
    async fn run(self, mut next: Instant, mut deadline: Instant) {
        let mut failures = 0u32;
        let why = loop {
            tokio::time::sleep_until(next.min(deadline)).await;
            if Instant::now() >= deadline {
                break LockLost::Unconfirmed;
            }
            let sent = Instant::now();
            let renewal = tokio::select! {
                r = self.locks.extend(&self.resource, &self.token, self.ttl) => r,
                _ = tokio::time::sleep_until(deadline) => break LockLost::Unconfirmed,
            };
            match renewal {
                Ok(Extend::Extended { .. }) => {
                    failures = 0;
                    deadline = sent + self.ttl - self.margin;
                    next = sent + self.every;
                    self.tx.send_replace(Status::Held { deadline });
                }
                Ok(_) => break LockLost::NotHeld,
                Err(err) => {
                    failures += 1;
                    self.failed.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(error = %err, failures, "lock renewal failed; retrying within the lease");
                    let cap = self.every.max(Duration::from_millis(2));
                    let pause = crate::client::full_jitter(cap / 16, cap / 2, failures);
                    next = Instant::now() + pause.max(Duration::from_millis(1));
                }
            }
        };
        self.tx.send_replace(Status::Lost(why));
        metrics::counter!(OPS_TOTAL, "primitive" => "lock", "op" => "watchdog", "outcome" => why.label())
            .increment(1);
        if why == LockLost::Unconfirmed {
            // Best effort: a renewal that ran late on the server may have re-armed the lease.
            let _ = self.locks.release(&self.resource, &self.token).await;
        }
    }
}
