//! The queue's value types: settings, when a job runs, and every outcome. The leased job itself
//! ([`super::Job`]) lives with the lease operations in `job.rs`.

use super::Job;
use crate::script::registry::QueueEnqueueStatus;
use crate::Error;
use std::num::NonZeroU32;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Hard cap of a payload, in bytes (the scripts refuse larger ones too).
pub const MAX_PAYLOAD: usize = 1 << 20;
/// Longest job id, in bytes.
pub const MAX_JOB_ID_LEN: usize = 256;
/// Longest worker name, in bytes.
pub const MAX_WORKER_LEN: usize = 128;
/// Most jobs one claim may lease.
pub const MAX_BATCH: usize = 1000;
/// Longest last-error text kept for a job; longer texts are cut (at a character boundary).
pub const MAX_ERROR_LEN: usize = 4096;
/// Longest lease (ttl of a claim or an extension): one day.
pub const MAX_TTL: Duration = Duration::from_secs(24 * 3600);
/// Longest delay, retry pause, dedup window or dead-letter retention: one year.
pub const MAX_DELAY: Duration = Duration::from_secs(365 * 24 * 3600);
/// Longest claim id of [`super::Queue::claim_with_id`], in bytes (hashed into its record's key).
pub const MAX_CLAIM_ID_LEN: usize = 256;
/// Longest claim-id TTL ([`QueueConfig::claim_id_ttl`]): one day.
pub const MAX_CLAIM_ID_TTL: Duration = Duration::from_secs(24 * 3600);
/// Most dead letters a queue may be configured to keep.
pub const MAX_DEAD_LETTERS: u32 = 1_000_000_000;

/// Settings of a [`super::Queue`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct QueueConfig {
    /// Largest payload accepted by `enqueue` (at most [`MAX_PAYLOAD`]); 64 KiB by default.
    pub max_payload_bytes: usize,
    /// Deliveries after which a job that is nacked or whose lease expires goes to the dead
    /// letters instead of being retried; 5 by default.
    pub max_deliveries: NonZeroU32,
    /// How long an acked job id is remembered, so enqueueing it again is refused as a duplicate;
    /// 24 h by default. Zero forgets at once (then an ack retried after a lost reply answers
    /// [`Ack::Lost`], and the id may be enqueued again).
    pub dedup_window: Duration,
    /// Most dead letters kept (at most [`MAX_DEAD_LETTERS`]); 10 000 by default. Each job that
    /// dies trims the oldest beyond it (a few per death, so the bound holds).
    pub max_dead_letters: NonZeroU32,
    /// How long a dead letter is kept (1 ms ..= a year); 7 days by default. Each job that dies
    /// trims a few older ones; [`super::Queue::purge_dead_letters`] deletes them on demand.
    pub dead_letter_retention: Duration,
    /// How long a claim id of [`super::Queue::claim_with_id`] is remembered (1 s ..= a day, and
    /// never less than that claim's ttl); 1 h by default. While remembered, a
    /// repeat of the id returns the first claim's live leases and leases nothing new; after, the
    /// id claims afresh. Keep it longer than a caller may keep resending one claim.
    pub claim_id_ttl: Duration,
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig {
            max_payload_bytes: 64 * 1024,
            max_deliveries: NonZeroU32::new(5).unwrap_or(NonZeroU32::MIN),
            dedup_window: Duration::from_secs(24 * 3600),
            max_dead_letters: NonZeroU32::new(10_000).unwrap_or(NonZeroU32::MIN),
            dead_letter_retention: Duration::from_secs(7 * 24 * 3600),
            claim_id_ttl: Duration::from_secs(3600),
        }
    }
}

impl QueueConfig {
    /// With this payload limit.
    pub fn max_payload_bytes(mut self, limit: usize) -> Self {
        self.max_payload_bytes = limit;
        self
    }

    /// With this many deliveries before dead-lettering.
    pub fn max_deliveries(mut self, n: NonZeroU32) -> Self {
        self.max_deliveries = n;
        self
    }

    /// With this dedup window for acked ids.
    pub fn dedup_window(mut self, window: Duration) -> Self {
        self.dedup_window = window;
        self
    }

    /// Keeping at most `n` dead letters.
    pub fn max_dead_letters(mut self, n: NonZeroU32) -> Self {
        self.max_dead_letters = n;
        self
    }

    /// Keeping dead letters for `retention`.
    pub fn dead_letter_retention(mut self, retention: Duration) -> Self {
        self.dead_letter_retention = retention;
        self
    }

    /// Remembering claim ids for `ttl`.
    pub fn claim_id_ttl(mut self, ttl: Duration) -> Self {
        self.claim_id_ttl = ttl;
        self
    }

