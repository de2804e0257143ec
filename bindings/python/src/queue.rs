//! The job queue (`Queue`, `Job`): a binding of the library's `queue::Queue`, a named instance.
//!
//! `claim` answers a `list` of `Job` handles (each a fenced lease: `ack()`, `nack(...)`,
//! `extend`, `watch`), `Empty(retry_after)` or `Idle()`. The by-parts calls take the job id, the
//! worker and the fence; the dead letters are listed, requeued and purged here too. The values
//! are in `queue_admin.rs`.

use crate::client::Client;
use crate::convert::{duration, opt_duration, uint, Value};
use crate::errors::raise;
use crate::lease::{handle, Abandon, ExtendOut, Slot};
use crate::lock::{fence, token};
use crate::queue_admin::{
    Acked, DeadLetters, Empty, Idle, Out, Purged, QueueKeys, QueueStats, Reaped,
};
use crate::runtime::Bridge;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use redis_atomic::queue::{self as q, Ack, Claim, QueueConfig, RunAt};
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
            let slot = self.slot.clone();
            self.slot.bridge.run_any(py, true, async move {
                slot.end(|j| j.ack()).await.map(AckOut)
            })
        }
        /// Gives the job back if this is still its lease: `Retrying(retry_after)` (due again
        /// then), `DeadLettered()` (delivered `max_deliveries` times) or `Lost`. `error` (cut to
        /// 4096 bytes) is kept as the job's last error.
        #[pyo3(signature = (retry_after=None, error=String::new()))]
        fn nack(
            &self,
            py: Python<'_>,
            retry_after: Option<&Bound<'_, PyAny>>,
            error: String,
        ) -> PyResult<Py<PyAny>> {
            let after = opt_duration(retry_after, "retry_after")?.unwrap_or_default();
            let slot = self.slot.clone();
            self.slot.bridge.run_any(py, true, async move {
                slot.end(|j| async move { j.nack(after, &error).await }).await.map(Out::Nack)
            })
        }
        fn __repr__(&self) -> String {
            format!("Job(id={:?}, fence={}, deliveries={}, ended={})", self.id, self.fence,
                    self.deliveries, crate::lease::py_bool(self.slot.is_ended()))
        }
    }
}

/// An ack's answer: `Acked` or `Lost`.
struct AckOut(Ack);

impl<'py> IntoPyObject<'py> for AckOut {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;
    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(match self.0 {
            Ack::Acked => Bound::new(py, Acked)?.into_any(),
            _ => Bound::new(py, crate::lease::Lost)?.into_any(),
        })
    }
}

/// A claim's answer: the jobs (a list), `Empty` or `Idle`.
enum ClaimOut {
    Jobs(Vec<Job>),
    Empty(Empty),
    Idle,
}

impl ClaimOut {
    fn of(c: Claim, bridge: Bridge) -> Self {
        match c {
            Claim::Claimed(jobs) => ClaimOut::Jobs(
                jobs.into_iter()
                    .map(|j| Job {
                        fence: j.fence().0,
                        token: j.token().clone(),
                        id: j.id().to_string(),
                        payload: j.payload().to_vec(),
                        deliveries: j.deliveries(),
                        claimed_at_ms: j.claimed_at_ms(),
                        slot: Slot::new(j, bridge),
                    })
                    .collect(),
            ),
            Claim::Empty { retry_after } => ClaimOut::Empty(Empty { retry_after }),
            _ => ClaimOut::Idle,
        }
    }
}

impl<'py> IntoPyObject<'py> for ClaimOut {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;
    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        use pyo3::IntoPyObjectExt;
        match self {
            ClaimOut::Jobs(jobs) => jobs.into_bound_py_any(py),
            ClaimOut::Empty(e) => e.into_bound_py_any(py),
            ClaimOut::Idle => Idle.into_bound_py_any(py),
        }
    }
}

fn nonzero(obj: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<NonZeroU32>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(None);
    };
    let n = u32::try_from(uint(obj, what)?)
        .ok()
        .and_then(NonZeroU32::new);
    n.map(Some).ok_or_else(|| {
        raise(redis_atomic::Error::BadArgument(format!(
            "{what} must be in 1..=2^32-1"
        )))
    })
}

