//! A reliable delayed job queue whose every claim is a fenced lease.
//!
//! **Invariant.** Each job is in exactly one place (due, in flight, dead, or acked) and has at
//! most one live lease; every lease of a job carries a fence larger than all earlier ones, and
//! only the current fence can extend, ack or nack it, so a job is acked at most once.
//!
//! **Keys** ([`QueueKeys`], from [`Queue::keys`]: every key of the queue, all under its `{name}`
//! hash tag, so one slot): `<ns>:queue:v1:{name}:due` (zset id → due ms), `:inflight` (zset id →
//! lease deadline ms), `:dead` (zset id → ms dead), `:done` (zset id → ms acked: tombstones for
//! the dedup window), `:meta` (hash id → `state:fence:deliveries:worker`), `:payload` (hash id →
//! bytes), `:errors` (hash id → last error); per claim id of [`Queue::claim_with_id`],
//! [`QueueKeys::claim`] = `:claim:<c>` (a string of length-prefixed `<len>:<bytes>` items: worker,
//! then job id and fence per leased job; `<c>` is 128 bits of SHA-256 of the claim id), kept for
//! the claim-id TTL. Job ids are hash fields and zset members, never key names: each script's keys
//! are fixed, declared and in one slot.
//!
//! **Mechanism.** Lua scripts (`queue_*`). Fetch-then-remove in two steps is how workers lose or
//! double-process jobs (laravel/framework #5707, Automattic/kue #1133); here one script moves a
//! batch from due to in flight, stamps each job with a fence and a delivery count, and returns
//! the payloads. Due times and deadlines are the server's clock (`TIME`). Expired leases are
//! returned inside `claim` (at most `max_jobs` per call) or by [`Queue::reap`] (at most `limit`);
//! no script scans more than its bound.
//!
//! **Shape.** The lease shape every lease-like primitive shares ([`crate::lease`]), as a named
//! instance ([`Queue::new`] with a name and a [`QueueConfig`]): `claim(worker, ttl, max_jobs)` →
//! [`Claim::Claimed`] with one [`Job`] per leased job (`fence()`, `token()` — the worker —,
//! `ttl()`, `expires_by()`, `extend(ttl)`, then `ack()` or `nack(..)`, which consume it), or
//! [`Claim::Empty`] with a `retry_after` (something is queued or running), or [`Claim::Idle`]
//! (nothing is). Callers without the handle (another process, an HTTP client) use the by-parts
//! [`Queue::extend`], [`Queue::ack`] and [`Queue::nack`] with the job's id, the worker it is
//! leased to and its fence; the scripts check both.
//!
//! **Fences.** Every lease of a job issues one by [the one rule](crate::lease#fences), per job:
//! they keep increasing even if a failover lost the job's record. A lease past its deadline stays
//! *current* until a claim or reap takes it back: until then its holder may still ack it (nobody
//! else has the job).
//!
//! **Retry.** `claim` is `retry: unsafe` (a second run would lease other jobs): after
//! [`Error::OutcomeUnknown`] the jobs it may have leased come back when their ttl passes.
//! [`Queue::claim_with_id`] is the retry-safe claim (`queue_claim_id`, `retry: safe`): a claim
//! that leases jobs records them under its claim id, and a repeat of the id (the client's retry
//! after a lost reply, or the caller's) leases nothing and returns the same jobs with the same
//! fences and delivery counts while those leases are live (see its doc for what a repeat returns
//! once they are not). Everything else is `retry: safe`: `enqueue` again answers
//! [`Enqueue::Exists`], `ack` again answers [`Ack::Acked`] (within the dedup window), `extend`
//! sets the same absolute deadline, `nack` and `requeue_dead` again answer [`Nack::Lost`] /
//! [`Requeue::NotDead`]. After an unknown outcome of [`Job::ack`] or [`Job::nack`], repeat it by
//! parts with the id, token and fence read before.
//!
//! **Not guaranteed.** Exactly-once *processing*: a worker paused past its lease may still be
//! working when another worker gets the job; only one ack is accepted, but both may have acted.
//! Pass [`Job::fence`] to the job's writes and have the store refuse smaller fences. Replication
//! is asynchronous: after a failover, moves acknowledged by the old primary but not replicated
//! are gone (an acked job may run again, a claimed one be claimed again, with a larger fence).
//! Under `maxmemory` (OOM) every write script is refused, `ack` included: nothing moves.

