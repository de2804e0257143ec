//! Reading a queue and handling its dead letters: stats, one job's state, listing and
//! requeueing dead letters. The reads are `no-writes` scripts (`EVALSHA_RO` / `FCALL_RO`, so they
//! may run on replicas); requeueing is a write.

use super::types::{whole_ms, MAX_BATCH, MAX_DELAY};
use super::Queue;
use crate::client::Arg;
use crate::lease::Fence;
use crate::reply::Reply;
use crate::script::registry::{QUEUE_DEAD_LIST, QUEUE_DEAD_REQUEUE, QUEUE_INSPECT, QUEUE_STATS};
use crate::Error;
use std::time::Duration;

/// Counts of a queue's jobs by state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct QueueStats {
    /// Due now, waiting for a claim.
    pub ready: u64,
    /// Queued, due later.
    pub scheduled: u64,
    /// Leased to workers (expired leases included).
    pub running: u64,
    /// Leases past their deadline, not yet returned by a claim or reap.
    pub expired: u64,
    /// Dead letters.
    pub dead: u64,
    /// Acked ids still remembered for the dedup window.
    pub acked: u64,
}

/// One job's state.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum JobState {
    /// Waiting; due in `due_in` (zero when due now).
    Queued {
        /// Time until due.
        due_in: Duration,
        /// Deliveries so far.
        deliveries: u32,
        /// Fence of the last lease (0 if never claimed).
        last_fence: Fence,
    },
    /// Leased.
    Running {
        /// Current lease's fence.
        fence: Fence,
        /// Deliveries so far, this one included.
        deliveries: u32,
        /// Time left on the lease (zero when expired and not yet returned).
        lease_left: Duration,
        /// The worker that claimed it.
        worker: String,
    },
    /// In the dead letters.
    Dead {
        /// Deliveries made.
        deliveries: u32,
        /// The last error.
        error: String,
    },
    /// Acked (within the dedup window).
    Acked {
        /// The fence of the lease that acked it.
        fence: Fence,
    },
    /// No such job (never enqueued, or acked and forgotten).
    Unknown,
}

/// A dead letter.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeadLetter {
    /// The job id.
    pub id: String,
    /// The server's clock (ms since the epoch) when it was dead-lettered.
    pub dead_at_ms: u64,
    /// Deliveries made.
    pub deliveries: u32,
    /// The last error (a nack's text, or a note that the lease expired).
    pub error: String,
}

/// One page of dead letters.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeadLetters {
    /// Dead letters in all.
    pub total: u64,
    /// This page, oldest first.
    pub letters: Vec<DeadLetter>,
}

/// Result of requeueing a dead letter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Requeue {
    /// Due again, with its delivery count reset.
    Requeued,
    /// The job is not a dead letter (after a retried call: maybe already requeued by it).
    NotDead,
}

fn text(reply: &Reply, i: usize) -> Result<String, Error> {
    Ok(String::from_utf8_lossy(reply.bytes(i)?).into_owned())
}

fn count(reply: &Reply, i: usize) -> Result<u32, Error> {
    u32::try_from(reply.uint(i)?).map_err(|_| Error::BadReply {
        script: reply.script,
        detail: format!("field {i} out of range"),
    })
}

impl Queue {
    /// Counts of jobs by state (read-only).
    pub async fn stats(&self) -> Result<QueueStats, Error> {
        let k = &self.keys;
        let value = self
            .client
            .invoke(&QUEUE_STATS, [&k.due, &k.inflight, &k.dead, &k.done], [])
            .await?;
        let reply = Reply::parse(QUEUE_STATS.name, value)?;
        if reply.status != "stats" {
            return Err(reply.unexpected());
        }
        Ok(QueueStats {
            ready: reply.uint(0)?,
            scheduled: reply.uint(1)?,
            running: reply.uint(2)?,
            expired: reply.uint(3)?,
            dead: reply.uint(4)?,
            acked: reply.uint(5)?,
        })
    }

    /// One job's state (read-only).
    pub async fn inspect(&self, job_id: &str) -> Result<JobState, Error> {
        super::check_id(job_id)?;
        let k = &self.keys;
        let value = self
            .client
            .invoke(
                &QUEUE_INSPECT,
                [&k.due, &k.inflight, &k.meta, &k.errors],
                [job_id.into()],
            )
            .await?;
        let r = Reply::parse(QUEUE_INSPECT.name, value)?;
        Ok(match r.status.as_str() {
            "queued" => JobState::Queued {
                due_in: Duration::from_millis(r.uint(0)?),
                deliveries: count(&r, 1)?,
                last_fence: Fence(r.uint(2)?),
            },
            "running" => JobState::Running {
                fence: Fence(r.uint(0)?),
                deliveries: count(&r, 1)?,
                lease_left: Duration::from_millis(r.uint(2)?),
                worker: text(&r, 3)?,
            },
            "dead" => JobState::Dead {
                deliveries: count(&r, 0)?,
                error: text(&r, 1)?,
            },
            "acked" => JobState::Acked {
                fence: Fence(r.uint(0)?),
            },
            "unknown" => JobState::Unknown,
            _ => return Err(r.unexpected()),
        })
    }

    /// At most `count` (1..=1000) dead letters from position `start`, oldest first.
    pub async fn dead_letters(&self, start: u32, count: usize) -> Result<DeadLetters, Error> {
        if count == 0 || count > MAX_BATCH {
            return Err(Error::BadArgument(format!(
                "count must be 1..={MAX_BATCH}, got {count}"
            )));
        }
        let k = &self.keys;
        let value = self
            .client
            .invoke(
                &QUEUE_DEAD_LIST,
                [&k.dead, &k.meta, &k.errors],
                [Arg::Int(i64::from(start)), Arg::Int(count as i64)],
            )
            .await?;
        let r = Reply::parse(QUEUE_DEAD_LIST.name, value)?;
        if r.status != "listed" {
            return Err(r.unexpected());
        }
        let total = r.uint(0)?;
        let mut letters = Vec::new();
        let mut i = 1;
        while let Ok(id) = r.bytes(i) {
            letters.push(DeadLetter {
                id: String::from_utf8_lossy(id).into_owned(),
                dead_at_ms: r.uint(i + 1)?,
                deliveries: u32::try_from(r.uint(i + 2)?).unwrap_or(u32::MAX),
                error: text(&r, i + 3)?,
            });
            i += 4;
        }
        Ok(DeadLetters { total, letters })
    }

    /// Moves dead letter `job_id` back to the queue, due after `delay`, deliveries reset to 0.
    pub async fn requeue_dead(&self, job_id: &str, delay: Duration) -> Result<Requeue, Error> {
        super::check_id(job_id)?;
        if delay > MAX_DELAY {
            return Err(Error::BadArgument("delay must be at most a year".into()));
        }
        let k = &self.keys;
        let value = self
            .client
            .invoke(
                &QUEUE_DEAD_REQUEUE,
                [&k.dead, &k.due, &k.meta, &k.errors],
                [job_id.into(), Arg::Int(whole_ms(delay))],
            )
            .await?;
        let r = Reply::parse(QUEUE_DEAD_REQUEUE.name, value)?;
        match r.status.as_str() {
            "requeued" => Ok(Requeue::Requeued),
            "not_dead" => Ok(Requeue::NotDead),
            _ => Err(r.unexpected()),
        }
    }
}
