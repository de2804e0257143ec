//! Reading a queue and handling its dead letters: stats, one job's state, listing, requeueing
//! and purging dead letters. The reads are `no-writes` scripts (`EVALSHA_RO` / `FCALL_RO`, so
//! they may run on replicas); requeueing and purging are writes. The dead letters are bounded
//! ([`super::QueueConfig::max_dead_letters`], `dead_letter_retention`) by the scripts that
//! bury jobs; a purge deletes them on demand, each with its record, payload and last error.

use super::types::{whole_ms, MAX_DELAY};
use super::{batch, check_id, deliveries, Queue};
use crate::client::Arg;
use crate::lease::Fence;
use crate::script::registry::{
    QueueDeadListLettersItem, QueueDeadListReply, QueueDeadPurgeReply, QueueDeadRequeueReply,
    QueueInspectReply, QueueStatsReply, QUEUE_DEAD_LIST, QUEUE_DEAD_PURGE, QUEUE_DEAD_REQUEUE,
    QUEUE_INSPECT, QUEUE_STATS,
};
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
        ttl: Duration,
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

/// Result of purging dead letters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Purged {
    /// Dead letters deleted (with their records, payloads and last errors).
    pub purged: u64,
    /// Dead letters left (of any age).
    pub remaining: u64,
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

/// A delivery count of a job's state; out of range is a bad reply (the scripts cap it at a
/// million).
fn count(n: u64) -> Result<u32, Error> {
    u32::try_from(n).map_err(|_| Error::BadReply {
        script: QUEUE_INSPECT.name,
        detail: format!("deliveries {n} out of range"),
    })
}

impl Queue {
    /// Counts of jobs by state (read-only).
    pub async fn stats(&self) -> Result<QueueStats, Error> {
        let k = &self.keys;
        let keys: [&str; 4] = [&k.due, &k.inflight, &k.dead, &k.done];
        Ok(match self.client.call(&QUEUE_STATS, keys, []).await? {
            QueueStatsReply::Stats {
                ready,
                scheduled,
                running,
                expired,
                dead,
                acked,
            } => QueueStats {
                ready,
                scheduled,
                running,
                expired,
                dead,
                acked,
            },
        })
    }

    /// One job's state (read-only).
    pub async fn inspect(&self, job_id: &str) -> Result<JobState, Error> {
        check_id(job_id)?;
        let k = &self.keys;
        let keys: [&str; 4] = [&k.due, &k.inflight, &k.meta, &k.errors];
        let reply = self
            .client
            .call(&QUEUE_INSPECT, keys, [job_id.into()])
            .await?;
        Ok(match reply {
            QueueInspectReply::Queued {
                due_in,
                deliveries,
                last_fence,
            } => JobState::Queued {
                due_in,
                deliveries: count(deliveries)?,
                last_fence,
            },
            QueueInspectReply::Running {
                fence,
                deliveries,
                ttl,
                worker,
            } => JobState::Running {
                fence,
                deliveries: count(deliveries)?,
                ttl,
                worker,
            },
            QueueInspectReply::Dead { deliveries, error } => JobState::Dead {
                deliveries: count(deliveries)?,
                error,
            },
            QueueInspectReply::Acked { fence } => JobState::Acked { fence },
            QueueInspectReply::Unknown => JobState::Unknown,
        })
    }

    /// At most `count` (1..=1000) dead letters from position `start`, oldest first.
    pub async fn dead_letters(&self, start: u32, count: usize) -> Result<DeadLetters, Error> {
        let count = batch("count", count)?;
        let k = &self.keys;
        let keys: [&str; 3] = [&k.dead, &k.meta, &k.errors];
        let args = [Arg::Int(i64::from(start)), count];
        Ok(
            match self.client.call(&QUEUE_DEAD_LIST, keys, args).await? {
                QueueDeadListReply::Listed { total, letters } => DeadLetters {
                    total,
                    letters: letters.into_iter().map(letter).collect(),
                },
            },
        )
    }

    /// Moves dead letter `job_id` back to the queue, due after `delay`, deliveries reset to 0.
    pub async fn requeue_dead(&self, job_id: &str, delay: Duration) -> Result<Requeue, Error> {
        check_id(job_id)?;
        if delay > MAX_DELAY {
            return Err(Error::BadArgument("delay must be at most a year".into()));
        }
        let k = &self.keys;
        let keys: [&str; 4] = [&k.dead, &k.due, &k.meta, &k.errors];
        let args = [job_id.into(), Arg::Int(whole_ms(delay))];
        Ok(
            match self.client.call(&QUEUE_DEAD_REQUEUE, keys, args).await? {
                QueueDeadRequeueReply::Requeued => Requeue::Requeued,
                QueueDeadRequeueReply::NotDead => Requeue::NotDead,
            },
        )
    }

    /// Deletes at most `limit` (1..=1000) dead letters that died `older_than` or longer ago
    /// (`Duration::ZERO`: any), oldest first, each with its record, payload and last error.
    /// Call again while [`Purged::purged`] equals `limit` to purge more. Retry-safe: a repeat
    /// deletes at most `limit` more of the same age.
    pub async fn purge_dead_letters(
        &self,
        older_than: Duration,
        limit: usize,
    ) -> Result<Purged, Error> {
        let limit = batch("limit", limit)?;
        if older_than > MAX_DELAY {
            return Err(Error::BadArgument(
                "older_than must be at most a year".into(),
            ));
        }
        let k = &self.keys;
        let keys: [&str; 4] = [&k.dead, &k.meta, &k.payload, &k.errors];
        let args = [Arg::Int(whole_ms(older_than)), limit];
        Ok(
            match self.client.call(&QUEUE_DEAD_PURGE, keys, args).await? {
                QueueDeadPurgeReply::Purged { purged, remaining } => Purged { purged, remaining },
            },
        )
    }
}

fn letter(item: QueueDeadListLettersItem) -> DeadLetter {
    DeadLetter {
        id: item.id,
        dead_at_ms: item.dead_at_ms,
        deliveries: deliveries(item.deliveries),
        error: item.error,
    }
}
