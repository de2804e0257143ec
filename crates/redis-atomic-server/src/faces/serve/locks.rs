//! `/v1/locks/{resource}/{acquire,extend,release}`: [`redis_atomic::lock`] over HTTP.
//!
//! The owner token and the fence are the client's handle: `acquire` returns them (or takes the
//! client's own token, so a retry after a 504 is safe and returns the same fence), `extend` and
//! `release` need both. A held lock is 409 with `Retry-After`, not an error.

use super::error::{lib, ApiError, JsonBody};
use super::extract::Named;
use super::params::{Fence, KeyName, LockTtlMs, OwnerToken};
use super::Caller;
use axum::response::{IntoResponse, Response};
use axum::Json;
use http::{header, HeaderValue, StatusCode};
use redis_atomic::lease::{self, Extend, Release};
use redis_atomic::lock::Acquire;
use serde::{Deserialize, Serialize};
use std::time::Duration;
use utoipa::ToSchema;

/// Body of `acquire`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AcquireRequest {
    /// Lease length in milliseconds.
    pub ttl_ms: LockTtlMs,
    /// Your own owner token (to retry an acquisition whose answer was lost); default: a fresh
    /// random one.
    #[serde(default)]
    pub token: Option<OwnerToken>,
}

/// Answer of lock and semaphore `acquire`: 200 acquired, 409 held (or full).
#[derive(Debug, Serialize, ToSchema)]
pub struct AcquireResponse {
    /// Whether the caller now holds the lock (or a permit).
    pub acquired: bool,
    /// The owner token (acquired only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub token: Option<String>,
    /// The fence: pass it to every write the lock protects (acquired only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub fence: Option<u64>,
    /// The lease granted (acquired only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub ttl_ms: Option<u64>,
    /// The current holder's remaining lease (held only; for a semaphore, the earliest to end).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub retry_after_ms: Option<u64>,
}

/// Body of `extend`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExtendRequest {
    /// The owner token `acquire` returned.
    pub token: OwnerToken,
    /// The fence `acquire` returned.
    pub fence: Fence,
    /// New lease from now, in milliseconds.
    pub ttl_ms: LockTtlMs,
}

/// Answer of `extend`: 200 extended, 409 not the owner.
#[derive(Debug, Serialize, ToSchema)]
pub struct ExtendResponse {
    /// Whether the lease was extended.
    pub extended: bool,
    /// The lease's fence (extended only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub fence: Option<u64>,
    /// The new remaining lease (extended only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub ttl_ms: Option<u64>,
}

/// Body of `release`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReleaseRequest {
    /// The owner token `acquire` returned.
    pub token: OwnerToken,
    /// The fence `acquire` returned.
    pub fence: Fence,
}

/// Answer of `release`: 200 released, 409 not the owner.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReleaseResponse {
    /// Whether the lock was released.
    pub released: bool,
}

/// The library's token for `given` (checked by its type, so the library takes it).
pub(super) fn token(given: &OwnerToken) -> Result<lease::OwnerToken, ApiError> {
    given.owner().map_err(lib)
}

pub(super) fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// `status` with JSON `body`.
pub(super) fn answer<T: Serialize>(status: StatusCode, body: T) -> Response {
    (status, Json(body)).into_response()
}

/// 200 when `ok`, else 409 (a refusal, not an error).
pub(super) fn conflict_unless(ok: bool) -> StatusCode {
    if ok {
        StatusCode::OK
    } else {
        StatusCode::CONFLICT
    }
}

/// `409` (or `429`) with `Retry-After` in whole seconds, rounded up, at least 1.
pub(super) fn with_retry_after(mut r: Response, after: Duration) -> Response {
    let secs = redis_atomic_http::ratelimit::ceil_secs(after).max(1);
    if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
        r.headers_mut().insert(header::RETRY_AFTER, v);
    }
    r
}

/// 200 acquired (a lock or a semaphore permit).
pub(super) fn acquired(token: &lease::OwnerToken, fence: lease::Fence, ttl_ms: u64) -> Response {
    let body = AcquireResponse {
        acquired: true,
        token: Some(token.as_str().to_string()),
        fence: Some(fence.0),
        ttl_ms: Some(ttl_ms),
        retry_after_ms: None,
    };
    answer(StatusCode::OK, body)
}

