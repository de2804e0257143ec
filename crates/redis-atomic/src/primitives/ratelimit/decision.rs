//! What a rate-limit decision says, and how a script reply becomes one.
//!
//! The six single-limit scripts share one `returns:` line but each gets its own generated reply
//! type; one macro gives the six the same conversion ([`SingleReply`]), so there is one decoder
//! for them and one for `rl_policy`.

use crate::script::registry::{
    RlAnchoredWindowReply, RlFixedWindowReply, RlGcraReply, RlPolicyLimitsItem, RlPolicyReply,
    RlSlidingLogReply, RlSlidingWindowReply, RlTokenBucketReply, RL_POLICY,
};
use crate::script::FromReply;
use crate::Error;
use std::time::Duration;

/// The decision on one request. A refusal is a value, not an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Decision {
    /// Admitted and charged.
    Allowed {
        /// Units still available right now (the smallest over the policy's limits).
        remaining: u64,
        /// Until every limit is back to its full capacity, if nothing else is consumed.
        reset_after: Duration,
    },
    /// Refused; nothing was charged.
    Limited {
        /// The earliest time the same request would be admitted, if nothing else is consumed.
        retry_after: Duration,
        /// Until every limit is back to its full capacity, if nothing else is consumed.
        reset_after: Duration,
    },
}

impl Decision {
    /// Whether the request was admitted.
    pub fn is_allowed(&self) -> bool {
        matches!(self, Decision::Allowed { .. })
    }
}

/// One limit's state after a decision (for `RateLimit` headers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LimitStatus {
    /// Units this limit would still admit right now (after the request, when it was admitted).
    pub remaining: u64,
    /// Until this limit is back to full capacity.
    pub reset_after: Duration,
    /// Until this limit alone would admit the request (zero when it would now).
    pub retry_after: Duration,
}

/// A decision with each limit's status, in the policy's order.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Verdict {
    /// The all-or-nothing decision.
    pub decision: Decision,
    /// Each limit's status.
    pub limits: Vec<LimitStatus>,
    /// Whether this is the recorded decision of an earlier request with the same request id
    /// (nothing was charged this time).
    pub replayed: bool,
}

impl Verdict {
    /// Builds a verdict from µs figures (the pure model's units).
    #[cfg(feature = "model")]
    pub(crate) fn from_us(
        allowed: bool,
        replayed: bool,
        a: u64,
        reset_us: u64,
        limits: Vec<LimitStatus>,
    ) -> Verdict {
        let reset_after = Duration::from_micros(reset_us);
        let decision = if allowed {
            Decision::Allowed {
                remaining: a,
                reset_after,
            }
        } else {
            Decision::Limited {
                retry_after: Duration::from_micros(a),
                reset_after,
            }
        };
        Verdict {
            decision,
            limits,
            replayed,
        }
    }
}

/// A single-limit script's reply: `{'allowed', remaining, reset:us}` or `{'limited', retry:us,
/// reset:us, remaining}`, the same for all five algorithms.
pub(crate) trait SingleReply: FromReply {
    /// The verdict it says, with its one limit's status.
    fn verdict(self) -> Verdict;
}

macro_rules! single_reply {
    ($($reply:ident),+) => {$(
        impl SingleReply for $reply {
            fn verdict(self) -> Verdict {
                let (decision, status) = match self {
                    $reply::Allowed { remaining, reset } => (
                        Decision::Allowed { remaining, reset_after: reset },
                        LimitStatus { remaining, reset_after: reset, retry_after: Duration::ZERO },
                    ),
                    $reply::Limited { retry, reset, remaining } => (
                        Decision::Limited { retry_after: retry, reset_after: reset },
                        LimitStatus { remaining, reset_after: reset, retry_after: retry },
                    ),
                };
                Verdict { decision, limits: vec![status], replayed: false }
            }
        }
    )+};
}

single_reply!(
    RlAnchoredWindowReply,
    RlFixedWindowReply,
    RlSlidingLogReply,
    RlSlidingWindowReply,
    RlTokenBucketReply,
    RlGcraReply
);

impl Verdict {
    /// `rl_policy`'s reply, which must report exactly `expected_limits` limits.
    pub(crate) fn of_policy(
        reply: RlPolicyReply,
        expected_limits: usize,
    ) -> Result<Verdict, Error> {
        let replayed = matches!(reply, RlPolicyReply::Replayed { .. });
        let (decision, limits) = match reply {
            RlPolicyReply::Allowed {
                remaining,
                reset,
                limits,
                ..
            }
            | RlPolicyReply::Replayed {
                remaining,
                reset,
                limits,
                ..
            } => (
                Decision::Allowed {
                    remaining,
                    reset_after: reset,
                },
                limits,
            ),
            RlPolicyReply::Limited {
                retry,
                reset,
                limits,
                ..
            } => (
                Decision::Limited {
                    retry_after: retry,
                    reset_after: reset,
                },
                limits,
            ),
        };
        // The decoder already checked `n` against the groups received; this checks the policy.
        if limits.len() != expected_limits {
            return Err(Error::BadReply {
                script: RL_POLICY.name,
                detail: format!(
                    "{} limits in the reply, {expected_limits} in the policy",
                    limits.len()
                ),
            });
        }
        let limits = limits.into_iter().map(status).collect();
        Ok(Verdict {
            decision,
            limits,
            replayed,
        })
    }
}

fn status(item: RlPolicyLimitsItem) -> LimitStatus {
    LimitStatus {
        remaining: item.remaining,
        reset_after: item.reset,
        retry_after: item.retry,
    }
}
