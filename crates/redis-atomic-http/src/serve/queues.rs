//! `/v1/queues/{queue}/…`: [`redis_atomic::queue`] over HTTP: enqueue (deduplicated by job id),
//! claim (leases with fences), per job ack, extend and nack by fence, and the dead letters
//! (list, requeue, purge).
//!
//! Payloads are UTF-8 text in JSON (base64 it yourself for bytes). A stale fence is 409 with
//! `{"acked": false}` (or `extended`/`nacked`), not an error: another worker has the job.

use super::error::{lib, ApiError, JsonBody};
use super::locks::{answer, conflict_unless, ms};
use super::Caller;
use axum::extract::{Path, RawQuery};
use axum::response::Response;
use http::StatusCode;
use redis_atomic::lease::Extend;
use redis_atomic::queue::{
    Ack, Claim, Enqueue, JobStatus, Nack, Queue, QueueConfig, Requeue, RunAt,
};
use redis_atomic::{Fence, OwnerToken};
use serde::{Deserialize, Serialize};
use std::time::Duration;
use utoipa::ToSchema;

/// Body of `enqueue`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EnqueueRequest {
    /// Job id: an id already queued, running, dead or recently acked is not added again.
    pub id: String,
    /// The job's payload, UTF-8 text.
    pub payload: String,
    /// Delay before the job is due, in milliseconds (default 0).
    #[serde(default)]
    pub delay_ms: u64,
}

/// Answer of `enqueue`: 201 added, 200 the id was already known.
#[derive(Debug, Serialize, ToSchema)]
pub struct EnqueueResponse {
    /// Whether the job was added now.
    pub enqueued: bool,
    /// Where the existing job is (`queued`, `running`, `dead`, `acked`) when not added.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
}

/// Body of `claim`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimRequest {
    /// The worker's name (recorded with the lease).
    pub worker: String,
    /// How long the jobs stay leased, in milliseconds (default 30000).
    #[serde(default = "default_visibility")]
    pub visibility_ms: u64,
    /// At most this many jobs (1..=1000, default 1).
    #[serde(default = "one")]
    pub max_jobs: usize,
}

fn default_visibility() -> u64 {
    30_000
}

fn one() -> usize {
    1
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
    pub retry_after_ms: Option<u64>,
}

/// Body of `ack`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AckRequest {
    /// The fence `claim` returned.
    pub fence: u64,
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
    /// The fence `claim` returned.
    pub fence: u64,
    /// New lease from now, in milliseconds.
    pub ttl_ms: u64,
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
    /// The fence `claim` returned.
    pub fence: u64,
    /// Pause before the job is due again, in milliseconds (default 0).
    #[serde(default)]
    pub retry_after_ms: u64,
    /// Why the job failed (kept with a dead letter).
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

fn queue(t: &super::Tenant, name: &str) -> Result<Queue, ApiError> {
    Queue::new(t.client.clone(), &t.keyspace, name, QueueConfig::default()).map_err(lib(true))
}

fn status_word(s: JobStatus) -> &'static str {
    match s {
        JobStatus::Queued => "queued",
        JobStatus::Running => "running",
        JobStatus::Dead => "dead",
        JobStatus::Acked => "acked",
        _ => "unknown",
    }
}

/// Enqueue a job (deduplicated by id).
#[utoipa::path(post, path = "/v1/queues/{queue}/jobs", request_body = EnqueueRequest,
    params(("queue" = String, Path, description = "the queue")),
    responses((status = 201, body = EnqueueResponse, description = "added"),
              (status = 200, body = EnqueueResponse, description = "id already known")))]
