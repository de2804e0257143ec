//! The job queue (`Queue`, `Job`): a binding of the library's `queue::Queue`, a named instance.
//!
//! `claim` answers a `list` of `Job` handles (each a fenced lease: `ack()`, `nack(...)`,
//! `extend`, `watch`), `Empty(retry_after)` or `Idle()`. The by-parts calls take the job id, the
//! worker and the fence; the dead letters are listed, requeued and purged here too. The values
//! are in `queue_admin.rs`.

use crate::client::Client;
use crate::convert::{bytes_of, duration, opt_duration, size, uint};
use crate::errors::{bad, raise};
use crate::lease::{by_parts, handle, token, Abandon};
use crate::outcome::Outcome;
use crate::queue_admin::{DeadLetters, Purged, QueueKeys, QueueStats, Reaped};
use crate::runtime::Bridge;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use redis_atomic::queue::{self as q, QueueConfig, RunAt};
use redis_atomic::Keyspace;
use std::num::NonZeroU32;
use std::time::{Duration, UNIX_EPOCH};

/// The error a job given back by the binding is nacked with.
const ABANDONED: &str = "claim abandoned: its asyncio caller was cancelled before taking the job";

impl Abandon for q::Job {
    const WHAT: &'static str = "job";
    /// Due again at once; the delivery counts (the claim made it).
    async fn abandon(self) {
        let _ = self.nack(Duration::ZERO, ABANDONED).await;
    }
}

handle! {
    /// A leased job: its id, payload and lease. `ack()` or `nack(...)` ends it; `extend(ttl)`
    /// renews it; `watch()` renews it in the background. Dropping it does nothing: the lease
    /// runs out and the job is claimed again.
    Job(q::Job) { id: String, payload: Vec<u8>, deliveries: u32, claimed_at_ms: u64 }
    {
        /// The job id.
        #[getter]
        fn id(&self) -> &str {
            &self.id
        }
        /// The payload, byte for byte as enqueued.
        #[getter]
        fn payload<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
            PyBytes::new(py, &self.payload)
        }
        /// Deliveries so far, this one included (1 on the first claim).
        #[getter]
        fn deliveries(&self) -> u32 {
            self.deliveries
        }
        /// The server's clock (ms since the epoch) when the lease began.
        #[getter]
        fn claimed_at_ms(&self) -> u64 {
            self.claimed_at_ms
        }
        /// The worker the job is leased to (the owner token).
        #[getter]
        fn worker(&self) -> &str {
            self.token.as_str()
        }
        /// Completes the job if this is still its lease: `Acked` or `Lost`.
        fn ack(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
            self.slot.end_verb(py, |j| j.ack(), Outcome::Ack)
        }
        /// Gives the job back if this is still its lease: `Retrying(retry_after)` (due again
        /// then), `Dead()` (delivered `max_deliveries` times) or `Lost`. `error` (cut to
        /// 4096 bytes) is kept as the job's last error.
        #[pyo3(signature = (retry_after=None, error=""))]
        fn nack(
            &self,
            py: Python<'_>,
            retry_after: Option<&Bound<'_, PyAny>>,
            error: &str,
        ) -> PyResult<Py<PyAny>> {
            let after = opt_duration(retry_after, "retry_after")?.unwrap_or_default();
            let error = error.to_string();
            let nack = move |j: q::Job| async move { j.nack(after, &error).await };
            self.slot.end_verb(py, nack, Outcome::Nack)
        }
        fn __repr__(&self) -> String {
            format!("Job(id={:?}, fence={}, deliveries={}, ended={})", self.id, self.fence,
                    self.deliveries, crate::lease::py_bool(self.slot.is_ended()))
        }
    }
}

/// A claimed job's handle, answering through `bridge`.
pub(crate) fn leased(j: q::Job, bridge: Bridge) -> Job {
    let (id, payload) = (j.id().to_string(), j.payload().to_vec());
    let (deliveries, claimed_at_ms) = (j.deliveries(), j.claimed_at_ms());
    Job::of(j, bridge, id, payload, deliveries, claimed_at_ms)
}

fn nonzero(obj: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<NonZeroU32>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(None);
    };
    let n = u32::try_from(uint(obj, what)?)
        .ok()
        .and_then(NonZeroU32::new);
    n.map(Some)
        .ok_or_else(|| bad(format!("{what} must be in 1..=2^32-1")))
}

/// When an enqueued job runs: after `delay`, or at `at` (seconds since the epoch).
fn run_at(delay: Option<Duration>, at: Option<f64>) -> PyResult<RunAt> {
    match (delay, at) {
        (Some(_), Some(_)) => Err(bad("enqueue takes delay or at, not both")),
        (Some(d), None) => Ok(RunAt::After(d)),
        (None, Some(t)) if t.is_finite() => Ok(RunAt::At(
            UNIX_EPOCH + Duration::try_from_secs_f64(t.max(0.0)).unwrap_or(Duration::MAX / 2),
        )),
        (None, Some(_)) => Err(bad("at must be a finite time")),
        (None, None) => Ok(RunAt::Now),
    }
}

