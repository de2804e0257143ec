//! A reliable delayed job queue whose every claim is a fenced lease.
//!
//! **Invariant.** Each job is in exactly one place (due, in flight, dead, or acked) and has at
//! most one live lease; every lease of a job carries a fence larger than all earlier ones, and
//! only the current fence can heartbeat, ack or nack it, so a job is acked at most once.
//!
//! **Keys** (all under the queue's `{name}` hash tag, so one slot): `<ns>:queue:v1:{name}:due`
//! (zset id → due ms), `:inflight` (zset id → lease deadline ms), `:dead` (zset id → ms dead),
//! `:done` (zset id → ms acked: tombstones for the dedup window), `:meta` (hash id →
//! `state:fence:deliveries:worker`), `:payload` (hash id → bytes), `:errors` (hash id → last
//! error). Job ids are hash fields and zset members, never key names: each script's keys are
//! fixed, declared and in one slot.
//!
//! **Mechanism.** Lua scripts (`queue_*`). Fetch-then-remove in two steps is how workers lose or
//! double-process jobs (laravel/framework #5707, Automattic/kue #1133); here one script moves a
//! batch from due to in flight, stamps each job with a fence and a delivery count, and returns
//! the payloads. Due times and deadlines are the server's clock (`TIME`). Expired leases are
//! returned inside `claim` (at most `max_jobs` per call) or by [`Queue::reap`] (at most `limit`);
//! no script scans more than its bound.
//!
//! **Fences.** `max(last + 1, server µs)` per job, as for locks: they keep increasing even if a
//! failover lost the job's record. A lease past its deadline stays *current* until a claim or
//! reap takes it back: until then its holder may still ack it (nobody else has the job).
//!
//! **Retry.** `claim` is `retry: unsafe` (a second run would lease other jobs): after
//! [`Error::OutcomeUnknown`] the jobs it may have leased come back when the visibility timeout
//! passes. Everything else is `retry: safe`: `enqueue` again answers [`Enqueue::Exists`], `ack`
//! again answers [`Ack::Acked`] (within the dedup window), `heartbeat` sets the same absolute
//! deadline, `nack` and `requeue_dead` again answer [`Nack::Lost`] / [`Requeue::NotDead`].
//!
//! **Not guaranteed.** Exactly-once *processing*: a worker paused past its lease may still be
//! working when another worker gets the job; only one ack is accepted, but both may have acted.
//! Pass [`Job::fence`] to the job's writes and have the store refuse smaller fences. Replication
//! is asynchronous: after a failover, moves acknowledged by the old primary but not replicated
//! are gone (an acked job may run again, a claimed one be claimed again, with a larger fence).
//! Under `maxmemory` (OOM) every write script is refused, `ack` included: nothing moves.

mod admin;
mod types;

pub use admin::{DeadLetter, DeadLetters, JobState, QueueStats, Requeue};
pub use types::{
    Ack, Claim, Enqueue, Heartbeat, Job, JobStatus, Nack, QueueConfig, Reaped, RunAt, MAX_BATCH,
    MAX_DELAY, MAX_ERROR_LEN, MAX_JOB_ID_LEN, MAX_LEASE, MAX_PAYLOAD, MAX_WORKER_LEN,
};

use crate::client::{Arg, Client};
use crate::keys::Keyspace;
use crate::lease::Fence;
use crate::reply::{millis, Reply};
use crate::script::registry::{
    QUEUE_ACK, QUEUE_CLAIM, QUEUE_ENQUEUE, QUEUE_HEARTBEAT, QUEUE_NACK, QUEUE_REAP,
};
use crate::Error;
use std::time::{Duration, Instant};
use types::whole_ms;

const SCHEMA: u32 = 1;

/// The keys of one queue.
#[derive(Clone, Debug)]
struct QueueKeys {
    due: String,
    inflight: String,
    dead: String,
    done: String,
    meta: String,
    payload: String,
    errors: String,
}