/// A batch size (1..=1000, checked by the library).
fn count(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<usize> {
    Ok(usize::try_from(uint(obj, what)?).unwrap_or(usize::MAX))
}

/// When an enqueued job runs: after `delay`, or at `at` (seconds since the epoch).
fn run_at(delay: Option<Duration>, at: Option<f64>) -> PyResult<RunAt> {
    match (delay, at) {
        (Some(_), Some(_)) => Err(raise(redis_atomic::Error::BadArgument(
            "enqueue takes delay or at, not both".into(),
        ))),
        (Some(d), None) => Ok(RunAt::After(d)),
        (None, Some(t)) if t.is_finite() => Ok(RunAt::At(
            UNIX_EPOCH + Duration::try_from_secs_f64(t.max(0.0)).unwrap_or(Duration::MAX / 2),
        )),
        (None, Some(_)) => Err(raise(redis_atomic::Error::BadArgument(
            "at must be a finite time".into(),
        ))),
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
        let (client, bridge) = client.get().parts();
        let mut c = QueueConfig::default();
        if let Some(n) = max_payload_bytes.filter(|n| !n.is_none()) {
            c = c.max_payload_bytes(count(n, "max_payload_bytes")?);
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
        let payload = Value::of(payload, "payload")?.into_bytes();
        let when = run_at(opt_duration(delay, "delay")?, at)?;
        let queue = self.inner.clone();
        self.bridge.run(py, true, async move {
            queue
                .enqueue(&job_id, &payload, when)
                .await
                .map(Out::Enqueue)
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
        let max = max_jobs.map_or(Ok(1), |m| count(m, "max_jobs"))?;
        let (queue, bridge) = (self.inner.clone(), self.bridge);
        self.bridge.run(py, false, async move {
            let c = queue.claim(&worker, ttl, max).await?;
            Ok::<_, redis_atomic::Error>(ClaimOut::of(c, bridge))
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
        let max = count(max_jobs, "max_jobs")?;
        let (queue, bridge) = (self.inner.clone(), self.bridge);
        self.bridge.run(py, true, async move {
            let c = queue.claim_with_id(&worker, ttl, max, &claim_id).await?;
            Ok::<_, redis_atomic::Error>(ClaimOut::of(c, bridge))
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
        let (worker, fence, ttl) = (token(worker)?, self::fence(fence)?, duration(ttl, "ttl")?);
        let queue = self.inner.clone();
        self.bridge.run(py, true, async move {
            queue
                .extend(&job_id, &worker, fence, ttl)
                .await
                .map(ExtendOut)
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
        let (worker, fence) = (token(worker)?, self::fence(fence)?);
        let queue = self.inner.clone();
        self.bridge.run(py, true, async move {
            queue.ack(&job_id, &worker, fence).await.map(AckOut)
        })
    }

    /// Gives `job_id` back if it is leased to `worker` with `fence`: `Retrying`,
    /// `DeadLettered` or `Lost`.
    #[pyo3(signature = (job_id, worker, fence, retry_after=None, error=String::new()))]
    fn nack(
        &self,
        py: Python<'_>,
        job_id: String,
        worker: &str,
        fence: &Bound<'_, PyAny>,
        retry_after: Option<&Bound<'_, PyAny>>,
        error: String,
    ) -> PyResult<Py<PyAny>> {
        let (worker, fence) = (token(worker)?, self::fence(fence)?);
        let after = opt_duration(retry_after, "retry_after")?.unwrap_or_default();
        let queue = self.inner.clone();
        self.bridge.run(py, true, async move {
            queue
                .nack(&job_id, &worker, fence, after, &error)
                .await
                .map(Out::Nack)
        })
    }

    /// Counts of jobs by state (read-only): `QueueStats`.
    fn stats(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let queue = self.inner.clone();
        self.bridge.run(py, true, async move {
            queue.stats().await.map(QueueStats::from)
        })
    }

    /// One job's state (read-only): `JobQueued`, `JobRunning`, `JobDead`, `JobAcked` or
    /// `JobUnknown`.
    fn inspect(&self, py: Python<'_>, job_id: String) -> PyResult<Py<PyAny>> {
        let queue = self.inner.clone();
        self.bridge.run(py, true, async move {
            queue.inspect(&job_id).await.map(Out::State)
        })
    }

    /// At most `count` (1..=1000) dead letters from position `start`, oldest first.
    #[pyo3(signature = (start=0, count=100))]
    fn dead_letters(&self, py: Python<'_>, start: u32, count: usize) -> PyResult<Py<PyAny>> {
        let queue = self.inner.clone();
        self.bridge.run(py, true, async move {
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
        self.bridge.run(py, true, async move {
            queue.requeue_dead(&job_id, delay).await.map(Out::Requeue)
        })
    }

    /// Deletes at most `limit` (1..=1000) dead letters that died `older_than` or longer ago
    /// (0: any), oldest first: `Purged`.
    #[pyo3(signature = (older_than=None, limit=1000))]
    fn purge_dead_letters(
        &self,
        py: Python<'_>,
        older_than: Option<&Bound<'_, PyAny>>,
        limit: usize,
    ) -> PyResult<Py<PyAny>> {
        let older = opt_duration(older_than, "older_than")?.unwrap_or_default();
        let queue = self.inner.clone();
        self.bridge.run(py, true, async move {
            let p = queue.purge_dead_letters(older, limit).await?;
            Ok::<_, redis_atomic::Error>(Purged {
                purged: p.purged,
                remaining: p.remaining,
            })
        })
    }

    /// Returns at most `limit` (1..=1000) expired leases to the queue (or the dead letters).
    #[pyo3(signature = (limit=100))]
    fn reap(&self, py: Python<'_>, limit: usize) -> PyResult<Py<PyAny>> {
        let queue = self.inner.clone();
        self.bridge.run(py, true, async move {
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
