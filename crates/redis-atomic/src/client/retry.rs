//! The one bounded retry loop, with full-jitter backoff.
//!
//! Every retry in the library goes through [`run`]: script calls (by each script's retry class,
//! or a per-call override), the idempotent commands primitives send themselves, optimistic
//! transactions that conflicted, waits for a busy lock, the watchdog's renewals of a lease
//! ([`crate::lease::Watched`]) and the `FUNCTION LIST` questions after a refused `FUNCTION LOAD`.
//! It is bounded twice, by a number of attempts and by a deadline; the wait before retry `n` is
//! uniform in `[0, min(max_backoff, base * 2^n))` ("full jitter"), which spreads a herd of clients
//! that failed together.
//!
//! Two named exceptions repeat a request inside one attempt, without a pause, because the first
//! send surely did not run: the one reload after `NOSCRIPT` (or a missing Function) followed by
//! one resend, and the redirects `Client::command` follows (`ASK`, `MOVED`: the request went to
//! a node that no longer serves the slot; at most three in a chain). Each is bounded per attempt,
//! so every attempt stays bounded; they are not retries of a failure.
//!
//! What is retried: a transient refusal (nothing ran) always; an unknown outcome, or a reply the
//! client could not use ([`Error::BadReply`]: the request ran), only when the caller says
//! repeating cannot repeat the effect; a *conflict* (a value the caller marks as "not
//! yet": an aborted `EXEC`, a held lock) until attempts or time run out, when that last value is
//! returned. Once any attempt may have run, the call never ends with an error that says
//! "nothing ran".

use crate::Error;
use std::future::Future;
use std::time::{Duration, Instant};

/// How many times, and for how long, a call may be retried.
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
    /// 4 attempts within 3 s, backoff from 5 ms up to 250 ms: for failures (refusals, timeouts).
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

    /// A policy with `max_attempts` attempts (at least 1) within `deadline`.
    pub fn new(max_attempts: u32, deadline: Duration) -> Self {
        RetryPolicy {
            max_attempts: max_attempts.max(1),
            deadline,
            ..Self::default()
        }
    }

    /// For contention (an optimistic transaction that conflicted, a lock someone holds): 16
    /// attempts within 2 s, backoff from 1 ms up to 50 ms, since the other party usually
    /// finishes within milliseconds.
    pub fn contention() -> Self {
        RetryPolicy {
            max_attempts: 16,
            deadline: Duration::from_secs(2),
            base_backoff: Duration::from_millis(1),
            max_backoff: Duration::from_millis(50),
        }
    }

    /// With this deadline.
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    /// With this many attempts (at least 1).
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts.max(1);
        self
    }

    /// With this backoff base and cap.
    pub fn backoff(mut self, base: Duration, cap: Duration) -> Self {
        self.base_backoff = base;
        self.max_backoff = cap;
        self
    }

    /// The full-jitter wait before retry number `retry` (1-based).
    pub fn pause(&self, retry: u32) -> Duration {
        full_jitter(self.base_backoff, self.max_backoff, retry)
    }
}

/// Uniform in `[0, min(cap, base * 2^n))`.
pub(crate) fn full_jitter(base: Duration, cap: Duration, n: u32) -> Duration {
    let ceiling = base
        .saturating_mul(1u32.checked_shl(n.min(20)).unwrap_or(u32::MAX))
        .min(cap);
    let micros = u64::try_from(ceiling.as_micros()).unwrap_or(u64::MAX);
    if micros == 0 {
        return Duration::ZERO;
    }
    Duration::from_micros(rand::random_range(0..micros))
}

/// How [`run`] treats one failed attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Do not retry: the call ends with this error.
    Fail,
    /// Retry: nothing ran.
    Retry,
    /// Retry, although the attempt may have run (repeating it cannot repeat its effect).
    RetryUnknown,
}

