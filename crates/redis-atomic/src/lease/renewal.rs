//! The renewal task behind a [`Watched`](super::Watched) lease: one renewal per period through
//! the lease's own extend, its failures retried in the library's one retry loop within the
//! proven lease, and the verdict (and the give-back) when the lease is lost.

use super::watchdog::{LeaseLost, Status};
use super::{Extend, Lease};
use crate::client::retry::{self, Rules, Verdict};
use crate::observe::OPS_TOTAL;
use crate::{Error, RetryPolicy};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{oneshot, watch, Mutex};
use tokio::time::Instant;

/// What a renewal task does, from the lease's ttl and the config.
#[derive(Clone, Copy, Debug)]
pub(super) struct Plan {
    pub(super) ttl: Duration,
    pub(super) every: Duration,
    pub(super) margin: Duration,
}

pub(super) struct Renewer {
    pub(super) plan: Plan,
    pub(super) tx: watch::Sender<Status>,
    pub(super) failed: Arc<AtomicU32>,
}

impl Renewer {
    /// Renews until the lease is lost or the watchdog is stopped, then hands the lease back.
    pub(super) async fn run<L>(
        self,
        lease: L,
        first: Instant,
        deadline: Instant,
        mut stopped: oneshot::Receiver<()>,
    ) -> L
    where
        L: Lease + Send,
    {
        let lease = Mutex::new(lease);
        let verdict = tokio::select! {
            biased;
            _ = &mut stopped => None,
            why = self.renew(&lease, first, deadline) => Some(why),
        };
        let mut lease = lease.into_inner();
        if let Some(why) = verdict {
            self.tx.send_replace(Status::Lost(why));
            metrics::counter!(OPS_TOTAL, "primitive" => L::PRIMITIVE, "op" => "watchdog",
                "outcome" => why.label())
            .increment(1);
            if why == LeaseLost::Unconfirmed {
                if let Err(err) = lease.give_back().await {
                    tracing::debug!(error = %err, "giving back an unconfirmed lease failed");
                }
            }
        }
        lease
    }

    /// The renewal loop: one renewal (with its retries) per period, until a verdict.
    async fn renew<L>(
        &self,
        lease: &Mutex<L>,
        mut next: Instant,
        mut deadline: Instant,
    ) -> LeaseLost
    where
        L: Lease + Send,
    {
        loop {
            tokio::time::sleep_until(next.min(deadline)).await;
            let started = Instant::now();
            if started >= deadline {
                return LeaseLost::Unconfirmed;
            }
            match self.renewal(lease, started, deadline).await {
                Ok((Extend::Extended { .. }, sent)) => {
                    deadline = sent + self.plan.ttl - self.plan.margin;
                    next = sent + self.plan.every;
                    self.tx.send_replace(Status::Held { deadline });
                }
                Ok(_) => return LeaseLost::NotHeld,
                Err(_) => return LeaseLost::Unconfirmed,
            }
        }
    }

    /// One renewal through the one retry loop: every failure is retried (a renewal is absolute,
    /// so repeating it cannot add to the lease) with full-jitter backoff, each attempt racing the
    /// proven deadline, until the deadline leaves no room for another. The answer comes with the
    /// instant its request was sent.
    async fn renewal<L>(
        &self,
        lease: &Mutex<L>,
        started: Instant,
        deadline: Instant,
    ) -> Result<(Extend, Instant), Error>
    where
        L: Lease + Send,
    {
        let cap = self.plan.every.max(Duration::from_millis(2));
        let policy = RetryPolicy::new(u32::MAX, deadline - started).backoff(cap / 16, cap / 2);
        let judge = |e: &Error| match e.is_outcome_unknown() {
            true => Verdict::RetryUnknown,
            false => Verdict::Retry,
        };
        let rules = Rules {
            policy: &policy,
            started: started.into_std(),
            judge: &judge,
            conflict: &retry::no_conflict,
            on_retry: &retry::quiet,
        };
        let attempt = || async {
            let sent = Instant::now();
            let mut lease = lease.lock().await;
            tokio::select! {
                r = lease.extend(self.plan.ttl) => match r {
                    Ok(outcome) => Ok((outcome, sent)),
                    Err(err) => {
                        let failures = self.failed.fetch_add(1, Ordering::Relaxed) + 1;
                        tracing::warn!(error = %err, failures,
                            "lease renewal failed; retrying within the lease");
                        Err(err)
                    }
                },
                _ = tokio::time::sleep_until(deadline) => Err(Error::OutcomeUnknown {
                    reason: "no renewal answered before the proven lease ended".into(),
                    attempts: 1,
                    timed_out: true,
                    retry_safe: false,
                }),
            }
        };
        retry::run(rules, attempt).await.result
    }
}
