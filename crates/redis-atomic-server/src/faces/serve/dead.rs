//! `/v1/queues/{queue}/dead…`: a queue's dead letters (jobs delivered `max_deliveries` times)
//! over HTTP: list a page, requeue one (due again, deliveries reset), purge the oldest. Requeue
//! and purge are safe to resend after a 504 (a repeated requeue answers 409; a repeated purge
//! deletes at most `limit` more of the same age).

use super::error::{lib, ApiError, JsonBody};
use super::locks::{answer, conflict_unless};
use super::queues::queue;
use super::Caller;
use axum::extract::{Path, RawQuery};
use axum::response::Response;
use http::StatusCode;
use redis_atomic::queue::Requeue;
use serde::{Deserialize, Serialize};
use std::time::Duration;
use utoipa::ToSchema;

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
pub async fn list(
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
pub async fn requeue(
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
pub async fn purge(
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
