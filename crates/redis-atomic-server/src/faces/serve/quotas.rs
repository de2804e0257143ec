//! `/v1/quotas/{name}/add` and `GET /v1/quotas/{name}`: [`redis_atomic::quota`]'s bounded add
//! and read over HTTP.
//!
//! An add that would leave `[min, max]` is refused (409, nothing changed), not an error. With a
//! `request_id` the library's request-id variant runs: a resend of the same id returns the first
//! answer and adds nothing, so a resend after a 504 is safe; without one it is not.

use super::error::{lib, ApiError, JsonBody};
use super::locks::{answer, conflict_unless};
use super::Caller;
use axum::extract::Path;
use axum::response::Response;
use http::StatusCode;
use redis_atomic::quota::{Bounded, Bounds, Quotas};
use serde::{Deserialize, Serialize};
use std::time::Duration;
use utoipa::ToSchema;

/// Body of quota `add`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct QuotaAddRequest {
    /// Amount to add (negative to take back).
    pub delta: i64,
    /// Lowest value allowed (default 0).
    #[serde(default)]
    pub min: i64,
    /// Highest value allowed.
    pub max: i64,
    /// Counter lifetime in milliseconds, set when the counter is created and never extended.
    #[serde(default)]
    pub ttl_ms: Option<u64>,
    /// Your id for this add: a repeat returns the first answer and adds nothing.
    #[serde(default)]
    pub request_id: Option<String>,
}

/// Answer of quota `add`: 200 applied, 409 refused.
#[derive(Debug, Serialize, ToSchema)]
pub struct QuotaAddResponse {
    /// Whether the add was applied.
    pub applied: bool,
    /// The counter after the add (applied) or unchanged (refused).
    pub value: i64,
}

/// Add to a bounded counter.
#[utoipa::path(post, path = "/v1/quotas/{name}/add", request_body = QuotaAddRequest,
    params(("name" = String, Path, description = "the counter")),
    responses((status = 200, body = QuotaAddResponse, description = "applied"),
              (status = 409, body = QuotaAddResponse, description = "would leave the bounds")))]
pub async fn add(
    Caller(t): Caller,
    Path(name): Path<String>,
    JsonBody(req): JsonBody<QuotaAddRequest>,
) -> Result<Response, ApiError> {
    let bounds = Bounds::new(req.min, req.max).map_err(lib(true))?;
    let ttl = req.ttl_ms.map(Duration::from_millis);
    let quotas = Quotas::new(t.client.clone(), t.keyspace.clone());
    let got = match &req.request_id {
        Some(id) => quotas
            .add_with_id(&name, req.delta, bounds, ttl, id)
            .await
            .map_err(lib(true))?,
        None => quotas
            .add(&name, req.delta, bounds, ttl)
            .await
            .map_err(lib(false))?,
    };
    let (applied, value) = match got {
        Bounded::Applied { value } => (true, value),
        Bounded::Refused { value } => (false, value),
        _ => return Err(ApiError::internal("unexpected quota outcome")),
    };
    Ok(answer(
        conflict_unless(applied),
        QuotaAddResponse { applied, value },
    ))
}

/// Answer of quota `get`: 200.
#[derive(Debug, Serialize, ToSchema)]
pub struct QuotaValueResponse {
    /// The counter (0 when absent).
    pub value: i64,
}

/// Read a counter.
#[utoipa::path(get, path = "/v1/quotas/{name}",
    params(("name" = String, Path, description = "the counter")),
    responses((status = 200, body = QuotaValueResponse, description = "the value")))]
pub async fn get(Caller(t): Caller, Path(name): Path<String>) -> Result<Response, ApiError> {
    let value = Quotas::new(t.client.clone(), t.keyspace.clone())
        .get(&name)
        .await
        .map_err(lib(true))?;
    Ok(answer(StatusCode::OK, QuotaValueResponse { value }))
}
