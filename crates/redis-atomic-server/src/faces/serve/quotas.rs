//! `/v1/quotas/{name}/add` and `GET /v1/quotas/{name}`: [`redis_atomic::quota`]'s bounded add
//! and read over HTTP.
//!
//! An add that would leave `[min, max]` is refused (409, nothing changed), not an error; so is
//! any add into an empty range (`min > max`: no value is inside it), answered with the counter's
//! current value without running the add. (JSON Schema cannot compare two fields, so the document
//! allows `min > max`, and the server gives it that meaning rather than a 422.) With a
//! `request_id` the library's request-id variant runs: a resend of the same id returns the first
//! answer and adds nothing, so a resend after a 504 is safe; without one it is not.

use super::error::{lib, ApiError, JsonBody};
use super::extract::Named;
use super::locks::{answer, conflict_unless};
use super::params::{defaults, KeyName, QuotaAmount, QuotaRequestId, QuotaTtlMs};
use super::Caller;
use axum::response::Response;
use http::StatusCode;
use redis_atomic::quota::{Bounded, Bounds, Quotas};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Body of quota `add`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct QuotaAddRequest {
    /// Amount to add (negative to take back).
    pub delta: QuotaAmount,
    /// Lowest value allowed.
    #[serde(default = "defaults::zero")]
    #[schema(default = defaults::zero)]
    pub min: QuotaAmount,
    /// Highest value allowed (below `min`, every add is refused).
    pub max: QuotaAmount,
    /// Counter lifetime in milliseconds, set when the counter is created and never extended;
    /// absent or null: no expiry.
    #[serde(default)]
    pub ttl_ms: Option<QuotaTtlMs>,
    /// Your id for this add: a repeat returns the first answer and adds nothing.
    #[serde(default)]
    pub request_id: Option<QuotaRequestId>,
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
#[utoipa::path(post, path = "/v1/quotas/{name}/add", operation_id = "quotas_add", tag = "quotas",
    request_body = QuotaAddRequest,
    params(("name" = KeyName, Path, description = "the counter")),
    responses((status = 200, body = QuotaAddResponse, description = "applied"),
              (status = 409, body = QuotaAddResponse,
               description = "would leave the bounds (or `min > max`): nothing changed")))]
pub async fn add(
    Caller(t): Caller,
    Named(name): Named<KeyName>,
    JsonBody(req): JsonBody<QuotaAddRequest>,
) -> Result<Response, ApiError> {
    let (name, quotas) = (
        name.as_str(),
        Quotas::new(t.client.clone(), t.keyspace.clone()),
    );
    if req.min.0 > req.max.0 {
        // An empty range: every add is refused, and nothing runs (a read is always safe).
        let value = quotas.get(name).await.map_err(lib)?;
        let refused = QuotaAddResponse {
            applied: false,
            value,
        };
        return Ok(answer(StatusCode::CONFLICT, refused));
    }
    let bounds = Bounds::new(req.min.0, req.max.0).map_err(lib)?;
    let ttl = req.ttl_ms.map(QuotaTtlMs::duration);
    let (delta, id) = (req.delta.0, req.request_id.as_ref());
    let got = match id {
        Some(id) => quotas
            .add_with_id(name, delta, bounds, ttl, id.as_str())
            .await
            .map_err(lib)?,
        None => quotas.add(name, delta, bounds, ttl).await.map_err(lib)?,
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
#[utoipa::path(get, path = "/v1/quotas/{name}", operation_id = "quotas_get", tag = "quotas",
    params(("name" = KeyName, Path, description = "the counter")),
    responses((status = 200, body = QuotaValueResponse, description = "the value")))]
pub async fn get(Caller(t): Caller, Named(name): Named<KeyName>) -> Result<Response, ApiError> {
    let value = Quotas::new(t.client.clone(), t.keyspace.clone())
        .get(name.as_str())
        .await
        .map_err(lib)?;
    Ok(answer(StatusCode::OK, QuotaValueResponse { value }))
}