mod admin;
mod claim;
mod job;
mod types;

pub use admin::{DeadLetter, DeadLetters, JobState, Purged, QueueStats, Requeue};
pub use job::Job;
pub use types::{
    Ack, Claim, Enqueue, JobStatus, Nack, QueueConfig, Reaped, RunAt, MAX_BATCH, MAX_CLAIM_ID_LEN,
    MAX_CLAIM_ID_TTL, MAX_DEAD_LETTERS, MAX_DELAY, MAX_ERROR_LEN, MAX_JOB_ID_LEN, MAX_PAYLOAD,
    MAX_TTL, MAX_WORKER_LEN,
};

use crate::client::{Arg, Client};
use crate::keys::{digest, Keyspace};
use crate::script::registry::{QueueEnqueueReply, QueueReapReply, QUEUE_ENQUEUE, QUEUE_REAP};
use crate::Error;
use std::sync::Arc;
use types::whole_ms;

const SCHEMA: u32 = 1;

/// The keys of one queue, all under its `{name}` hash tag (one slot).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct QueueKeys {
    /// `<ns>:queue:v1:{name}:due`: zset, job id → when it is due (server ms since the epoch).
    pub due: String,
    /// `<ns>:queue:v1:{name}:inflight`: zset, leased job id → lease deadline (server ms).
    pub inflight: String,
    /// `<ns>:queue:v1:{name}:dead`: zset, dead letter's job id → when it died (server ms).
    pub dead: String,
    /// `<ns>:queue:v1:{name}:done`: zset, acked job id → when acked (server ms): tombstones kept
    /// for the dedup window.
    pub done: String,
    /// `<ns>:queue:v1:{name}:meta`: hash, job id → `"<state>:<fence>:<deliveries>:<worker>"`,
    /// state `q` queued, `r` running, `d` dead, `a` acked.
    pub meta: String,
    /// `<ns>:queue:v1:{name}:payload`: hash, job id → payload bytes.
    pub payload: String,
    /// `<ns>:queue:v1:{name}:errors`: hash, job id → last error text (a nack's, or a note that
    /// the lease expired).
    pub errors: String,
    /// `<ns>:queue:v1:{name}:claim`: the prefix of the claim-id records of
    /// [`Queue::claim_with_id`] ([`QueueKeys::claim`]).
    pub claims: String,
}

impl QueueKeys {
    /// The key of `claim_id`'s record: `<ns>:queue:v1:{name}:claim:<c>`, `<c>` 128 bits of
    /// SHA-256 of the id in hex (one slot with the queue's other keys); the id is
    /// 1..=[`MAX_CLAIM_ID_LEN`] bytes.
    ///
    /// ```
    /// # fn demo(client: redis_atomic::Client) -> Result<(), redis_atomic::Error> {
    /// use redis_atomic::queue::{Queue, QueueConfig};
    /// let ks = redis_atomic::Keyspace::new("app")?;
    /// let queue = Queue::new(client, &ks, "emails", QueueConfig::default())?;
    /// assert!(queue.keys().claim("claim-1")?.starts_with("app:queue:v1:{emails}:claim:"));
    /// # Ok(()) }
    /// ```
    pub fn claim(&self, claim_id: &str) -> Result<String, Error> {
        let c = digest(claim_id, MAX_CLAIM_ID_LEN, "claim id")?;
        Ok(format!("{}:{c}", self.claims))
    }
}

/// One queue: producers enqueue, workers claim jobs and extend, ack or nack them. Cheap to clone
/// (every [`Job`] holds one).
#[derive(Clone, Debug)]
pub struct Queue {
    client: Client,
    keys: Arc<QueueKeys>,
    config: QueueConfig,
}

fn check_id(job_id: &str) -> Result<(), Error> {
    if job_id.is_empty() || job_id.len() > MAX_JOB_ID_LEN {
        return Err(Error::BadArgument(format!(
            "job id must be 1..={MAX_JOB_ID_LEN} bytes, got {}",
            job_id.len()
        )));
    }
    Ok(())
}

