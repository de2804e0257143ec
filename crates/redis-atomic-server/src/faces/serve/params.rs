//! Every constrained value `serve` takes, each made once from the library's own limit
//! ([`super::fields`] has the machinery): the routes' request types use these, so the check that
//! refuses a value and the schema that documents it are one definition.

use super::fields::{int_field, ms, text_field, Chars};
use redis_atomic::{dedup, fenced, idempotency, keys, lease, lock, queue, quota, ratelimit};
use redis_atomic::{semaphore, Fence as LibFence};
use std::time::Duration;

// ---- identifiers -------------------------------------------------------------------------------

text_field!(
    /// A name that becomes part of Redis keys (a lock's resource, a queue, a semaphore, a
    /// counter, an event id, a fenced write's key): printable ASCII without `{` and `}`.
    KeyName: 1, keys::MAX_TAG_LEN, Chars::KEY_NAME
);
text_field!(
    /// An owner token: printable ASCII.
    OwnerToken: 1, lease::MAX_TOKEN_LEN, Chars::PRINTABLE
);
text_field!(
    /// A queue worker's name: printable ASCII.
    WorkerName: 1, queue::MAX_WORKER_LEN, Chars::PRINTABLE
);
text_field!(
    /// A job id: printable ASCII.
    JobId: 1, queue::MAX_JOB_ID_LEN, Chars::PRINTABLE
);
text_field!(
    /// An idempotency key: printable ASCII.
    IdempotencyKey: 1, idempotency::MAX_KEY_LEN, Chars::PRINTABLE
);
text_field!(
    /// A rate-limit request id (the same id is charged once): printable ASCII.
    LimitRequestId: 1, ratelimit::MAX_REQUEST_ID_LEN, Chars::PRINTABLE
);
text_field!(
    /// A quota request id (the same id adds once): printable ASCII.
    QuotaRequestId: 1, quota::MAX_REQUEST_ID_LEN, Chars::PRINTABLE
);
text_field!(
    /// The rate-limited identity (customer, API key, IP): printable ASCII. With the policy's
    /// name it makes at most the library's key limit, so each policy's consume states its own
    /// maximum.
    LimitKey: 1, ratelimit::MAX_KEY_LEN, Chars::PRINTABLE
);

/// The identity a consume under `policy` charges: policies count separately.
pub fn limit_identity(policy: &str, key: &LimitKey) -> String {
    format!("{policy}/{}", key.as_str())
}

/// The longest `key` a consume under `policy` takes: what [`limit_identity`] leaves of the
/// library's limit.
pub fn limit_key_max(policy: &str) -> usize {
    ratelimit::MAX_KEY_LEN.saturating_sub(policy.len() + 1)
}

impl OwnerToken {
    /// The library's token (this one's characters and length are within its rules).
    pub fn owner(&self) -> Result<lease::OwnerToken, redis_atomic::Error> {
        lease::OwnerToken::new(self.as_str())
    }
}

impl WorkerName {
    /// The library's token for the worker.
    pub fn owner(&self) -> Result<lease::OwnerToken, redis_atomic::Error> {
        lease::OwnerToken::new(self.as_str())
    }
}

// ---- numbers -----------------------------------------------------------------------------------

int_field!(
    /// A lease's fence, as `acquire` or `claim` returned it.
    Fence(u64): 0, u64::MAX, "uint64"
);
int_field!(
    /// A fenced write's fence (from a lock or semaphore acquire); 0 is never issued.
    WriteFence(u64): 1, fenced::MAX_FENCE, "uint64"
);
int_field!(
    /// A lock's lease, in milliseconds.
    LockTtlMs(u64): 1, ms(lock::MAX_TTL), "uint64"
);
int_field!(
    /// A semaphore permit's lease, in milliseconds.
    SemaphoreTtlMs(u64): 1, ms(semaphore::MAX_TTL), "uint64"
);
int_field!(
    /// Permits in total.
    Capacity(u32): 1, semaphore::MAX_CAPACITY, "uint32"
);
int_field!(
    /// A job's lease (claim visibility, job extend), in milliseconds.
    JobTtlMs(u64): 1, ms(queue::MAX_TTL), "uint64"
);
int_field!(
    /// A queue delay or age (enqueue delay, nack pause, requeue delay, purge age), in
    /// milliseconds; 0 is none.
    DelayMs(u64): 0, ms(queue::MAX_DELAY), "uint64"
);
int_field!(
    /// How many jobs or dead letters one call takes.
    Batch(usize): 1, queue::MAX_BATCH, "uint32"
);
int_field!(
    /// A position in the dead letters, oldest first.
    DeadStart(u32): 0, u32::MAX, "uint32"
);
int_field!(
    /// How long a dedup id is remembered, in milliseconds.
    DedupTtlMs(u64): 1, ms(dedup::MAX_DEDUP_TTL), "uint64"
);
int_field!(
    /// A quota amount: a delta or a bound, within ±(2^53 − 1).
    QuotaAmount(i64): -quota::MAX_VALUE, quota::MAX_VALUE, "int64"
);
int_field!(
    /// A counter's lifetime, in milliseconds.
    QuotaTtlMs(u64): 1, ms(quota::MAX_TTL), "uint64"
);
int_field!(
    /// An idempotency claim's lease, in milliseconds.
    LeaseMs(u64): 1, ms(idempotency::MAX_TTL), "uint64"
);
int_field!(
    /// Units a consume charges; each policy's consume states its own maximum (the policy's
    /// burst).
    Cost(u64): 1, ratelimit::MAX_LIMIT, "uint64"
);
int_field!(
    /// A stored response's HTTP status.
    Status(u16): 0, u16::MAX, "uint16"
);