/// One named queue.
#[pyclass(frozen, module = "redis_atomic._native")]
pub struct Queue {
    inner: q::Queue,
    bridge: Bridge,
}

#[pymethods]
impl Queue {
    #[new]
    #[pyo3(signature = (client, namespace, name, *, max_payload_bytes=None, max_deliveries=None,
                        dedup_window=None, max_dead_letters=None, dead_letter_retention=None,
                        claim_id_ttl=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        client: &Bound<'_, Client>,
        namespace: &str,
        name: &str,
        max_payload_bytes: Option<&Bound<'_, PyAny>>,
        max_deliveries: Option<&Bound<'_, PyAny>>,
        dedup_window: Option<&Bound<'_, PyAny>>,
        max_dead_letters: Option<&Bound<'_, PyAny>>,
        dead_letter_retention: Option<&Bound<'_, PyAny>>,
        claim_id_ttl: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let (client, bridge) = client.get().parts(client.py())?;
        let mut c = QueueConfig::default();
        if max_payload_bytes.is_some_and(|n| !n.is_none()) {
            c = c.max_payload_bytes(size(max_payload_bytes, "max_payload_bytes", 0)?);
        }
        if let Some(n) = nonzero(max_deliveries, "max_deliveries")? {
            c = c.max_deliveries(n);
        }
        if let Some(d) = opt_duration(dedup_window, "dedup_window")? {
            c = c.dedup_window(d);
        }
        if let Some(n) = nonzero(max_dead_letters, "max_dead_letters")? {
            c = c.max_dead_letters(n);
        }
        if let Some(d) = opt_duration(dead_letter_retention, "dead_letter_retention")? {
            c = c.dead_letter_retention(d);
        }
        if let Some(d) = opt_duration(claim_id_ttl, "claim_id_ttl")? {
            c = c.claim_id_ttl(d);
        }
        let keyspace = Keyspace::new(namespace).map_err(raise)?;
        let inner = q::Queue::new(client, &keyspace, name, c).map_err(raise)?;
        Ok(Queue { inner, bridge })
    }

    /// Adds job `job_id` with `payload` (bytes or str), due now, after `delay`, or at `at`
    /// (seconds since the epoch): `Enqueued(due_in)` or `Exists(status)`. Retry-safe.
    #[pyo3(signature = (job_id, payload, *, delay=None, at=None))]
    fn enqueue(
        &self,
        py: Python<'_>,
        job_id: String,
        payload: &Bound<'_, PyAny>,
        delay: Option<&Bound<'_, PyAny>>,
        at: Option<f64>,
    ) -> PyResult<Py<PyAny>> {
        let payload = bytes_of(payload, "payload")?;
        let when = run_at(opt_duration(delay, "delay")?, at)?;
        let queue = self.inner.clone();
        self.bridge.run(py, async move {
            queue
                .enqueue(&job_id, &payload, when)
                .await
                .map(Outcome::Enqueue)
        })
    }

    /// Leases up to `max_jobs` due jobs to `worker` for `ttl`: a list of `Job`, `Empty` or
    /// `Idle`. Not retried after an unknown outcome (`claim_with_id` is the retry-safe claim).
    #[pyo3(signature = (worker, ttl, max_jobs=None))]
    fn claim(
        &self,
        py: Python<'_>,
        worker: &str,
        ttl: &Bound<'_, PyAny>,
        max_jobs: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let worker = token(worker)?;
        let ttl = duration(ttl, "ttl")?;
        let max = size(max_jobs, "max_jobs", 1)?;
        let (queue, bridge) = (self.inner.clone(), self.bridge.clone());
        self.bridge.run(py, async move {
            let c = queue.claim(&worker, ttl, max).await?;
            Ok::<_, redis_atomic::Error>(Outcome::Claim(c, bridge))
        })
    }

    /// `claim`, retry-safe with `claim_id` (a new one per claim): a repeat of the id returns
    /// the first claim's live leases and leases nothing new.
    #[pyo3(signature = (worker, ttl, max_jobs, claim_id))]
    fn claim_with_id(
        &self,
        py: Python<'_>,
        worker: &str,
        ttl: &Bound<'_, PyAny>,
        max_jobs: &Bound<'_, PyAny>,
        claim_id: String,
    ) -> PyResult<Py<PyAny>> {
        let worker = token(worker)?;
        let ttl = duration(ttl, "ttl")?;
        let max = size(Some(max_jobs), "max_jobs", 1)?;
        let (queue, bridge) = (self.inner.clone(), self.bridge.clone());
        self.bridge.run(py, async move {
            let c = queue.claim_with_id(&worker, ttl, max, &claim_id).await?;
            Ok::<_, redis_atomic::Error>(Outcome::Claim(c, bridge))
        })
    }

    /// Sets the lease of `job_id` (leased to `worker` with `fence`) to end `ttl` from the
    /// server's now: `Extended` or `Lost`.
    fn extend(
        &self,
        py: Python<'_>,
        job_id: String,
        worker: &str,
        fence: &Bound<'_, PyAny>,
        ttl: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let (worker, fence) = by_parts(worker, fence)?;
        let ttl = duration(ttl, "ttl")?;
        let queue = self.inner.clone();
        self.bridge.run(py, async move {
            queue
                .extend(&job_id, &worker, fence, ttl)
                .await
                .map(Outcome::Extend)
        })
    }

    /// Completes `job_id` if it is leased to `worker` with `fence`: `Acked` or `Lost`.
    fn ack(
        &self,
        py: Python<'_>,
        job_id: String,
        worker: &str,
        fence: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let (worker, fence) = by_parts(worker, fence)?;
        let queue = self.inner.clone();
        self.bridge.run(py, async move {
            queue.ack(&job_id, &worker, fence).await.map(Outcome::Ack)
        })
    }

    /// Gives `job_id` back if it is leased to `worker` with `fence`: `Retrying`,
    /// `Dead` or `Lost`.
    #[pyo3(signature = (job_id, worker, fence, retry_after=None, error=""))]
    fn nack(
        &self,
        py: Python<'_>,
        job_id: String,
        worker: &str,
        fence: &Bound<'_, PyAny>,
        retry_after: Option<&Bound<'_, PyAny>>,
        error: &str,
    ) -> PyResult<Py<PyAny>> {
        let (worker, fence) = by_parts(worker, fence)?;
        let after = opt_duration(retry_after, "retry_after")?.unwrap_or_default();
        let error = error.to_string();
        let queue = self.inner.clone();
        self.bridge.run(py, async move {
            queue
                .nack(&job_id, &worker, fence, after, &error)
                .await
                .map(Outcome::Nack)
        })
    }

    /// Counts of jobs by state (read-only): `QueueStats`.
    fn stats(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let queue = self.inner.clone();
        self.bridge
            .run(py, async move { queue.stats().await.map(QueueStats::from) })
    }

    /// One job's state (read-only): `JobQueued`, `JobRunning`, `JobDead`, `JobAcked` or
    /// `JobUnknown`.
    fn inspect(&self, py: Python<'_>, job_id: String) -> PyResult<Py<PyAny>> {
        let queue = self.inner.clone();
        self.bridge.run(py, async move {
            queue.inspect(&job_id).await.map(Outcome::JobState)
        })
    }

    /// At most `count` (1..=1000) dead letters from position `start`, oldest first.
    #[pyo3(signature = (start=None, count=None))]
    fn dead_letters(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        count: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let start = u32::try_from(start.map_or(Ok(0), |s| uint(s, "start"))?)
            .map_err(|_| bad("start must be in 0..=2^32-1"))?;
        let count = size(count, "count", 100)?;
        let queue = self.inner.clone();
        self.bridge.run(py, async move {
            queue
                .dead_letters(start, count)
                .await
                .map(DeadLetters::from)
        })
    }

    /// Moves dead letter `job_id` back to the queue, due after `delay`, deliveries reset:
    /// `Requeued` or `NotDead`.
    #[pyo3(signature = (job_id, delay=None))]
    fn requeue_dead(
        &self,
        py: Python<'_>,
        job_id: String,
        delay: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let delay = opt_duration(delay, "delay")?.unwrap_or_default();
        let queue = self.inner.clone();
        self.bridge.run(py, async move {
            queue
                .requeue_dead(&job_id, delay)
                .await
                .map(Outcome::Requeue)
        })
    }

    /// Deletes at most `limit` (1..=1000) dead letters that died `older_than` or longer ago
    /// (0: any), oldest first: `Purged`.
    #[pyo3(signature = (older_than=None, limit=None))]
    fn purge_dead_letters(
        &self,
        py: Python<'_>,
        older_than: Option<&Bound<'_, PyAny>>,
        limit: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let limit = size(limit, "limit", 1000)?;
        let older = opt_duration(older_than, "older_than")?.unwrap_or_default();
        let queue = self.inner.clone();
        self.bridge.run(py, async move {
            let p = queue.purge_dead_letters(older, limit).await?;
            Ok::<_, redis_atomic::Error>(Purged {
                purged: p.purged,
                remaining: p.remaining,
            })
        })
    }

    /// Returns at most `limit` (1..=1000) expired leases to the queue (or the dead letters).
    #[pyo3(signature = (limit=None))]
    fn reap(&self, py: Python<'_>, limit: Option<&Bound<'_, PyAny>>) -> PyResult<Py<PyAny>> {
        let limit = size(limit, "limit", 100)?;
        let queue = self.inner.clone();
        self.bridge.run(py, async move {
            let r = queue.reap(limit).await?;
            Ok::<_, redis_atomic::Error>(Reaped {
                requeued: r.requeued,
                dead: r.dead,
            })
        })
    }

    /// Every key of this queue.
    #[getter]
    fn keys(&self) -> QueueKeys {
        QueueKeys::from(self.inner.keys())
    }

    /// The key of `claim_id`'s record.
    fn claim_key(&self, claim_id: &str) -> PyResult<String> {
        self.inner.keys().claim(claim_id).map_err(raise)
    }
}
