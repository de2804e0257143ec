//! `Queue`: a reliable delayed job queue whose every claim is a fenced lease — the library's
//! `Queue`, and `Job` ([`crate::job`]), its leased job.
//!
//! `claim(worker, ttlMs)` resolves with `{ status: 'claimed', jobs }`, `{ status: 'empty',
//! retryAfterMs }` (something is queued or running: claim again then) or `{ status: 'idle' }`
//! (nothing is: only an enqueue changes that). A plain claim is not retry-safe (a resend would
//! lease other jobs; the ones it may have leased come back after `ttlMs`); `claimWithId` is: a
//! resend with the same claim id returns the same leases. Reading the queue and its dead letters
//! is in [`crate::queue_admin`].

use crate::call::{spawn, Call};
use crate::client::{Client, Gate};
use crate::convert::{bytes, duration, ms, opt_duration, uint};
use crate::errors::{self, bad};
use crate::job::{ack, nack, Acked, Dead, Job, Retrying};
use crate::lease;
use crate::lease::Lost;
use crate::value::{Js, Out, Promise, Resolve};
use napi::bindgen_prelude::{Buffer, Date, Either, Either3, Object};
use napi::Env;
use napi_derive::napi;
use redis_atomic::queue::{Claim, Enqueue, Queue as Lib, QueueConfig, RunAt};
use redis_atomic::{Error, Keyspace};
use std::num::NonZeroU32;
use std::time::{Duration, UNIX_EPOCH};

/// Settings of a `Queue`; every one but the names optional.
#[napi(object)]
pub struct QueueOptions {
    /// Every key starts with `namespace:`.
    pub namespace: String,
    /// The queue's name (its hash tag: all its keys in one slot).
    pub name: String,
    /// Largest payload `enqueue` accepts, bytes (default 64 KiB, at most 1 MiB).
    pub max_payload_bytes: Option<f64>,
    /// Deliveries after which a nacked or expired job goes to the dead letters (default 5).
    pub max_deliveries: Option<f64>,
    /// How long an acked job id is remembered (an enqueue of it is refused meanwhile), ms
    /// (default 24 h; 0 forgets at once).
    pub dedup_window_ms: Option<f64>,
    /// Most dead letters kept (default 10 000).
    pub max_dead_letters: Option<f64>,
    /// How long a dead letter is kept, ms (default 7 days).
    pub dead_letter_retention_ms: Option<f64>,
    /// How long a claim id of `claimWithId` is remembered, ms (1 s to 1 day; default 1 h).
    pub claim_id_ttl_ms: Option<f64>,
}

/// When an enqueued job becomes due (by the server's clock): `delayMs` after the server
/// receives it, or at `runAt` (a `Date` or ms since the epoch); default now.
#[napi(object)]
pub struct EnqueueOptions<'a> {
    /// Due this long after the server receives the request, ms.
    pub delay_ms: Option<f64>,
    /// Due at this wall-clock time (a past time is due at once, ordered by that time).
    #[napi(ts_type = "Date | number")]
    pub run_at: Option<Either<f64, Date<'a>>>,
}

/// A job added.
#[napi(object)]
pub struct Enqueued {
    /// Always `true`.
    #[napi(ts_type = "true")]
    pub enqueued: bool,
    /// Until it is due (server time), ms.
    pub due_in_ms: f64,
}

/// A job with this id exists already (or was acked within the dedup window): nothing added.
/// After a resent enqueue this may be the first attempt's own job.
#[napi(object)]
pub struct Exists {
    /// Always `false`.
    #[napi(ts_type = "false")]
    pub enqueued: bool,
    /// Where the existing job is.
    #[napi(ts_type = "'queued' | 'running' | 'dead' | 'acked'")]
    pub status: String,
}

/// Options of one claim.
#[napi(object)]
pub struct ClaimOptions<'a> {
    /// Jobs to lease at most, 1..=1000 (default 1).
    pub max_jobs: Option<f64>,
    /// Abandons the call (jobs may still have been leased: with a claim id, claim again with
    /// it to get them; without, they come back after `ttlMs`).
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<Object<'a>>,
}

/// Jobs leased to the worker, in due order.
#[napi(object, object_from_js = false)]
pub struct Claimed {
    /// Always `'claimed'`.
    #[napi(ts_type = "'claimed'")]
    pub status: String,
    /// The leased jobs (a repeat of a claim id after every lease ended: none).
    pub jobs: Vec<Job>,
}

/// Nothing is due, but something is queued or running.
#[napi(object)]
pub struct Empty {
    /// Always `'empty'`.
    #[napi(ts_type = "'empty'")]
    pub status: String,
    /// When the next job becomes due or the next lease expires (server time), ms: claim again
    /// then (an enqueue may make a job due sooner).
    pub retry_after_ms: f64,
}

/// The queue holds no queued and no running job.
#[napi(object)]
pub struct Idle {
    /// Always `'idle'`.
    #[napi(ts_type = "'idle'")]
    pub status: String,
}

