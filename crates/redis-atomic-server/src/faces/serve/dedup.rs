//! `/v1/dedup/{event}`: [`redis_atomic::dedup`] over HTTP: whether this is the first sighting of
//! an event id within `ttl_ms`. Both answers are 200. With the caller's own `token` a resend
//! gives the same answer, so it is safe after a 504; without one a resend would read "seen".

use super::error::{lib, ApiError, JsonBody};
use super::extract::Named;
use super::locks::{answer, token};
use super::params::{DedupTtlMs, KeyName, OwnerToken};
use super::Caller;
use axum::response::Response;
use http::StatusCode;
use redis_atomic::dedup::Dedup;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Body of `dedup`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DedupRequest {
    /// How long the id is remembered, in milliseconds.
    pub ttl_ms: DedupTtlMs,
    /// Your own token (to resend after a lost answer and get the same one); default: a fresh
    /// random one.
    #[serde(default)]
    pub token: Option<OwnerToken>,
}

/// Answer of `dedup`.
#[derive(Debug, Serialize, ToSchema)]
pub struct DedupResponse {
    /// Whether this was the first sighting (for this token) within the ttl.
    pub first: bool,
}

/// Record a sighting of an event id.
#[utoipa::path(post, path = "/v1/dedup/{event}", operation_id = "dedup_seen", tag = "dedup",
    request_body = DedupRequest,
    params(("event" = KeyName, Path, description = "the event id")),
    responses((status = 200, body = DedupResponse, description = "first or repeat sighting")))]
pub async fn seen(
    Caller(t): Caller,
    Named(event): Named<KeyName>,
    JsonBody(req): JsonBody<DedupRequest>,
) -> Result<Response, ApiError> {
    let dedup = Dedup::new(t.client.clone(), t.keyspace.clone());
    let (event, ttl) = (event.as_str(), req.ttl_ms.duration());
    let first = match req.token.as_ref() {
        Some(given) => dedup.first_seen_as(event, ttl, &token(given)?).await,
        None => dedup.first_seen(event, ttl).await,
    }
    .map_err(lib)?;
    Ok(answer(StatusCode::OK, DedupResponse { first }))
}
