//! Reading a `Queue` and handling its dead letters: counts by state, one job's state, the dead
//! letters (list, requeue, purge), returning expired leases (`reap`) and the queue's keys. The
//! reads may run on replicas; requeue, purge and reap are writes, all retry-safe.

use crate::call::{spawn, Call};
use crate::convert::{duration, ms, uint};
use crate::errors::{self, bad};
use crate::queue::Queue;
use crate::value::{Js, Out, Promise, Resolve};
use napi::bindgen_prelude::{Either, Either5};
use napi::Env;
use napi_derive::napi;
use redis_atomic::queue::{JobState, Requeue};
use redis_atomic::Error;

/// Counts of a queue's jobs by state.
#[napi(object)]
pub struct QueueStats {
    /// Due now, waiting for a claim.
    pub ready: f64,
    /// Queued, due later.
    pub scheduled: f64,
    /// Leased to workers (expired leases included).
    pub running: f64,
    /// Leases past their deadline, not yet returned by a claim or reap.
    pub expired: f64,
    /// Dead letters.
    pub dead: f64,
    /// Acked ids still remembered for the dedup window.
    pub acked: f64,
}

/// A job waiting to be due or claimed.
#[napi(object)]
pub struct JobQueued {
    /// Always `'queued'`.
    #[napi(ts_type = "'queued'")]
    pub state: String,
    /// Until it is due, ms (0 when due now).
    pub due_in_ms: f64,
    /// Deliveries so far.
    pub deliveries: f64,
    /// The fence of its last lease (0 if never claimed).
    pub last_fence: f64,
}

/// A job leased to a worker.
#[napi(object)]
pub struct JobRunning {
    /// Always `'running'`.
    #[napi(ts_type = "'running'")]
    pub state: String,
    /// The current lease's fence.
    pub fence: f64,
    /// Deliveries so far, this one included.
    pub deliveries: f64,
    /// Time left on the lease, ms (0 when expired and not yet returned).
    pub ttl_ms: f64,
    /// The worker that claimed it.
    pub worker: String,
}

/// A dead letter.
#[napi(object)]
pub struct JobDead {
    /// Always `'dead'`.
    #[napi(ts_type = "'dead'")]
    pub state: String,
    /// Deliveries made.
    pub deliveries: f64,
    /// The last error.
    pub error: String,
}

/// An acked job (within the dedup window).
#[napi(object)]
pub struct JobAcked {
    /// Always `'acked'`.
    #[napi(ts_type = "'acked'")]
    pub state: String,
    /// The fence of the lease that acked it.
    pub fence: f64,
}

/// No such job (never enqueued, or acked and forgotten).
#[napi(object)]
pub struct JobUnknown {
    /// Always `'unknown'`.
    #[napi(ts_type = "'unknown'")]
    pub state: String,
}

/// A dead letter.
#[napi(object)]
pub struct DeadLetter {
    /// The job id.
    pub id: String,
    /// The server's clock (ms since the epoch) when it died.
    pub dead_at_ms: f64,
    /// Deliveries made.
    pub deliveries: f64,
    /// The last error (a nack's text, or a note that the lease expired).
    pub error: String,
}

/// One page of dead letters.
#[napi(object)]
pub struct DeadLetters {
    /// Dead letters in all.
    pub total: f64,
    /// This page, oldest first.
    pub letters: Vec<DeadLetter>,
}

/// Which dead letters to list.
#[napi(object)]
pub struct DeadLetterPage {
    /// Position of the first, oldest first (default 0).
    pub start: Option<f64>,
    /// How many, 1..=1000 (default 100).
    pub count: Option<f64>,
}

/// Which dead letters to purge.
#[napi(object)]
pub struct PurgeOptions {
    /// Only those dead at least this long, ms (default 0: any).
    pub older_than_ms: Option<f64>,
    /// At most this many, 1..=1000 (default 1000): call again while `purged` equals it.
    pub limit: Option<f64>,
}

