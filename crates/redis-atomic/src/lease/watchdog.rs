//! The watchdog: renews any lease while its holder works, and says the moment it is lost.
//!
//! **Invariant.** While [`Watched::is_held`] is true and [`Watched::lost`] has not resolved, the
//! lease is provably held: every renewal that succeeded was *sent* at some local instant `s`, so
//! the server's lease lasts at least until `s + ttl` on the local clock, and the watchdog declares
//! the lease lost `margin` before that, whether or not the server answers.
//!
//! **Mechanism.** A tokio task owns the handle and calls its [`Lease::extend`] every
//! `renew_fraction × ttl`: the handle's own fenced path (token and fence; for a lock, native
//! `SET … IFEQ` where the server has it), one script or command, `retry: safe`. A failed renewal
//! (timeout, connection loss, `BUSY`, ...) is retried in the library's one retry loop
//! (`client::retry::run`) with full-jitter backoff for as long as the last proven lease lasts:
//! one error never stops the renewals (Redisson #775: renewal stopped while the holder worked).
//! Every renewal races the proven deadline, so a stalled server cannot hold the loss signal back
//! (Redisson #5698: a late renewal let a second holder in while the first kept working unaware).
//!
//! **Retry.** Renewals are absolute (`ttl` from the server's now), so a renewal that ran twice is
//! one renewal. After an unconfirmed loss the task calls [`Lease::give_back`] once: a renewal
//! that ran late may have re-armed the lease on the server after the holder was told to stop.
//! Locks and permits give it back (release by token and fence); idempotency claims and jobs do
//! not (see their implementations for why).
//!
//! **Not guaranteed.** The signal is only as prompt as the tokio runtime: a blocked runtime, a
//! paused process (GC, SIGSTOP) or a server whose clock jumps forward can end the lease before the
//! holder hears of it. The watchdog narrows that window, the fence closes it: pass
//! [`Watched::fence`] to every protected write. Dropping a [`Watched`] stops the renewals (the
//! lease then runs out); it never renews a lease nobody holds any more.

use super::renewal::{Plan, Renewer};
use super::{Fence, Lease, OwnerToken};
use crate::Error;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// How a [`Watched`] lease is renewed.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct WatchdogConfig {
    /// Renew after this fraction of the lease, in `(0, 1)`. Default 1/3: two renewals can fail
    /// before the lease is in danger.
    pub renew_fraction: f64,
    /// Declare the lease lost this fraction of the lease before the proven lease ends, in
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

/// Why a watched lease was lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LeaseLost {
    /// The server answered that this token and fence no longer hold the lease (`lost`: expired
    /// and taken over, ended another way, or lost in a failover).
    NotHeld,
    /// No renewal succeeded before the proven lease ended (server unreachable or stalled).
    Unconfirmed,
}