impl Fence {
    /// The library's fence.
    pub fn fence(self) -> LibFence {
        LibFence(self.0)
    }
}

impl WriteFence {
    /// The library's fence.
    pub fn fence(self) -> LibFence {
        LibFence(self.0)
    }
}

macro_rules! as_duration {
    ($($t:ident),*) => {$(
        impl $t {
            /// As a duration.
            pub fn duration(self) -> Duration {
                Duration::from_millis(self.0)
            }
        }
    )*};
}
as_duration!(
    LockTtlMs,
    SemaphoreTtlMs,
    JobTtlMs,
    DelayMs,
    DedupTtlMs,
    QuotaTtlMs,
    LeaseMs
);

/// Defaults of optional fields (serde's and the document's, one function each).
pub mod defaults {
    use super::{Batch, Cost, DelayMs, JobTtlMs, QuotaAmount};

    /// A claim's visibility: 30 s.
    pub fn visibility() -> JobTtlMs {
        JobTtlMs(30_000)
    }
    /// One job per claim.
    pub fn one_job() -> Batch {
        Batch(1)
    }
    /// A purge's limit: the largest batch.
    pub fn purge_limit() -> Batch {
        Batch(Batch::MAX)
    }
    /// No delay.
    pub fn no_delay() -> DelayMs {
        DelayMs(0)
    }
    /// A consume charges one unit.
    pub fn one_unit() -> Cost {
        Cost(1)
    }
    /// A quota's default lower bound: 0.
    pub fn zero() -> QuotaAmount {
        QuotaAmount(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use utoipa::openapi::{RefOr, Schema};
    use utoipa::PartialSchema;

    /// The schema states the library's limits (spot checks of the generated bounds).
    #[test]
    fn schemas_state_the_library_limits() {
        let json = |s: RefOr<Schema>| serde_json::to_value(s).unwrap();
        let job = json(JobId::schema());
        assert_eq!(job["maxLength"], queue::MAX_JOB_ID_LEN);
        assert_eq!(job["minLength"], 1);
        let fence = json(Fence::schema());
        assert_eq!(fence["maximum"], serde_json::json!(u64::MAX));
        let ttl = json(LockTtlMs::schema());
        assert_eq!(ttl["maximum"], 604_800_000u64);
        let amount = json(QuotaAmount::schema());
        assert_eq!(amount["minimum"], -quota::MAX_VALUE);
    }

    /// What the schema allows, the library takes: the extremes of each identifier and number
    /// pass the library's own checks.
    #[test]
    fn extremes_pass_the_library() {
        let longest = |n: usize| "~".repeat(n);
        assert!(lease::OwnerToken::new(longest(OwnerToken::MAX)).is_ok());
        assert!(lease::OwnerToken::new(longest(WorkerName::MAX)).is_ok());
        let ks = redis_atomic::Keyspace::new("ns").unwrap();
        assert!(ks.key("x", 1, &longest(KeyName::MAX), &[]).is_ok());
        assert!(redis_atomic::quota::Bounds::new(QuotaAmount::MIN, QuotaAmount::MAX).is_ok());
        assert_eq!(limit_key_max("api") + "api/".len(), ratelimit::MAX_KEY_LEN);
    }
}