/// The answer of a purge.
#[napi(object)]
pub struct Purged {
    /// Dead letters deleted (with their records, payloads and last errors).
    pub purged: f64,
    /// Dead letters left (of any age).
    pub remaining: f64,
}

/// A requeue that took: the job is due again, its deliveries reset.
#[napi(object)]
pub struct Requeued {
    /// Always `true`.
    #[napi(ts_type = "true")]
    pub requeued: bool,
}

/// A requeue of a job that is not a dead letter (after a resent requeue: maybe requeued by the
/// first attempt): nothing moved.
#[napi(object)]
pub struct NotDead {
    /// Always `false`.
    #[napi(ts_type = "false")]
    pub requeued: bool,
}

/// The answer of a reap.
#[napi(object)]
pub struct Reaped {
    /// Expired leases whose jobs are due again.
    pub requeued: f64,
    /// Expired leases whose jobs went to the dead letters.
    pub dead: f64,
}

/// Every key of a queue (all under its `{name}` hash tag).
#[napi(object)]
pub struct QueueKeys {
    /// Sorted set: job id → when it is due.
    pub due: String,
    /// Sorted set: leased job id → lease deadline.
    pub inflight: String,
    /// Sorted set: dead letter → when it died.
    pub dead: String,
    /// Sorted set: acked job id → when acked (for the dedup window).
    pub done: String,
    /// Hash: job id → state, fence, deliveries, worker.
    pub meta: String,
    /// Hash: job id → payload.
    pub payload: String,
    /// Hash: job id → last error.
    pub errors: String,
    /// The prefix of the claim-id records of `claimWithId` (see `claimKey`).
    pub claims: String,
}

#[napi]
impl Queue {
    /// Counts of jobs by state.
    #[napi]
    pub fn stats(&self, env: &Env) -> napi::Result<Promise<QueueStats>> {
        let queue = self.inner.clone();
        let fut = move || async move {
            let s = queue.stats().await?;
            let n = |v: u64| v as f64;
            Ok(Js(QueueStats {
                ready: n(s.ready),
                scheduled: n(s.scheduled),
                running: n(s.running),
                expired: n(s.expired),
                dead: n(s.dead),
                acked: n(s.acked),
            }))
        };
        spawn(env, Call::on(&self.gate), fut)
    }

    /// One job's state.
    // The union spelled out: napi-rs renders it as the TypeScript union (an alias would not be).
    #[allow(clippy::type_complexity)]
    #[napi]
    pub fn inspect(
        &self,
        env: &Env,
        job_id: String,
    ) -> napi::Result<Promise<Either5<JobQueued, JobRunning, JobDead, JobAcked, JobUnknown>>> {
        let queue = self.inner.clone();
        let fut = move || async move { state(queue.inspect(&job_id).await?) };
        spawn(env, Call::on(&self.gate), fut)
    }

    /// A page of dead letters, oldest first.
    #[napi]
    pub fn dead_letters(
        &self,
        env: &Env,
        page: Option<DeadLetterPage>,
    ) -> napi::Result<Promise<DeadLetters>> {
        let queue = self.inner.clone();
        let (start, count) = page.map_or((None, None), |p| (p.start, p.count));
        let fut = move || async move {
            let start = u32::try_from(uint("start", start.unwrap_or(0.0))?)
                .map_err(|_| bad("start too large"))?;
            let count = uint("count", count.unwrap_or(100.0))?;
            let page = queue.dead_letters(start, count as usize).await?;
            Ok(Js(DeadLetters {
                total: page.total as f64,
                letters: page
                    .letters
                    .into_iter()
                    .map(|l| DeadLetter {
                        id: l.id,
                        dead_at_ms: l.dead_at_ms as f64,
                        deliveries: f64::from(l.deliveries),
                        error: l.error,
                    })
                    .collect(),
            }))
        };
        spawn(env, Call::on(&self.gate), fut)
    }