/// One queue: producers enqueue, workers claim jobs and ack or nack them.
#[napi]
pub struct Queue {
    pub(crate) inner: Lib,
    pub(crate) gate: Gate,
}

#[napi]
impl Queue {
    /// The queue `options.name` under `options.namespace`. Throws `BadArgumentError` for a
    /// setting out of range.
    #[napi(constructor)]
    pub fn new(env: &Env, client: &Client, options: QueueOptions) -> napi::Result<Self> {
        let (conn, gate) = Gate::open(client).map_err(|e| errors::sync(env, e))?;
        let build = || -> Result<Lib, Error> {
            let keyspace = Keyspace::new(options.namespace.clone())?;
            Lib::new(conn, &keyspace, &options.name, config(&options)?)
        };
        Ok(Queue {
            inner: build().map_err(|e| errors::sync(env, e))?,
            gate,
        })
    }

    /// Adds job `jobId` (1..=256 bytes) with `payload`. Retry-safe: a job id that exists is not
    /// added again (`{ enqueued: false, status }`).
    #[napi]
    pub fn enqueue(
        &self,
        env: &Env,
        job_id: String,
        payload: Either<String, Buffer>,
        options: Option<EnqueueOptions<'_>>,
    ) -> napi::Result<Promise<Either<Enqueued, Exists>>> {
        let queue = self.inner.clone();
        let payload = bytes(&payload);
        let run_at = run_at(options);
        let fut = move || async move {
            let answer = queue.enqueue(&job_id, &payload, run_at?).await?;
            Ok(match answer {
                Enqueue::Enqueued { due_in } => Js(Enqueued {
                    enqueued: true,
                    due_in_ms: ms(due_in),
                })
                .resolve(),
                Enqueue::Exists { status } => Js(Exists {
                    enqueued: false,
                    status: status.name().into(),
                })
                .resolve(),
                other => return Err(errors::unknown_outcome(&other)),
            })
        };
        spawn(env, Call::on(&self.gate), fut)
    }

    /// Leases up to `maxJobs` due jobs to `worker` (1..=128 bytes) for `ttlMs` (up to a day).
    /// Not retry-safe (`OutcomeUnknownError.retrySafe` false): `claimWithId` is.
    #[napi]
    pub fn claim(
        &self,
        env: &Env,
        worker: String,
        ttl_ms: f64,
        options: Option<ClaimOptions<'_>>,
    ) -> napi::Result<Promise<Either3<Claimed, Empty, Idle>>> {
        let (max_jobs, signal) = claim_options(options);
        let (queue, gate) = (self.inner.clone(), self.gate.clone());
        let fut = move || async move {
            let (worker, ttl) = (lease::token(worker)?, duration("ttlMs", ttl_ms)?);
            claim_out(queue.claim(&worker, ttl, max_jobs?).await?, gate)
        };
        spawn(
            env,
            Call::abortable(&self.gate, signal.as_ref(), false),
            fut,
        )
    }

    /// `claim`, retry-safe with `claimId` (1..=256 bytes; a new one per claim, e.g. a UUID): a
    /// resend of the id returns the first claim's live leases (same fences) and leases nothing
    /// new; once every lease of it ended, `{ status: 'claimed', jobs: [] }`.
    #[napi]
    pub fn claim_with_id(
        &self,
        env: &Env,
        worker: String,
        ttl_ms: f64,
        claim_id: String,
        options: Option<ClaimOptions<'_>>,
    ) -> napi::Result<Promise<Either3<Claimed, Empty, Idle>>> {
        let (max_jobs, signal) = claim_options(options);
        let (queue, gate) = (self.inner.clone(), self.gate.clone());
        let fut = move || async move {
            let (worker, ttl) = (lease::token(worker)?, duration("ttlMs", ttl_ms)?);
            let claimed = queue
                .claim_with_id(&worker, ttl, max_jobs?, &claim_id)
                .await?;
            claim_out(claimed, gate)
        };
        spawn(env, Call::abortable(&self.gate, signal.as_ref(), true), fut)
    }

    /// Sets the lease of `jobId`, leased to `worker` with `fence`, to end `ttlMs` from the
    /// server's now: `job.extend()` by parts.
    #[napi]
    pub fn extend(
        &self,
        env: &Env,
        job_id: String,
        worker: String,
        fence: f64,
        ttl_ms: f64,
    ) -> napi::Result<Promise<Either<lease::Extended, lease::Lost>>> {
        let queue = self.inner.clone();
        let fut = move || async move {
            let (worker, fence) = (lease::token(worker)?, lease::fence(fence)?);
            let ttl = duration("ttlMs", ttl_ms)?;
            lease::extended(queue.extend(&job_id, &worker, fence, ttl).await?)
        };
        spawn(env, Call::on(&self.gate), fut)
    }