pub async fn enqueue(
    Caller(t): Caller,
    Path(name): Path<String>,
    JsonBody(req): JsonBody<EnqueueRequest>,
) -> Result<Response, ApiError> {
    let q = queue(&t, &name)?;
    let run_at = match req.delay_ms {
        0 => RunAt::Now,
        ms => RunAt::After(Duration::from_millis(ms)),
    };
    // Retry-safe: the same id is never added twice.
    let got = q
        .enqueue(&req.id, req.payload.as_bytes(), run_at)
        .await
        .map_err(lib(true))?;
    Ok(match got {
        Enqueue::Exists { status } => answer(
            StatusCode::OK,
            EnqueueResponse {
                enqueued: false,
                status: Some(status_word(status).into()),
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
#[utoipa::path(post, path = "/v1/queues/{queue}/claim", request_body = ClaimRequest,
    params(("queue" = String, Path, description = "the queue")),
    responses((status = 200, body = ClaimResponse, description = "the leased jobs, maybe none")))]
pub async fn claim(
    Caller(t): Caller,
    Path(name): Path<String>,
    JsonBody(req): JsonBody<ClaimRequest>,
) -> Result<Response, ApiError> {
    let q = queue(&t, &name)?;
    let worker = OwnerToken::new(req.worker).map_err(|e| ApiError::invalid(e.to_string()))?;
    let vis = Duration::from_millis(req.visibility_ms);
    // Not retry-safe: jobs a lost claim leased come back only after the visibility timeout.
    let got = q
        .claim(&worker, vis, req.max_jobs)
        .await
        .map_err(lib(false))?;
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
            retry_after_ms: retry_after.map(ms),
        },
        _ => ClaimResponse {
            jobs: Vec::new(),
            retry_after_ms: None,
        },
    };
    Ok(answer(StatusCode::OK, body))
}

/// Complete a job.
#[utoipa::path(post, path = "/v1/queues/{queue}/jobs/{id}/ack", request_body = AckRequest,
    params(("queue" = String, Path, description = "the queue"), ("id" = String, Path, description = "the job id")),
    responses((status = 200, body = AckResponse, description = "acked"),
              (status = 409, body = AckResponse, description = "stale fence")))]
pub async fn ack(
    Caller(t): Caller,
    Path((name, id)): Path<(String, String)>,
    JsonBody(req): JsonBody<AckRequest>,
) -> Result<Response, ApiError> {
    let q = queue(&t, &name)?;
    let got = q.ack(&id, Fence(req.fence)).await.map_err(lib(true))?;
    let acked = matches!(got, Ack::Acked);
    Ok(answer(conflict_unless(acked), AckResponse { acked }))
}

/// Extend a job's lease.
#[utoipa::path(post, path = "/v1/queues/{queue}/jobs/{id}/extend", request_body = JobExtendRequest,
    params(("queue" = String, Path, description = "the queue"), ("id" = String, Path, description = "the job id")),
    responses((status = 200, body = JobExtendResponse, description = "extended"),
              (status = 409, body = JobExtendResponse, description = "stale fence")))]
pub async fn extend(
    Caller(t): Caller,
    Path((name, id)): Path<(String, String)>,
    JsonBody(req): JsonBody<JobExtendRequest>,
) -> Result<Response, ApiError> {
    let q = queue(&t, &name)?;
    let ttl = Duration::from_millis(req.ttl_ms);
    let got = q
        .extend(&id, Fence(req.fence), ttl)
        .await
        .map_err(lib(true))?;
    let extended = matches!(got, Extend::Extended { .. });
    Ok(answer(
        conflict_unless(extended),
        JobExtendResponse { extended },
    ))
}

/// Give a job back (or dead-letter it after too many deliveries).
#[utoipa::path(post, path = "/v1/queues/{queue}/jobs/{id}/nack", request_body = NackRequest,
    params(("queue" = String, Path, description = "the queue"), ("id" = String, Path, description = "the job id")),
    responses((status = 200, body = NackResponse, description = "given back or dead-lettered"),
              (status = 409, body = NackResponse, description = "stale fence")))]
pub async fn nack(
    Caller(t): Caller,
    Path((name, id)): Path<(String, String)>,
    JsonBody(req): JsonBody<NackRequest>,
) -> Result<Response, ApiError> {
    let q = queue(&t, &name)?;
    let after = Duration::from_millis(req.retry_after_ms);
    let got = q
        .nack(&id, Fence(req.fence), after, &req.error)
        .await
        .map_err(lib(true))?;
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

/// One dead letter.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeadLetterItem {
    /// The job id.
    pub id: String,
    /// When it died (server clock, ms since the epoch).
    pub dead_at_ms: u64,
    /// Deliveries made.
    pub deliveries: u32,
    /// The last error.
    pub error: String,
}

/// Answer of the dead-letter list: 200.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeadListResponse {
    /// Dead letters in all.
    pub total: u64,
    /// This page (`?start=0&count=100` by default, count at most 1000), oldest first.
    pub letters: Vec<DeadLetterItem>,
}