impl Verdict {
    /// The usual rule: transient refusals are retried; unknown outcomes and unusable replies
    /// only when `unknown_is_safe`.
    pub(crate) fn of(err: &Error, unknown_is_safe: bool) -> Verdict {
        if err.is_transient() {
            Verdict::Retry
        } else if err.ran_unseen() && unknown_is_safe {
            Verdict::RetryUnknown
        } else {
            Verdict::Fail
        }
    }
}

/// What [`run`] needs besides the attempt itself.
pub(crate) struct Rules<'a, T> {
    pub(crate) policy: &'a RetryPolicy,
    /// Attempts and the deadline count from here.
    pub(crate) started: Instant,
    /// Decides each failure.
    pub(crate) judge: &'a (dyn Fn(&Error) -> Verdict + Sync),
    /// `Some(cap)` marks a successful value as a conflict: retried after a pause of at most
    /// `cap`, until attempts or the deadline run out (then the value is returned). The last
    /// attempt is made at the deadline rather than skipped.
    pub(crate) conflict: &'a (dyn Fn(&T) -> Option<Duration> + Sync),
    /// Sees each retry, with the attempt number that is retried: the failure, or `None` for a
    /// conflict.
    pub(crate) on_retry: &'a (dyn Fn(Option<&Error>, u32) + Sync),
}

/// The outcome of [`run`] and how many attempts it took.
pub(crate) struct Ran<T> {
    pub(crate) result: Result<T, Error>,
    pub(crate) attempts: u32,
}

/// Never a conflict.
pub(crate) fn no_conflict<T>(_: &T) -> Option<Duration> {
    None
}

/// Nothing to observe.
pub(crate) fn quiet(_: Option<&Error>, _: u32) {}

