//! `/v1/limits/{policy}/consume`: [`redis_atomic::ratelimit`] over HTTP, policies by name from
//! the config (`[limits.NAME]`).
//!
//! Answers carry the IETF `RateLimit-Policy` and `RateLimit` headers (the same encoding as
//! [`redis_atomic_http::RateLimitLayer`], one implementation); a refusal is 429 with `Retry-After`.
//! Each policy counts separately: the identity is prefixed with the policy's name
//! ([`limit_identity`]), so `api` and `login` do not share a bucket for the same key. The
//! document has one path per configured policy ([`super::openapi`]), because what a consume may
//! carry depends on the policy: `cost` up to its burst, `key` up to what the name leaves.

use super::error::{lib, ApiError, JsonBody};
use super::extract::Named;
use super::locks::{answer, ms, with_retry_after};
use super::params::{defaults, limit_identity, Cost, LimitKey, LimitRequestId};
use super::Caller;
use axum::response::Response;
use http::StatusCode;
use redis_atomic::ratelimit::Decision;
use redis_atomic_http::ratelimit::{policy_header, ratelimit_header, RATELIMIT, RATELIMIT_POLICY};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Body of `consume`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ConsumeRequest {
    /// The limited identity (customer, API key, IP).
    pub key: LimitKey,
    /// Units to charge.
    #[serde(default = "defaults::one_unit")]
    #[schema(default = defaults::one_unit)]
    pub cost: Cost,
    /// A request id: the same id gets the first decision back and is charged once (retry-safe).
    #[serde(default)]
    pub request_id: Option<LimitRequestId>,
}

/// Answer of `consume`: 200 allowed, 429 limited.
#[derive(Debug, Serialize, ToSchema)]
pub struct ConsumeResponse {
    /// Whether the request was admitted (and charged).
    pub allowed: bool,
    /// Units still available (allowed only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub remaining: Option<u64>,
    /// Until every limit is back to full quota, in milliseconds.
    pub reset_after_ms: u64,
    /// When the same request would be admitted (limited only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub retry_after_ms: Option<u64>,
    /// Whether this is an earlier decision for the same `request_id` (nothing charged now).
    pub replayed: bool,
}

/// Charge a policy.
#[utoipa::path(post, path = "/v1/limits/{policy}/consume", operation_id = "limits_consume",
    tag = "limits", request_body = ConsumeRequest,
    params(("policy" = String, Path, description = "a [limits.NAME] policy of the config")),
    responses((status = 200, body = ConsumeResponse, description = "allowed",
               headers(("RateLimit-Policy" = String, description = "the policy's limits (IETF draft)"),
                       ("RateLimit" = String, description = "what is left of each limit (IETF draft)"))),
              (status = 429, body = ConsumeResponse, description = "limited",
               headers(("Retry-After" = u64, description = "seconds until the same request would be admitted, rounded up"),
                       ("RateLimit-Policy" = String, description = "the policy's limits (IETF draft)"),
                       ("RateLimit" = String, description = "what is left of each limit (IETF draft)")))))]
pub async fn consume(
    Caller(t): Caller,
    Named(policy): Named<String>,
    JsonBody(req): JsonBody<ConsumeRequest>,
) -> Result<Response, ApiError> {
    let limiter = t
        .limiters
        .get(&policy)
        .ok_or_else(|| ApiError::not_found(format!("no policy [limits.{policy}]")))?;
    let identity = limit_identity(&policy, &req.key);
    let request_id = req.request_id.as_ref().map(LimitRequestId::as_str);
    let verdict = limiter
        .consume_detailed(&identity, req.cost.0, request_id)
        .await
        .map_err(lib)?;
    let limits = limiter.policy().limits();
    let replayed = verdict.replayed;
    let mut r = match verdict.decision {
        Decision::Allowed {
            remaining,
            reset_after,
        } => answer(
            StatusCode::OK,
            ConsumeResponse {
                allowed: true,
                remaining: Some(remaining),
                reset_after_ms: ms(reset_after),
                retry_after_ms: None,
                replayed,
            },
        ),
        Decision::Limited {
            retry_after,
            reset_after,
        } => with_retry_after(
            answer(
                StatusCode::TOO_MANY_REQUESTS,
                ConsumeResponse {
                    allowed: false,
                    remaining: None,
                    reset_after_ms: ms(reset_after),
                    retry_after_ms: Some(ms(retry_after)),
                    replayed,
                },
            ),
            retry_after,
        ),
        _ => return Err(ApiError::internal("unexpected rate-limit decision")),
    };
    let headers = r.headers_mut();
    headers.insert(RATELIMIT_POLICY, policy_header(limits));
    if let Some(v) = ratelimit_header(limits, &verdict) {
        headers.insert(RATELIMIT, v);
    }
    Ok(r)
}