    pub(crate) fn validate(&self) -> Result<(), Error> {
        if self.claim_id_ttl < Duration::from_secs(1) || self.claim_id_ttl > MAX_CLAIM_ID_TTL {
            return Err(Error::BadArgument(
                "claim_id_ttl must be 1 s ..= a day".into(),
            ));
        }
        if self.max_dead_letters.get() > MAX_DEAD_LETTERS {
            return Err(Error::BadArgument(format!(
                "max_dead_letters must be at most {MAX_DEAD_LETTERS}, got {}",
                self.max_dead_letters
            )));
        }
        if self.dead_letter_retention < Duration::from_millis(1)
            || self.dead_letter_retention > MAX_DELAY
        {
            return Err(Error::BadArgument(
                "dead_letter_retention must be 1 ms ..= a year".into(),
            ));
        }
        if self.max_payload_bytes > MAX_PAYLOAD {
            return Err(Error::BadArgument(format!(
                "max_payload_bytes must be at most {MAX_PAYLOAD}, got {}",
                self.max_payload_bytes
            )));
        }
        if self.dedup_window > MAX_DELAY {
            return Err(Error::BadArgument(
                "dedup_window must be at most a year".into(),
            ));
        }
        Ok(())
    }
}

/// When an enqueued job becomes due. Decided on the server's clock, never the caller's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RunAt {
    /// Due at once.
    Now,
    /// Due this long after the server receives the request.
    After(Duration),
    /// Due at this wall-clock time, compared with the server's clock. A time in the past is due
    /// at once and is ordered by that time (before jobs due later).
    At(SystemTime),
}

impl RunAt {
    /// `(delay_ms, at_ms)` as the script takes them (`at_ms` 0: not given).
    pub(crate) fn args(self) -> Result<(i64, i64), Error> {
        match self {
            RunAt::Now => Ok((0, 0)),
            RunAt::After(d) if d <= MAX_DELAY => Ok((whole_ms(d), 0)),
            RunAt::After(d) => Err(Error::BadArgument(format!(
                "delay must be at most a year, got {d:?}"
            ))),
            RunAt::At(t) => {
                let ms = t.duration_since(UNIX_EPOCH).map_or(1, whole_ms).max(1);
                if ms > 253_402_300_799_999 {
                    return Err(Error::BadArgument("run_at beyond the year 9999".into()));
                }
                Ok((0, ms))
            }
        }
    }
}

/// Whole milliseconds of `d`, saturating.
pub(crate) fn whole_ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Where a job is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum JobStatus {
    /// Waiting to be due or claimed.
    Queued,
    /// Leased to a worker.
    Running,
    /// In the dead letters.
    Dead,
    /// Acked (remembered for the dedup window).
    Acked,
}

impl JobStatus {
    /// The vocabulary's word for it (`queued`, `running`, `dead`, `acked`), as every face
    /// spells a status.
    pub fn name(self) -> &'static str {
        match self {
            JobStatus::Queued => "queued",
            JobStatus::Running => "running",
            JobStatus::Dead => "dead",
            JobStatus::Acked => "acked",
        }
    }
}

impl From<QueueEnqueueStatus> for JobStatus {
    fn from(status: QueueEnqueueStatus) -> Self {
        match status {
            QueueEnqueueStatus::Queued => JobStatus::Queued,
            QueueEnqueueStatus::Running => JobStatus::Running,
            QueueEnqueueStatus::Dead => JobStatus::Dead,
            QueueEnqueueStatus::Acked => JobStatus::Acked,
        }
    }
}

/// Result of `enqueue`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Enqueue {
    /// Added; due in this long (server time).
    Enqueued {
        /// Time until due.
        due_in: Duration,
    },
    /// A job with this id already exists (or was acked within the dedup window): nothing added.
    /// After a retried call this may be the first attempt's own job.
    Exists {
        /// Where the existing job is.
        status: JobStatus,
    },
}

/// Result of `claim`.
#[derive(Debug)]
#[non_exhaustive]
pub enum Claim {
    /// One or more jobs, in due order, now leased to the caller.
    Claimed(Vec<Job>),
    /// Nothing is due, but something is queued or running: claim again after `retry_after`.
    Empty {
        /// When the next job becomes due or the next lease expires (server time, from now); an
        /// enqueue may make a job due sooner.
        retry_after: Duration,
    },
    /// The queue holds no queued and no running job: only an enqueue changes that.
    Idle,
}

/// Result of an ack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ack {
    /// The job is complete.
    Acked,
    /// This worker and fence are no longer the job's lease: another worker has (or had) the job.
    Lost,
}

/// Result of a nack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Nack {
    /// Due again after this pause.
    Retrying {
        /// Pause before the job is due.
        retry_after: Duration,
    },
    /// Delivered `max_deliveries` times: moved to the dead letters with the error.
    Dead,
    /// This worker and fence are no longer the job's lease (after a retried call: maybe the
    /// first attempt's own nack).
    Lost,
}

/// Result of a reap.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Reaped {
    /// Expired leases whose jobs are due again.
    pub requeued: u64,
    /// Expired leases whose jobs went to the dead letters.
    pub dead: u64,
}
