//! Bounded retries with full-jitter backoff.
//!
//! Every retry loop in the library is bounded twice: by a number of attempts and by a deadline.
//! The wait before attempt `n` is uniform in `[0, min(max_backoff, base * 2^n))` ("full jitter"),
//! which spreads a herd of clients that failed together.

use crate::Error;
use std::future::Future;
use std::time::{Duration, Instant};

/// How many times, and for how long, the client retries a request that it may retry.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// Attempts in all, the first included (1 = never retry).
    pub max_attempts: u32,
    /// No retry starts after this much time since the first attempt.
    pub deadline: Duration,
    /// Backoff base.
    pub base_backoff: Duration,
    /// Backoff cap.
    pub max_backoff: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            deadline: Duration::from_secs(3),
            base_backoff: Duration::from_millis(5),
            max_backoff: Duration::from_millis(250),
        }
    }
}

impl RetryPolicy {
    /// Never retry.
    pub fn none() -> Self {
        RetryPolicy {
            max_attempts: 1,
            ..Self::default()
        }
    }

    /// A policy with `max_attempts` attempts within `deadline`.
    pub fn new(max_attempts: u32, deadline: Duration) -> Self {
        RetryPolicy {
            max_attempts: max_attempts.max(1),
            deadline,
            ..Self::default()
        }
    }

    /// The full-jitter wait before retry number `retry` (1-based).
    pub fn backoff(&self, retry: u32) -> Duration {
        full_jitter(self.base_backoff, self.max_backoff, retry)
    }
}

/// Uniform in `[0, min(cap, base * 2^n))`.
pub fn full_jitter(base: Duration, cap: Duration, n: u32) -> Duration {
    let ceiling = base
        .saturating_mul(1u32.checked_shl(n.min(20)).unwrap_or(u32::MAX))
        .min(cap);
    let micros = u64::try_from(ceiling.as_micros()).unwrap_or(u64::MAX);
    if micros == 0 {
        return Duration::ZERO;
    }
    Duration::from_micros(rand::random_range(0..micros))
}

/// The error a call ends with: the last attempt's, except that a call one of whose attempts may
/// have run is an unknown outcome even if its last attempt surely did not run (e.g. a timeout,
/// then a refused reconnect while the server restarts).
fn final_error(err: Error, attempts: u32, may_have_run: Option<String>) -> Error {
    match (err, may_have_run) {
        (Error::OutcomeUnknown { reason, .. }, _) => Error::OutcomeUnknown { reason, attempts },
        (err, Some(earlier)) if err.nothing_ran() || err.is_transient() => Error::OutcomeUnknown {
            reason: format!("an earlier attempt may have run ({earlier}); the last: {err}"),
            attempts,
        },
        (err, _) => err,
    }
}

/// Runs `attempt` until it succeeds or fails for good: a request safe to repeat (the caller's
/// promise) is sent again after a transient refusal or an unknown outcome, within `policy`. The
/// error it ends with is an unknown outcome whenever any attempt may have run.
pub(crate) async fn resend<T, F, Fut>(policy: &RetryPolicy, attempt: F) -> Result<T, Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, Error>>,
{
    resend_with(policy, Instant::now(), true, |_, _| {}, attempt).await
}

/// The one bounded retry loop of the client. A transient refusal (nothing ran) is always sent
/// again; an unknown outcome only when `unknown_is_safe` (repeating the request cannot repeat its
/// effect). `before_retry` sees each error that is retried, with its attempt number. Attempts
/// and the deadline count from `started`. Once an attempt may have run, the call never ends with
/// an error that says "nothing ran" ([`final_error`]).
pub(crate) async fn resend_with<T, F, Fut>(
    policy: &RetryPolicy,
    started: Instant,
    unknown_is_safe: bool,
    mut before_retry: impl FnMut(&Error, u32),
    mut attempt: F,
) -> Result<T, Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, Error>>,
{
    let mut n = 1;
    let mut may_have_run: Option<String> = None;
    loop {
        let err = match attempt().await {
            Ok(value) => return Ok(value),
            Err(err) => err,
        };
        if err.is_outcome_unknown() && may_have_run.is_none() {
            may_have_run = Some(err.to_string());
        }
        let backoff = policy.backoff(n);
        let may_retry = err.is_transient() || (err.is_outcome_unknown() && unknown_is_safe);
        if !may_retry || n >= policy.max_attempts || started.elapsed() + backoff > policy.deadline {
            return Err(final_error(err, n, may_have_run));
        }
        before_retry(&err, n);
        tokio::time::sleep(backoff).await;
        n += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Backoff never exceeds its cap and grows with the attempt number.
    #[test]
    fn jitter_bounds() {
        let cap = Duration::from_millis(100);
        for n in 0..40 {
            let d = full_jitter(Duration::from_millis(5), cap, n);
            assert!(d < cap);
            assert!(d < Duration::from_millis(5) * 2u32.pow(n.min(20)));
        }
        assert_eq!(full_jitter(Duration::ZERO, cap, 3), Duration::ZERO);
    }
}
