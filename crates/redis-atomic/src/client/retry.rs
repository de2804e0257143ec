//! Bounded retries with full-jitter backoff.
//!
//! Every retry loop in the library is bounded twice: by a number of attempts and by a deadline.
//! The wait before attempt `n` is uniform in `[0, min(max_backoff, base * 2^n))` ("full jitter"),
//! which spreads a herd of clients that failed together.

use std::time::Duration;

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