    /// Moves dead letter `jobId` back to the queue, due after `delayMs` (default 0), its
    /// deliveries reset.
    #[napi]
    pub fn requeue_dead(
        &self,
        env: &Env,
        job_id: String,
        delay_ms: Option<f64>,
    ) -> napi::Result<Promise<Either<Requeued, NotDead>>> {
        let queue = self.inner.clone();
        let fut = move || async move {
            let delay = duration("delayMs", delay_ms.unwrap_or(0.0))?;
            Ok(match queue.requeue_dead(&job_id, delay).await? {
                Requeue::Requeued => Js(Requeued { requeued: true }).resolve(),
                Requeue::NotDead => Js(NotDead { requeued: false }).resolve(),
                other => return Err(errors::unknown_outcome(&other)),
            })
        };
        spawn(env, Call::on(&self.gate), fut)
    }

    /// Deletes dead letters (oldest first), each with its record, payload and last error.
    #[napi]
    pub fn purge_dead_letters(
        &self,
        env: &Env,
        options: Option<PurgeOptions>,
    ) -> napi::Result<Promise<Purged>> {
        let queue = self.inner.clone();
        let (older, limit) = options.map_or((None, None), |o| (o.older_than_ms, o.limit));
        let fut = move || async move {
            let older = duration("olderThanMs", older.unwrap_or(0.0))?;
            let limit = uint("limit", limit.unwrap_or(1000.0))? as usize;
            let p = queue.purge_dead_letters(older, limit).await?;
            Ok(Js(Purged {
                purged: p.purged as f64,
                remaining: p.remaining as f64,
            }))
        };
        spawn(env, Call::on(&self.gate), fut)
    }

    /// Returns at most `limit` (1..=1000, default 100) expired leases to the queue (or the dead
    /// letters). Claims do this too; call it from a janitor when workers may all be gone.
    #[napi]
    pub fn reap(&self, env: &Env, limit: Option<f64>) -> napi::Result<Promise<Reaped>> {
        let queue = self.inner.clone();
        let fut = move || async move {
            let limit = uint("limit", limit.unwrap_or(100.0))? as usize;
            let r = queue.reap(limit).await?;
            Ok(Js(Reaped {
                requeued: r.requeued as f64,
                dead: r.dead as f64,
            }))
        };
        spawn(env, Call::on(&self.gate), fut)
    }

    /// Every key of this queue.
    #[napi(getter)]
    pub fn keys(&self) -> QueueKeys {
        let k = self.inner.keys();
        QueueKeys {
            due: k.due.clone(),
            inflight: k.inflight.clone(),
            dead: k.dead.clone(),
            done: k.done.clone(),
            meta: k.meta.clone(),
            payload: k.payload.clone(),
            errors: k.errors.clone(),
            claims: k.claims.clone(),
        }
    }

    /// The key of `claimId`'s record (`claimWithId`).
    #[napi]
    pub fn claim_key(&self, env: &Env, claim_id: String) -> napi::Result<String> {
        self.inner
            .keys()
            .claim(&claim_id)
            .map_err(|e| errors::sync(env, e))
    }
}

fn state(s: JobState) -> Result<Out, Error> {
    let n = |d: u32| f64::from(d);
    Ok(match s {
        JobState::Queued {
            due_in,
            deliveries,
            last_fence,
        } => Js(JobQueued {
            state: "queued".into(),
            due_in_ms: ms(due_in),
            deliveries: n(deliveries),
            last_fence: last_fence.0 as f64,
        })
        .resolve(),
        JobState::Running {
            fence,
            deliveries,
            ttl,
            worker,
        } => Js(JobRunning {
            state: "running".into(),
            fence: fence.0 as f64,
            deliveries: n(deliveries),
            ttl_ms: ms(ttl),
            worker,
        })
        .resolve(),
        JobState::Dead { deliveries, error } => Js(JobDead {
            state: "dead".into(),
            deliveries: n(deliveries),
            error,
        })
        .resolve(),
        JobState::Acked { fence } => Js(JobAcked {
            state: "acked".into(),
            fence: fence.0 as f64,
        })
        .resolve(),
        JobState::Unknown => Js(JobUnknown {
            state: "unknown".into(),
        })
        .resolve(),
        other => return Err(errors::unknown_outcome(&other)),
    })
}
