//! `/v1/queues/{queue}/dead…`: a queue's dead letters (jobs delivered `max_deliveries` times)
//! over HTTP: list a page, requeue one (due again, deliveries reset), purge the oldest. Requeue
//! and purge are safe to resend after a 504 (a repeated requeue answers 409; a repeated purge
//! deletes at most `limit` more of the same age).

use super::error::{lib, ApiError, JsonBody};
use super::extract::{query_number, Named, Params};
use super::locks::{answer, conflict_unless};
use super::params::{defaults, Batch, DeadStart, DelayMs, JobId, KeyName};
use super::queues::queue;
use super::Caller;
use axum::response::Response;
use http::StatusCode;
use redis_atomic::queue::Requeue;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

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
    /// Delay before the job is due again, in milliseconds.
    #[serde(default = "defaults::no_delay")]
    #[schema(default = defaults::no_delay)]
    pub delay_ms: DelayMs,
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
    /// Only dead letters at least this old, in milliseconds (0: any).
    #[serde(default = "defaults::no_delay")]
    #[schema(default = defaults::no_delay)]
    pub older_than_ms: DelayMs,
    /// At most this many; call again while `purged` equals it.
    #[serde(default = "defaults::purge_limit")]
    #[schema(default = defaults::purge_limit)]
    pub limit: Batch,
}

/// Answer of `purge`: 200.
#[derive(Debug, Serialize, ToSchema)]
pub struct PurgeResponse {
    /// Dead letters deleted.
    pub purged: u64,
    /// Dead letters left.
    pub remaining: u64,
}

/// The page of the dead-letter list (`?start=…&count=…`); another parameter is refused (422).
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct Page {
    /// First position, oldest first (default 0).
    #[serde(default, deserialize_with = "query_number")]
    #[param(value_type = Option<DeadStart>)]
    pub start: Option<DeadStart>,
    /// Page size (default 100).
    #[serde(default, deserialize_with = "query_number")]
    #[param(value_type = Option<Batch>)]
    pub count: Option<Batch>,
}

/// A page's default size.
const PAGE: Batch = Batch(100);

/// List a queue's dead letters.
#[utoipa::path(get, path = "/v1/queues/{queue}/dead", operation_id = "queues_dead_list",
    tag = "queues",
    params(("queue" = KeyName, Path, description = "the queue"), Page),
    responses((status = 200, body = DeadListResponse, description = "one page, oldest first")))]
pub async fn list(
    Caller(t): Caller,
    Named(name): Named<KeyName>,
    Params(page): Params<Page>,
) -> Result<Response, ApiError> {
    let start = page.start.map_or(0, |s| s.0);
    let count = page.count.unwrap_or(PAGE).0;
    let got = queue(&t, &name)?
        .dead_letters(start, count)
        .await
        .map_err(lib)?;
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
#[utoipa::path(post, path = "/v1/queues/{queue}/dead/{id}/requeue",
    operation_id = "queues_dead_requeue", tag = "queues", request_body = RequeueRequest,
    params(("queue" = KeyName, Path, description = "the queue"),
           ("id" = JobId, Path, description = "the job id")),
    responses((status = 200, body = RequeueResponse, description = "requeued"),
              (status = 409, body = RequeueResponse, description = "not a dead letter")))]
pub async fn requeue(
    Caller(t): Caller,
    Named((name, id)): Named<(KeyName, JobId)>,
    JsonBody(req): JsonBody<RequeueRequest>,
) -> Result<Response, ApiError> {
    let got = queue(&t, &name)?
        .requeue_dead(id.as_str(), req.delay_ms.duration())
        .await
        .map_err(lib)?;
    let requeued = matches!(got, Requeue::Requeued);
    Ok(answer(
        conflict_unless(requeued),
        RequeueResponse { requeued },
    ))
}

/// Delete dead letters, oldest first.
#[utoipa::path(post, path = "/v1/queues/{queue}/dead/purge", operation_id = "queues_dead_purge",
    tag = "queues", request_body = PurgeRequest,
    params(("queue" = KeyName, Path, description = "the queue")),
    responses((status = 200, body = PurgeResponse, description = "purged")))]
pub async fn purge(
    Caller(t): Caller,
    Named(name): Named<KeyName>,
    JsonBody(req): JsonBody<PurgeRequest>,
) -> Result<Response, ApiError> {
    let got = queue(&t, &name)?
        .purge_dead_letters(req.older_than_ms.duration(), req.limit.0)
        .await
        .map_err(lib)?;
    Ok(answer(
        StatusCode::OK,
        PurgeResponse {
            purged: got.purged,
            remaining: got.remaining,
        },
    ))
}