/// 409 + `Retry-After`: held (a lock) or full (a semaphore).
pub(super) fn held(retry_after: Duration) -> Response {
    let body = AcquireResponse {
        acquired: false,
        token: None,
        fence: None,
        ttl_ms: None,
        retry_after_ms: Some(ms(retry_after)),
    };
    with_retry_after(answer(StatusCode::CONFLICT, body), retry_after)
}

/// Acquire a lock.
#[utoipa::path(post, path = "/v1/locks/{resource}/acquire", operation_id = "locks_acquire",
    tag = "locks", request_body = AcquireRequest,
    params(("resource" = KeyName, Path, description = "the locked resource")),
    responses((status = 200, body = AcquireResponse, description = "acquired"),
              (status = 409, body = AcquireResponse, description = "held by another owner",
               headers(("Retry-After" = u64, description = "seconds until the lease ends, rounded up")))))]
pub async fn acquire(
    Caller(t): Caller,
    Named(resource): Named<KeyName>,
    JsonBody(req): JsonBody<AcquireRequest>,
) -> Result<Response, ApiError> {
    // The library says whether a resend is safe: with the caller's own token, yes.
    let (resource, ttl) = (resource.as_str(), req.ttl_ms.duration());
    let got = match req.token.as_ref() {
        Some(given) => {
            t.locks
                .acquire_with_token(resource, &token(given)?, ttl)
                .await
        }
        None => t.locks.acquire(resource, ttl).await,
    }
    .map_err(lib)?;
    Ok(match got {
        Acquire::Acquired(guard) => acquired(guard.token(), guard.fence(), req.ttl_ms.0),
        Acquire::Held { retry_after } => held(retry_after),
        _ => return Err(ApiError::internal("unexpected acquire outcome")),
    })
}

/// Extend a held lock's lease.
#[utoipa::path(post, path = "/v1/locks/{resource}/extend", operation_id = "locks_extend",
    tag = "locks", request_body = ExtendRequest,
    params(("resource" = KeyName, Path, description = "the locked resource")),
    responses((status = 200, body = ExtendResponse, description = "extended"),
              (status = 409, body = ExtendResponse, description = "not the owner")))]
pub async fn extend(
    Caller(t): Caller,
    Named(resource): Named<KeyName>,
    JsonBody(req): JsonBody<ExtendRequest>,
) -> Result<Response, ApiError> {
    let token = token(&req.token)?;
    let ttl = req.ttl_ms.duration();
    let got = t
        .locks
        .extend(resource.as_str(), &token, req.fence.fence(), ttl)
        .await
        .map_err(lib)?;
    Ok(match got {
        Extend::Extended { fence, ttl } => answer(
            StatusCode::OK,
            ExtendResponse {
                extended: true,
                fence: Some(fence.0),
                ttl_ms: Some(ms(ttl)),
            },
        ),
        _ => answer(
            StatusCode::CONFLICT,
            ExtendResponse {
                extended: false,
                fence: None,
                ttl_ms: None,
            },
        ),
    })
}

/// Release a held lock.
#[utoipa::path(post, path = "/v1/locks/{resource}/release", operation_id = "locks_release",
    tag = "locks", request_body = ReleaseRequest,
    params(("resource" = KeyName, Path, description = "the locked resource")),
    responses((status = 200, body = ReleaseResponse, description = "released"),
              (status = 409, body = ReleaseResponse, description = "not the owner")))]
pub async fn release(
    Caller(t): Caller,
    Named(resource): Named<KeyName>,
    JsonBody(req): JsonBody<ReleaseRequest>,
) -> Result<Response, ApiError> {
    let token = token(&req.token)?;
    let got = t
        .locks
        .release(resource.as_str(), &token, req.fence.fence())
        .await
        .map_err(lib)?;
    let released = matches!(got, Release::Released { .. });
    Ok(answer(
        conflict_unless(released),
        ReleaseResponse { released },
    ))
}
