//! What a rate-limit decision says, and how a script reply becomes one.

use crate::reply::Reply;
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
    /// Builds a verdict from µs figures (the scripts' units).
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

    /// Parses a single-limit script's `{'allowed', remaining, reset_us}` or
    /// `{'limited', retry_us, reset_us, remaining}`.
    pub(crate) fn parse_single(reply: &Reply) -> Result<Verdict, Error> {
        let (a, reset_us) = (reply.uint(0)?, reply.uint(1)?);
        let (allowed, remaining, retry_us) = match reply.status.as_str() {
            "allowed" => (true, a, 0),
            "limited" => (false, reply.uint(2)?, a),
            _ => return Err(reply.unexpected()),
        };
        let status = LimitStatus {
            remaining,
            reset_after: Duration::from_micros(reset_us),
            retry_after: Duration::from_micros(retry_us),
        };
        Ok(Verdict::from_us(allowed, false, a, reset_us, vec![status]))
    }

    /// Parses `{status, a, reset_us, n, (remaining, reset_us, retry_us) * n}`.
    pub(crate) fn parse(reply: &Reply, expected_limits: usize) -> Result<Verdict, Error> {
        let (allowed, replayed) = match reply.status.as_str() {
            "allowed" => (true, false),
            "replayed" => (true, true),
            "limited" => (false, false),
            _ => return Err(reply.unexpected()),
        };
        let n = usize::try_from(reply.uint(2)?).unwrap_or(usize::MAX);
        if n != expected_limits {
            return Err(Error::BadReply {
                script: reply.script,
                detail: format!("{n} limits in the reply, {expected_limits} in the policy"),
            });
        }
        let mut limits = Vec::with_capacity(n);
        for i in 0..n {
            limits.push(LimitStatus {
                remaining: reply.uint(3 + 3 * i)?,
                reset_after: Duration::from_micros(reply.uint(4 + 3 * i)?),
                retry_after: Duration::from_micros(reply.uint(5 + 3 * i)?),
            });
        }
        Ok(Verdict::from_us(
            allowed,
            replayed,
            reply.uint(0)?,
            reply.uint(1)?,
            limits,
        ))
    }
}