    /// Completes `jobId` if it is leased to `worker` with `fence`: `job.ack()` by parts. Within
    /// the dedup window a repeat answers `{ acked: true }` again.
    #[napi]
    pub fn ack(
        &self,
        env: &Env,
        job_id: String,
        worker: String,
        fence: f64,
    ) -> napi::Result<Promise<Either<Acked, Lost>>> {
        let queue = self.inner.clone();
        let fut = move || async move {
            let (worker, fence) = (lease::token(worker)?, lease::fence(fence)?);
            ack(queue.ack(&job_id, &worker, fence).await?)
        };
        spawn(env, Call::on(&self.gate), fut)
    }

    /// Gives `jobId` back if it is leased to `worker` with `fence`: due again after
    /// `retryAfterMs`, or dead-lettered with `error` once delivered `maxDeliveries` times
    /// (`job.nack()` by parts).
    #[napi]
    pub fn nack(
        &self,
        env: &Env,
        job_id: String,
        worker: String,
        fence: f64,
        retry_after_ms: Option<f64>,
        error: Option<String>,
    ) -> napi::Result<Promise<Either3<Retrying, Dead, Lost>>> {
        let queue = self.inner.clone();
        let fut = move || async move {
            let (worker, fence) = (lease::token(worker)?, lease::fence(fence)?);
            let pause = duration("retryAfterMs", retry_after_ms.unwrap_or(0.0))?;
            let error = error.unwrap_or_default();
            nack(queue.nack(&job_id, &worker, fence, pause, &error).await?)
        };
        spawn(env, Call::on(&self.gate), fut)
    }
}

fn config(o: &QueueOptions) -> Result<QueueConfig, Error> {
    let mut c = QueueConfig::default();
    let count = |what: &str, n: f64| -> Result<u64, Error> { uint(what, n) };
    if let Some(n) = o.max_payload_bytes {
        let n = usize::try_from(count("maxPayloadBytes", n)?).map_err(|_| bad("too large"))?;
        c = c.max_payload_bytes(n);
    }
    if let Some(n) = o.max_deliveries {
        c = c.max_deliveries(nonzero("maxDeliveries", count("maxDeliveries", n)?)?);
    }
    if let Some(d) = opt_duration("dedupWindowMs", o.dedup_window_ms)? {
        c = c.dedup_window(d);
    }
    if let Some(n) = o.max_dead_letters {
        c = c.max_dead_letters(nonzero("maxDeadLetters", count("maxDeadLetters", n)?)?);
    }
    if let Some(d) = opt_duration("deadLetterRetentionMs", o.dead_letter_retention_ms)? {
        c = c.dead_letter_retention(d);
    }
    if let Some(d) = opt_duration("claimIdTtlMs", o.claim_id_ttl_ms)? {
        c = c.claim_id_ttl(d);
    }
    Ok(c)
}

fn nonzero(what: &str, n: u64) -> Result<NonZeroU32, Error> {
    u32::try_from(n)
        .ok()
        .and_then(NonZeroU32::new)
        .ok_or_else(|| bad(format!("{what} must be 1..=2^32-1, got {n}")))
}

fn run_at(options: Option<EnqueueOptions<'_>>) -> Result<RunAt, Error> {
    let Some(o) = options else {
        return Ok(RunAt::Now);
    };
    Ok(match (o.delay_ms, o.run_at) {
        (Some(_), Some(_)) => return Err(bad("enqueue takes delayMs or runAt, not both")),
        (Some(d), None) => RunAt::After(duration("delayMs", d)?),
        (None, Some(at)) => {
            let at_ms = match at {
                Either::A(ms) => ms,
                Either::B(date) => date.value_of().map_err(|e| bad(format!("runAt: {e}")))?,
            };
            let at_ms = uint("runAt", at_ms.floor())?;
            RunAt::At(UNIX_EPOCH + Duration::from_millis(at_ms))
        }
        (None, None) => RunAt::Now,
    })
}

fn claim_options(o: Option<ClaimOptions<'_>>) -> (Result<usize, Error>, Option<Object<'_>>) {
    let (max, signal) = match o {
        Some(o) => (o.max_jobs, o.signal),
        None => (None, None),
    };
    let max = uint("maxJobs", max.unwrap_or(1.0))
        .and_then(|n| usize::try_from(n).map_err(|_| bad("maxJobs too large")));
    (max, signal)
}

fn claim_out(c: Claim, gate: Gate) -> Result<Out, Error> {
    Ok(match c {
        Claim::Claimed(jobs) => Js(Claimed {
            status: "claimed".into(),
            jobs: jobs
                .into_iter()
                .map(|j| Job::new(j, gate.clone()))
                .collect(),
        })
        .resolve(),
        Claim::Empty { retry_after } => Js(Empty {
            status: "empty".into(),
            retry_after_ms: ms(retry_after),
        })
        .resolve(),
        Claim::Idle => Js(Idle {
            status: "idle".into(),
        })
        .resolve(),
        other => return Err(errors::unknown_outcome(&other)),
    })
}