/// The one bounded retry loop (see the module doc).
pub(crate) async fn run<T, F, Fut>(rules: Rules<'_, T>, mut attempt: F) -> Ran<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, Error>>,
{
    let policy = rules.policy;
    let mut n = 1;
    let mut may_have_run: Option<String> = None;
    let mut any_timed_out = false;
    loop {
        let err = match attempt().await {
            Ok(value) => match (rules.conflict)(&value) {
                Some(cap) if n < policy.max_attempts && !left(policy, rules.started).is_zero() => {
                    let left = left(policy, rules.started);
                    let pause = policy.pause(n).min(cap).min(left);
                    (rules.on_retry)(None, n);
                    tokio::time::sleep(pause).await;
                    n += 1;
                    continue;
                }
                _ => return done(Ok(value), n),
            },
            Err(err) => err,
        };
        let verdict = (rules.judge)(&err);
        any_timed_out |= err.timed_out();
        if err.ran_unseen() && verdict != Verdict::Retry && may_have_run.is_none() {
            may_have_run = Some(err.to_string());
        }
        let pause = policy.pause(n);
        let exhausted =
            n >= policy.max_attempts || rules.started.elapsed() + pause > policy.deadline;
        if verdict == Verdict::Fail || exhausted {
            return done(Err(final_error(err, n, may_have_run, any_timed_out)), n);
        }
        (rules.on_retry)(Some(&err), n);
        tokio::time::sleep(pause).await;
        n += 1;
    }
}

fn left(policy: &RetryPolicy, started: Instant) -> Duration {
    policy.deadline.saturating_sub(started.elapsed())
}

fn done<T>(result: Result<T, Error>, attempts: u32) -> Ran<T> {
    Ran { result, attempts }
}

/// The error a call ends with: the last attempt's, except that a call one of whose attempts may
/// have run is an unknown outcome even if its last attempt surely did not run (e.g. a timeout,
/// then a refused reconnect while the server restarts), and that an unknown outcome says it
/// timed out when any attempt did.
fn final_error(err: Error, attempts: u32, may_have_run: Option<String>, timed_out: bool) -> Error {
    match (err, may_have_run) {
        (Error::OutcomeUnknown { reason, .. }, _) => Error::OutcomeUnknown {
            reason,
            attempts,
            timed_out,
            retry_safe: false,
        },
        (err, Some(earlier)) if err.nothing_ran() || err.is_transient() => Error::OutcomeUnknown {
            reason: format!("an earlier attempt may have run ({earlier}); the last: {err}"),
            attempts,
            timed_out,
            retry_safe: false,
        },
        (err, _) => err,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

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

    fn unknown() -> Error {
        Error::OutcomeUnknown {
            reason: "lost".into(),
            attempts: 1,
            timed_out: true,
            retry_safe: false,
        }
    }

    fn refused() -> Error {
        Error::Rejected {
            code: "BUSY".into(),
            message: "busy".into(),
        }
    }

    async fn drive(
        policy: RetryPolicy,
        safe: bool,
        results: Vec<Result<u32, Error>>,
    ) -> (Result<u32, Error>, u32) {
        let calls = AtomicU32::new(0);
        let results = std::sync::Mutex::new(results.into_iter());
        let judge = move |e: &Error| Verdict::of(e, safe);
        let ran = run(
            Rules {
                policy: &policy,
                started: Instant::now(),
                judge: &judge,
                conflict: &|v: &u32| (*v == 0).then_some(Duration::from_millis(1)),
                on_retry: &quiet,
            },
            || {
                calls.fetch_add(1, Ordering::SeqCst);
                let next = results.lock().unwrap().next().unwrap_or(Ok(7));
                async move { next }
            },
        )
        .await;
        assert_eq!(ran.attempts, calls.load(Ordering::SeqCst));
        (ran.result, ran.attempts)
    }

    /// Unknown outcomes are retried only when safe; once one may have run, a later "nothing
    /// ran" still ends as unknown.
    #[tokio::test]
    async fn unknown_outcomes_follow_the_class() {
        let p = RetryPolicy::new(3, Duration::from_secs(5)).backoff(Duration::ZERO, Duration::ZERO);
        let (r, n) = drive(p.clone(), false, vec![Err(unknown())]).await;
        assert!(matches!(r, Err(Error::OutcomeUnknown { .. })) && n == 1);
        let (r, n) = drive(p.clone(), true, vec![Err(unknown())]).await;
        assert_eq!((r.ok(), n), (Some(7), 2));
        let (r, n) = drive(
            p,
            true,
            vec![Err(unknown()), Err(refused()), Err(refused())],
        )
        .await;
        assert!(
            matches!(r, Err(Error::OutcomeUnknown { attempts: 3, .. })),
            "{r:?}"
        );
        assert_eq!(n, 3);
    }

    /// A reply the client could not use is treated like an unknown outcome: resent only when
    /// safe, and a later refusal still ends as unknown.
    #[tokio::test]
    async fn bad_replies_follow_the_class() {
        let bad = || Error::BadReply {
            script: "s",
            detail: "corrupt".into(),
        };
        let p = RetryPolicy::new(3, Duration::from_secs(5)).backoff(Duration::ZERO, Duration::ZERO);
        let (r, n) = drive(p.clone(), false, vec![Err(bad())]).await;
        assert!(matches!(r, Err(Error::BadReply { .. })) && n == 1, "{r:?}");
        let (r, n) = drive(p.clone(), true, vec![Err(bad())]).await;
        assert_eq!((r.ok(), n), (Some(7), 2));
        let (r, _) = drive(p, true, vec![Err(bad()), Err(refused()), Err(refused())]).await;
        assert!(matches!(r, Err(Error::OutcomeUnknown { .. })), "{r:?}");
    }

    /// Conflicts are retried until attempts run out, then the last value is returned.
    #[tokio::test]
    async fn conflicts_retry_then_return_the_last_value() {
        let p = RetryPolicy::new(3, Duration::from_secs(5)).backoff(Duration::ZERO, Duration::ZERO);
        let (r, n) = drive(p.clone(), false, vec![Ok(0), Ok(5)]).await;
        assert_eq!((r.ok(), n), (Some(5), 2));
        let (r, n) = drive(p, false, vec![Ok(0), Ok(0), Ok(0), Ok(5)]).await;
        assert_eq!((r.ok(), n), (Some(0), 3));
    }
}