/// `n` (1..=[`MAX_BATCH`]) as a script argument, or a typed error naming `what`.
fn batch(what: &str, n: usize) -> Result<Arg<'static>, Error> {
    if n == 0 || n > MAX_BATCH {
        return Err(Error::BadArgument(format!(
            "{what} must be 1..={MAX_BATCH}, got {n}"
        )));
    }
    Ok(Arg::Int(n as i64))
}

/// A delivery count from a reply, saturating (the scripts cap it at a million).
fn deliveries(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl Queue {
    /// The queue `name` under `keyspace`.
    pub fn new(
        client: Client,
        keyspace: &Keyspace,
        name: &str,
        config: QueueConfig,
    ) -> Result<Self, Error> {
        config.validate()?;
        let key = |part: &str| keyspace.key("queue", SCHEMA, name, &[part]);
        Ok(Queue {
            client,
            keys: Arc::new(QueueKeys {
                due: key("due")?,
                inflight: key("inflight")?,
                dead: key("dead")?,
                done: key("done")?,
                meta: key("meta")?,
                payload: key("payload")?,
                errors: key("errors")?,
                claims: key("claim")?,
            }),
            config,
        })
    }

    /// The queue's keys, every one of them.
    ///
    /// ```
    /// # fn demo(client: redis_atomic::Client) -> Result<(), redis_atomic::Error> {
    /// use redis_atomic::queue::{Queue, QueueConfig};
    /// let ks = redis_atomic::Keyspace::new("app")?;
    /// let queue = Queue::new(client, &ks, "emails", QueueConfig::default())?;
    /// assert_eq!(queue.keys().due, "app:queue:v1:{emails}:due");
    /// # Ok(()) }
    /// ```
    pub fn keys(&self) -> &QueueKeys {
        &self.keys
    }

    /// The settings.
    pub fn config(&self) -> &QueueConfig {
        &self.config
    }

    fn max_deliveries(&self) -> Arg<'static> {
        Arg::Int(i64::from(self.config.max_deliveries.get()))
    }

    /// `max_dead keep_dead_ms`: the dead-letter bound every script that buries a job enforces.
    fn dead_bound(&self) -> [Arg<'static>; 2] {
        [
            Arg::Int(i64::from(self.config.max_dead_letters.get())),
            Arg::Int(whole_ms(self.config.dead_letter_retention)),
        ]
    }

    /// Adds job `job_id` with `payload`, due at `run_at`. A job id that exists (or was acked
    /// within the dedup window) is not added again: [`Enqueue::Exists`].
    pub async fn enqueue(
        &self,
        job_id: &str,
        payload: &[u8],
        run_at: RunAt,
    ) -> Result<Enqueue, Error> {
        check_id(job_id)?;
        if payload.len() > self.config.max_payload_bytes {
            return Err(Error::BadArgument(format!(
                "payload is {} bytes, over the {}-byte limit",
                payload.len(),
                self.config.max_payload_bytes
            )));
        }
        let (delay, at) = run_at.args()?;
        let k = &self.keys;
        let args = [job_id.into(), payload.into(), Arg::Int(delay), Arg::Int(at)];
        let reply = self
            .client
            .call(&QUEUE_ENQUEUE, [&k.due, &k.meta, &k.payload], args)
            .await?;
        Ok(match reply {
            QueueEnqueueReply::Enqueued { due_in } => Enqueue::Enqueued { due_in },
            QueueEnqueueReply::Exists { status } => Enqueue::Exists {
                status: status.into(),
            },
        })
    }

    /// Returns at most `limit` (1..=1000) expired leases to the queue (or the dead letters).
    /// Claims do this too; call it from a janitor when workers may all be gone.
    pub async fn reap(&self, limit: usize) -> Result<Reaped, Error> {
        let limit = batch("limit", limit)?;
        let k = &self.keys;
        let keys: [&str; 6] = [&k.inflight, &k.due, &k.dead, &k.meta, &k.payload, &k.errors];
        let [max_dead, keep_dead] = self.dead_bound();
        let args = [limit, self.max_deliveries(), max_dead, keep_dead];
        Ok(match self.client.call(&QUEUE_REAP, keys, args).await? {
            QueueReapReply::Reaped { requeued, dead } => Reaped { requeued, dead },
        })
    }
}