/// Body of `requeue`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RequeueRequest {
    /// Delay before the job is due again, in milliseconds (default 0).
    #[serde(default)]
    pub delay_ms: u64,
}

/// Answer of `requeue`: 200 requeued, 409 not a dead letter.
#[derive(Debug, Serialize, ToSchema)]
pub struct RequeueResponse {
    /// Whether the job is due again (deliveries reset).
    pub requeued: bool,
}

/// Body of `purge`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PurgeRequest {
    /// Only dead letters at least this old, in milliseconds (default 0: any).
    #[serde(default)]
    pub older_than_ms: u64,
    /// At most this many (1..=1000, default 1000); call again while `purged` equals it.
    #[serde(default = "thousand")]
    pub limit: usize,
}

fn thousand() -> usize {
    1000
}

/// Answer of `purge`: 200.
#[derive(Debug, Serialize, ToSchema)]
pub struct PurgeResponse {
    /// Dead letters deleted.
    pub purged: u64,
    /// Dead letters left.
    pub remaining: u64,
}

/// `start` and `count` of `?start=…&count=…`; anything else is 422.
fn page(query: Option<&str>) -> Result<(u32, usize), ApiError> {
    let (mut start, mut count) = (0u32, 100usize);
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let bad = || ApiError::invalid(format!("bad query parameter {pair:?}"));
        match name {
            "start" => start = value.parse().map_err(|_| bad())?,
            "count" => count = value.parse().map_err(|_| bad())?,
            _ => return Err(bad()),
        }
    }
    Ok((start, count))
}

/// List a queue's dead letters.
#[utoipa::path(get, path = "/v1/queues/{queue}/dead",
    params(("queue" = String, Path, description = "the queue"),
           ("start" = Option<u32>, Query, description = "first position (default 0)"),
           ("count" = Option<usize>, Query, description = "page size, 1..=1000 (default 100)")),
    responses((status = 200, body = DeadListResponse, description = "one page, oldest first")))]
pub async fn dead_list(
    Caller(t): Caller,
    Path(name): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let (start, count) = page(query.as_deref())?;
    let got = queue(&t, &name)?
        .dead_letters(start, count)
        .await
        .map_err(lib(true))?;
    let letters = got
        .letters
        .into_iter()
        .map(|l| DeadLetterItem {
            id: l.id,
            dead_at_ms: l.dead_at_ms,
            deliveries: l.deliveries,
            error: l.error,
        })
        .collect();
    Ok(answer(
        StatusCode::OK,
        DeadListResponse {
            total: got.total,
            letters,
        },
    ))
}

/// Move a dead letter back to the queue.
#[utoipa::path(post, path = "/v1/queues/{queue}/dead/{id}/requeue", request_body = RequeueRequest,
    params(("queue" = String, Path, description = "the queue"),
           ("id" = String, Path, description = "the job id")),
    responses((status = 200, body = RequeueResponse, description = "requeued"),
              (status = 409, body = RequeueResponse, description = "not a dead letter")))]
pub async fn dead_requeue(
    Caller(t): Caller,
    Path((name, id)): Path<(String, String)>,
    JsonBody(req): JsonBody<RequeueRequest>,
) -> Result<Response, ApiError> {
    let got = queue(&t, &name)?
        .requeue_dead(&id, Duration::from_millis(req.delay_ms))
        .await
        .map_err(lib(true))?;
    let requeued = matches!(got, Requeue::Requeued);
    Ok(answer(
        conflict_unless(requeued),
        RequeueResponse { requeued },
    ))
}

/// Delete dead letters, oldest first.
#[utoipa::path(post, path = "/v1/queues/{queue}/dead/purge", request_body = PurgeRequest,
    params(("queue" = String, Path, description = "the queue")),
    responses((status = 200, body = PurgeResponse, description = "purged")))]
pub async fn dead_purge(
    Caller(t): Caller,
    Path(name): Path<String>,
    JsonBody(req): JsonBody<PurgeRequest>,
) -> Result<Response, ApiError> {
    let got = queue(&t, &name)?
        .purge_dead_letters(Duration::from_millis(req.older_than_ms), req.limit)
        .await
        .map_err(lib(true))?;
    Ok(answer(
        StatusCode::OK,
        PurgeResponse {
            purged: got.purged,
            remaining: got.remaining,
        },
    ))
}
