//! `/v1/queues/{queue}/…`: [`redis_atomic::queue`] over HTTP: enqueue (deduplicated by job id),
//! claim (leases with fences), and per job ack, extend and nack by worker and fence; the dead
//! letters are [`super::dead`].
//!
//! Payloads are UTF-8 text in JSON (base64 it yourself for bytes). A stale fence is 409 with
//! `{"acked": false}` (or `extended`/`nacked`), not an error: another worker has the job.

use super::error::{lib, ApiError, JsonBody};
use super::extract::Named;
use super::locks::{answer, conflict_unless, ms};
use super::params::{defaults, Batch, DelayMs, Fence, JobId, JobTtlMs, KeyName, WorkerName};
use super::Caller;
use axum::response::Response;
use http::StatusCode;
use redis_atomic::lease::{Extend, OwnerToken};
use redis_atomic::queue::{Ack, Claim, Enqueue, Nack, Queue, QueueConfig, RunAt};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Body of `enqueue`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EnqueueRequest {
    /// Job id: an id already queued, running, dead or recently acked is not added again.
    pub id: JobId,
    /// The job's payload, UTF-8 text.
    pub payload: String,
    /// Delay before the job is due, in milliseconds.
    #[serde(default = "defaults::no_delay")]
    #[schema(default = defaults::no_delay)]
    pub delay_ms: DelayMs,
}

/// Answer of `enqueue`: 201 added, 200 the id was already known.
#[derive(Debug, Serialize, ToSchema)]
pub struct EnqueueResponse {
    /// Whether the job was added now.
    pub enqueued: bool,
    /// Where the existing job is (`queued`, `running`, `dead`, `acked`) when not added.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub status: Option<String>,
}

/// Body of `claim`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimRequest {
    /// The worker's name (recorded with the lease).
    pub worker: WorkerName,
    /// How long the jobs stay leased, in milliseconds.
    #[serde(default = "defaults::visibility")]
    #[schema(default = defaults::visibility)]
    pub visibility_ms: JobTtlMs,
    /// At most this many jobs.
    #[serde(default = "defaults::one_job")]
    #[schema(default = defaults::one_job)]
    pub max_jobs: Batch,
}

/// One leased job.
#[derive(Debug, Serialize, ToSchema)]
pub struct ClaimedJob {
    /// The job id.
    pub id: String,
    /// The payload (UTF-8; invalid bytes replaced).
    pub payload: String,
    /// The lease's fence: ack, extend and nack with it.
    pub fence: u64,
    /// How many times the job has been delivered, this one included.
    pub deliveries: u32,
}

/// Answer of `claim`: 200, possibly with no jobs.
#[derive(Debug, Serialize, ToSchema)]
pub struct ClaimResponse {
    /// The jobs now leased to the caller.
    pub jobs: Vec<ClaimedJob>,
    /// With no jobs: when the next one is due (absent when the queue is empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub retry_after_ms: Option<u64>,
}

/// Body of `ack`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AckRequest {
    /// The worker the job was claimed by.
    pub worker: WorkerName,
    /// The fence `claim` returned.
    pub fence: Fence,
}

/// Answer of `ack`: 200 acked, 409 stale fence.
#[derive(Debug, Serialize, ToSchema)]
pub struct AckResponse {
    /// Whether the job is now complete.
    pub acked: bool,
}

/// Body of a job's `extend`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct JobExtendRequest {
    /// The worker the job was claimed by.
    pub worker: WorkerName,
    /// The fence `claim` returned.
    pub fence: Fence,
    /// New lease from now, in milliseconds.
    pub ttl_ms: JobTtlMs,
}

/// Answer of a job's `extend`: 200 extended, 409 stale fence.
#[derive(Debug, Serialize, ToSchema)]
pub struct JobExtendResponse {
    /// Whether the lease was extended.
    pub extended: bool,
}

/// Body of `nack`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NackRequest {
    /// The worker the job was claimed by.
    pub worker: WorkerName,
    /// The fence `claim` returned.
    pub fence: Fence,
    /// Pause before the job is due again, in milliseconds.
    #[serde(default = "defaults::no_delay")]
    #[schema(default = defaults::no_delay)]
    pub retry_after_ms: DelayMs,
    /// Why the job failed (kept with a dead letter; the first `queue::MAX_ERROR_LEN` bytes).
    #[serde(default)]
    pub error: String,
}

/// Answer of `nack`: 200 given back, 409 stale fence.
#[derive(Debug, Serialize, ToSchema)]
pub struct NackResponse {
    /// Whether the job was given back.
    pub nacked: bool,
    /// Whether it went to the dead letters (delivered too many times).
    pub dead: bool,
}

pub(super) fn queue(t: &super::Tenant, name: &KeyName) -> Result<Queue, ApiError> {
    let config = QueueConfig::default();
    Queue::new(t.client.clone(), &t.keyspace, name.as_str(), config).map_err(lib)
}

fn worker(name: &WorkerName) -> Result<OwnerToken, ApiError> {
    name.owner().map_err(lib)
}

/// Enqueue a job (deduplicated by id).
#[utoipa::path(post, path = "/v1/queues/{queue}/jobs", operation_id = "queues_enqueue",
    tag = "queues", request_body = EnqueueRequest,
    params(("queue" = KeyName, Path, description = "the queue")),
    responses((status = 201, body = EnqueueResponse, description = "added"),
              (status = 200, body = EnqueueResponse, description = "id already known")))]