impl LeaseLost {
    /// The `outcome` label of the watchdog's `redis_atomic_ops_total{op="watchdog"}`.
    pub(super) fn label(self) -> &'static str {
        match self {
            LeaseLost::NotHeld => "lost",
            LeaseLost::Unconfirmed => "lost_unconfirmed",
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub(super) enum Status {
    /// Held; loss is declared at `deadline` unless a renewal moves it.
    Held {
        deadline: Instant,
    },
    Lost(LeaseLost),
}

/// A lease whose renewals a background task makes. Select on [`Watched::lost`] while working;
/// [`Watched::stop`] hands the lease back to end it with its own verb.
///
/// ```no_run
/// # async fn demo(locks: redis_atomic::lock::Locks) -> Result<(), redis_atomic::Error> {
/// use redis_atomic::lock::Acquire;
/// use std::time::Duration;
/// if let Acquire::Acquired(guard) = locks.acquire("report-7", Duration::from_secs(10)).await? {
///     let held = guard.watch()?;
///     tokio::select! {
///         _ = tokio::time::sleep(Duration::from_secs(60)) => {} // the work, fenced by held.fence()
///         why = held.lost() => eprintln!("stopping: lock lost ({why:?})"),
///     }
///     held.stop().await?.release().await?;
/// }
/// # Ok(()) }
/// ```
#[must_use = "a watched lease should be stopped and ended when the work is done"]
pub struct Watched<L: Lease> {
    token: OwnerToken,
    fence: Fence,
    status: watch::Receiver<Status>,
    failed: Arc<AtomicU32>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<L>>,
}

impl<L> Watched<L>
where
    L: Lease + Send + 'static,
{
    /// Hands `lease` to a watchdog with the default [`WatchdogConfig`].
    pub fn new(lease: L) -> Result<Self, Error> {
        Self::with_config(lease, WatchdogConfig::default())
    }

    /// Hands `lease` to a watchdog that renews it for its [`Lease::ttl`] every
    /// `renew_fraction × ttl`. Needs a tokio runtime.
    pub fn with_config(lease: L, config: WatchdogConfig) -> Result<Self, Error> {
        config.check()?;
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|_| Error::BadArgument("the lease watchdog needs a tokio runtime".into()))?;
        let ttl = lease.ttl();
        let ends = Instant::from_std(lease.expires_by());
        let plan = Plan {
            ttl,
            every: ttl.mul_f64(config.renew_fraction),
            margin: ttl.mul_f64(config.margin_fraction),
        };
        let deadline = ends - plan.margin;
        let (tx, status) = watch::channel(Status::Held { deadline });
        let (stop, stopped) = oneshot::channel();
        let failed = Arc::new(AtomicU32::new(0));
        let (token, fence) = (lease.token().clone(), lease.fence());
        let first = ends - ttl + plan.every;
        let renewer = Renewer {
            plan,
            tx,
            failed: failed.clone(),
        };
        let task = runtime.spawn(renewer.run(lease, first, deadline, stopped));
        Ok(Watched {
            token,
            fence,
            status,
            failed,
            stop: Some(stop),
            task: Some(task),
        })
    }

    /// Stops the renewals and hands the lease back, to end it with its own verb (`release`,
    /// `complete`, `ack`, ...). A renewal in flight is abandoned (renewals are absolute, so one
    /// that ran anyway changed nothing but the deadline). Fails only if the runtime shut the
    /// renewal task down first.
    pub async fn stop(mut self) -> Result<L, Error> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let task = self.task.take();
        match task {
            Some(task) => task.await.map_err(|e| {
                Error::Client(format!("the watchdog task ended without its lease: {e}"))
            }),
            None => Err(Error::Client("the watchdog was already stopped".into())),
        }
    }
}

impl<L: Lease> Watched<L> {
    /// The fence of this lease: pass it to every protected write.
    pub fn fence(&self) -> Fence {
        self.fence
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

    /// Resolves when the lease is lost, with the reason; never while it is held. The future owns
    /// what it needs (`'static`), so it can be stored and used in `tokio::select!`.
    pub fn lost(&self) -> impl std::future::Future<Output = LeaseLost> + Send + 'static {
        let mut status = self.status.clone();
        async move {
            loop {
                let current = *status.borrow_and_update();
                let deadline = match current {
                    Status::Lost(why) => return why,
                    Status::Held { deadline } => deadline,
                };
                if Instant::now() >= deadline {
                    return LeaseLost::Unconfirmed;
                }
                tokio::select! {
                    changed = status.changed() => {
                        if changed.is_err() {
                            // The renewal task ended without a verdict (stopped, dropped, or
                            // runtime shutting down): nothing renews any more.
                            tokio::time::sleep_until(deadline).await;
                            return LeaseLost::Unconfirmed;
                        }
                    }
                    // Loop to re-read: a renewal may have moved the deadline at the last moment.
                    _ = tokio::time::sleep_until(deadline) => {}
                }
            }
        }
    }
}

impl<L: Lease> std::fmt::Debug for Watched<L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watched")
            .field("primitive", &L::PRIMITIVE)
            .field("token", &self.token)
            .field("fence", &self.fence)
            .field("held", &self.is_held())
            .finish()
    }
}

impl<L: Lease> Drop for Watched<L> {
    /// Stops renewing: a lease whose holder is gone must not be kept alive (Redisson #2714).
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}