/// One queue: producers enqueue, workers claim, heartbeat, ack and nack.
#[derive(Clone, Debug)]
pub struct Queue {
    client: Client,
    keys: QueueKeys,
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

fn lease_ms(what: &str, d: Duration) -> Result<i64, Error> {
    millis(
        what,
        d,
        u64::try_from(MAX_LEASE.as_millis()).unwrap_or(u64::MAX),
    )
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
            keys: QueueKeys {
                due: key("due")?,
                inflight: key("inflight")?,
                dead: key("dead")?,
                done: key("done")?,
                meta: key("meta")?,
                payload: key("payload")?,
                errors: key("errors")?,
            },
            config,
        })
    }

    /// The settings.
    pub fn config(&self) -> &QueueConfig {
        &self.config
    }

    fn max_deliveries(&self) -> Arg<'static> {
        Arg::Int(i64::from(self.config.max_deliveries.get()))
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
        let value = self
            .client
            .invoke(
                &QUEUE_ENQUEUE,
                [&k.due, &k.meta, &k.payload],
                [job_id.into(), payload.into(), Arg::Int(delay), Arg::Int(at)],
            )
            .await?;
        let r = Reply::parse(QUEUE_ENQUEUE.name, value)?;
        match r.status.as_str() {
            "enqueued" => Ok(Enqueue::Enqueued {
                due_in: Duration::from_millis(r.uint(0)?),
            }),
            "exists" => {
                let status = JobStatus::parse(r.bytes(0)?).ok_or_else(|| r.unexpected())?;
                Ok(Enqueue::Exists { status })
            }
            _ => Err(r.unexpected()),
        }
    }

    /// Leases up to `max_jobs` (1..=1000) due jobs to `worker` for `visibility` (after first
    /// returning up to `max_jobs` expired leases). Not retried after an unknown outcome: the
    /// jobs it may have leased come back after `visibility`.
    pub async fn claim(
        &self,
        worker: &str,
        visibility: Duration,
        max_jobs: usize,
    ) -> Result<Claim, Error> {
        if worker.is_empty() || worker.len() > MAX_WORKER_LEN {
            return Err(Error::BadArgument(format!(
                "worker must be 1..={MAX_WORKER_LEN} bytes, got {}",
                worker.len()
            )));
        }
        if max_jobs == 0 || max_jobs > MAX_BATCH {
            return Err(Error::BadArgument(format!(
                "max_jobs must be 1..={MAX_BATCH}, got {max_jobs}"
            )));
        }
        let vis = lease_ms("visibility timeout", visibility)?;
        let k = &self.keys;
        let sent = Instant::now();
        let value = self
            .client
            .invoke(
                &QUEUE_CLAIM,
                [&k.due, &k.inflight, &k.dead, &k.meta, &k.payload, &k.errors],
                [
                    worker.into(),
                    Arg::Int(vis),
                    Arg::Int(max_jobs as i64),
                    self.max_deliveries(),
                ],
            )
            .await?;
        let r = Reply::parse(QUEUE_CLAIM.name, value)?;
        match r.status.as_str() {
            "claimed" => jobs(&r, sent + visibility).map(Claim::Claimed),
            "empty" => Ok(Claim::Empty {
                next_due: r.uint(0).ok().map(Duration::from_millis),
            }),
            _ => Err(r.unexpected()),
        }
    }

    /// Sets the lease of `job_id` held with `fence` to end `extend` from the server's now
    /// (absolute, never added).
    pub async fn heartbeat(
        &self,
        job_id: &str,
        fence: Fence,
        extend: Duration,
    ) -> Result<Heartbeat, Error> {
        check_id(job_id)?;
        let ext = lease_ms("extension", extend)?;
        let fence = fence.to_string();
        let k = &self.keys;
        let value = self
            .client
            .invoke(
                &QUEUE_HEARTBEAT,
                [&k.inflight, &k.meta],
                [job_id.into(), fence.as_str().into(), Arg::Int(ext)],
            )
            .await?;
        let r = Reply::parse(QUEUE_HEARTBEAT.name, value)?;
        match r.status.as_str() {
            "extended" => Ok(Heartbeat::Extended {
                lease: Duration::from_millis(r.uint(0)?),
            }),
            "lost" => Ok(Heartbeat::Lost),
            _ => Err(r.unexpected()),
        }
    }

    /// Completes `job_id` if `fence` is its current lease.
    pub async fn ack(&self, job_id: &str, fence: Fence) -> Result<Ack, Error> {
        check_id(job_id)?;
        let fence = fence.to_string();
        let k = &self.keys;
        let value = self
            .client
            .invoke(
                &QUEUE_ACK,
                [&k.inflight, &k.meta, &k.payload, &k.errors, &k.done],
                [
                    job_id.into(),
                    fence.as_str().into(),
                    Arg::Int(whole_ms(self.config.dedup_window)),
                ],
            )
            .await?;
        let r = Reply::parse(QUEUE_ACK.name, value)?;
        match r.status.as_str() {
            "acked" => Ok(Ack::Acked),
            "lost" => Ok(Ack::Lost),
            _ => Err(r.unexpected()),
        }
    }

    /// Gives `job_id` back if `fence` is its current lease: due again after `retry_after`, or
    /// dead-lettered with `error` once delivered `max_deliveries` times. `error` is cut to
    /// [`MAX_ERROR_LEN`] bytes.
    pub async fn nack(
        &self,
        job_id: &str,
        fence: Fence,
        retry_after: Duration,
        error: &str,
    ) -> Result<Nack, Error> {
        check_id(job_id)?;
        if retry_after > MAX_DELAY {
            return Err(Error::BadArgument(
                "retry_after must be at most a year".into(),
            ));
        }
        let mut cut = error.len().min(MAX_ERROR_LEN);
        while !error.is_char_boundary(cut) {
            cut -= 1;
        }
        let fence = fence.to_string();
        let k = &self.keys;
        let value = self
            .client
            .invoke(
                &QUEUE_NACK,
                [&k.inflight, &k.due, &k.dead, &k.meta, &k.errors],
                [
                    job_id.into(),
                    fence.as_str().into(),
                    Arg::Int(whole_ms(retry_after)),
                    self.max_deliveries(),
                    error[..cut].into(),
                ],
            )
            .await?;
        let r = Reply::parse(QUEUE_NACK.name, value)?;
        match r.status.as_str() {
            "retrying" => Ok(Nack::Retrying {
                after: Duration::from_millis(r.uint(0)?),
            }),
            "dead" => Ok(Nack::Dead),
            "lost" => Ok(Nack::Lost),
            _ => Err(r.unexpected()),
        }
    }

    /// Returns at most `limit` (1..=1000) expired leases to the queue (or the dead letters).
    /// Claims do this too; call it from a janitor when workers may all be gone.
    pub async fn reap(&self, limit: usize) -> Result<Reaped, Error> {
        if limit == 0 || limit > MAX_BATCH {
            return Err(Error::BadArgument(format!(
                "limit must be 1..={MAX_BATCH}, got {limit}"
            )));
        }
        let k = &self.keys;
        let value = self
            .client
            .invoke(
                &QUEUE_REAP,
                [&k.inflight, &k.due, &k.dead, &k.meta, &k.errors],
                [Arg::Int(limit as i64), self.max_deliveries()],
            )
            .await?;
        let r = Reply::parse(QUEUE_REAP.name, value)?;
        if r.status != "reaped" {
            return Err(r.unexpected());
        }
        Ok(Reaped {
            requeued: r.uint(0)?,
            dead: r.uint(1)?,
        })
    }
}

/// The jobs of a `claimed` reply: `now_ms, count, [id, fence, deliveries, payload] * count`.
fn jobs(r: &Reply, expires_by: Instant) -> Result<Vec<Job>, Error> {
    let claimed_at_ms = r.uint(0)?;
    let count = usize::try_from(r.uint(1)?).unwrap_or(0);
    let mut jobs = Vec::with_capacity(count);
    for n in 0..count {
        let i = 2 + 4 * n;
        let id = String::from_utf8(r.bytes(i)?.to_vec()).map_err(|_| Error::BadReply {
            script: r.script,
            detail: "job id not UTF-8".into(),
        })?;
        jobs.push(Job {
            id,
            fence: Fence(r.uint(i + 1)?),
            deliveries: u32::try_from(r.uint(i + 2)?).unwrap_or(u32::MAX),
            payload: r.bytes(i + 3)?.to_vec(),
            claimed_at_ms,
            expires_by,
        });
    }
    Ok(jobs)
}