pub async fn enqueue(
    Caller(t): Caller,
    Named(name): Named<KeyName>,
    JsonBody(req): JsonBody<EnqueueRequest>,
) -> Result<Response, ApiError> {
    let q = queue(&t, &name)?;
    let run_at = match req.delay_ms.0 {
        0 => RunAt::Now,
        _ => RunAt::After(req.delay_ms.duration()),
    };
    // Retry-safe: the same id is never added twice.
    let got = q
        .enqueue(req.id.as_str(), req.payload.as_bytes(), run_at)
        .await
        .map_err(lib)?;
    Ok(match got {
        Enqueue::Exists { status } => answer(
            StatusCode::OK,
            EnqueueResponse {
                enqueued: false,
                status: Some(status.name().into()),
            },
        ),
        _ => answer(
            StatusCode::CREATED,
            EnqueueResponse {
                enqueued: true,
                status: None,
            },
        ),
    })
}

/// Lease due jobs.
#[utoipa::path(post, path = "/v1/queues/{queue}/claim", operation_id = "queues_claim",
    tag = "queues", request_body = ClaimRequest,
    params(("queue" = KeyName, Path, description = "the queue")),
    responses((status = 200, body = ClaimResponse, description = "the leased jobs, maybe none")))]
pub async fn claim(
    Caller(t): Caller,
    Named(name): Named<KeyName>,
    JsonBody(req): JsonBody<ClaimRequest>,
) -> Result<Response, ApiError> {
    let q = queue(&t, &name)?;
    let worker = worker(&req.worker)?;
    let vis = req.visibility_ms.duration();
    // Not retry-safe: jobs a lost claim leased come back only after the visibility timeout.
    let got = q.claim(&worker, vis, req.max_jobs.0).await.map_err(lib)?;
    let body = match got {
        Claim::Claimed(jobs) => ClaimResponse {
            jobs: jobs
                .into_iter()
                .map(|j| ClaimedJob {
                    id: j.id().to_string(),
                    fence: j.fence().0,
                    deliveries: j.deliveries(),
                    payload: String::from_utf8_lossy(j.payload()).into_owned(),
                })
                .collect(),
            retry_after_ms: None,
        },
        Claim::Empty { retry_after } => ClaimResponse {
            jobs: Vec::new(),
            retry_after_ms: Some(ms(retry_after)),
        },
        _ => ClaimResponse {
            jobs: Vec::new(),
            retry_after_ms: None,
        },
    };
    Ok(answer(StatusCode::OK, body))
}

/// Complete a job.
#[utoipa::path(post, path = "/v1/queues/{queue}/jobs/{id}/ack", operation_id = "queues_job_ack",
    tag = "queues", request_body = AckRequest,
    params(("queue" = KeyName, Path, description = "the queue"),
           ("id" = JobId, Path, description = "the job id")),
    responses((status = 200, body = AckResponse, description = "acked"),
              (status = 409, body = AckResponse, description = "stale fence")))]
pub async fn ack(
    Caller(t): Caller,
    Named((name, id)): Named<(KeyName, JobId)>,
    JsonBody(req): JsonBody<AckRequest>,
) -> Result<Response, ApiError> {
    let q = queue(&t, &name)?;
    let worker = worker(&req.worker)?;
    let got = q
        .ack(id.as_str(), &worker, req.fence.fence())
        .await
        .map_err(lib)?;
    let acked = matches!(got, Ack::Acked);
    Ok(answer(conflict_unless(acked), AckResponse { acked }))
}

/// Extend a job's lease.
#[utoipa::path(post, path = "/v1/queues/{queue}/jobs/{id}/extend", operation_id = "queues_job_extend",
    tag = "queues", request_body = JobExtendRequest,
    params(("queue" = KeyName, Path, description = "the queue"),
           ("id" = JobId, Path, description = "the job id")),
    responses((status = 200, body = JobExtendResponse, description = "extended"),
              (status = 409, body = JobExtendResponse, description = "stale fence")))]
pub async fn extend(
    Caller(t): Caller,
    Named((name, id)): Named<(KeyName, JobId)>,
    JsonBody(req): JsonBody<JobExtendRequest>,
) -> Result<Response, ApiError> {
    let q = queue(&t, &name)?;
    let ttl = req.ttl_ms.duration();
    let worker = worker(&req.worker)?;
    let got = q
        .extend(id.as_str(), &worker, req.fence.fence(), ttl)
        .await
        .map_err(lib)?;
    let extended = matches!(got, Extend::Extended { .. });
    Ok(answer(
        conflict_unless(extended),
        JobExtendResponse { extended },
    ))
}

/// Give a job back (or dead-letter it after too many deliveries).
#[utoipa::path(post, path = "/v1/queues/{queue}/jobs/{id}/nack", operation_id = "queues_job_nack",
    tag = "queues", request_body = NackRequest,
    params(("queue" = KeyName, Path, description = "the queue"),
           ("id" = JobId, Path, description = "the job id")),
    responses((status = 200, body = NackResponse, description = "given back or dead-lettered"),
              (status = 409, body = NackResponse, description = "stale fence")))]
pub async fn nack(
    Caller(t): Caller,
    Named((name, id)): Named<(KeyName, JobId)>,
    JsonBody(req): JsonBody<NackRequest>,
) -> Result<Response, ApiError> {
    let q = queue(&t, &name)?;
    let after = req.retry_after_ms.duration();
    let worker = worker(&req.worker)?;
    let got = q
        .nack(id.as_str(), &worker, req.fence.fence(), after, &req.error)
        .await
        .map_err(lib)?;
    let (nacked, dead) = match got {
        Nack::Retrying { .. } => (true, false),
        Nack::Dead => (true, true),
        _ => (false, false),
    };
    Ok(answer(
        conflict_unless(nacked),
        NackResponse { nacked, dead },
    ))
}
