//! `/v1/semaphores/{name}/{acquire,extend,release}`: [`redis_atomic::semaphore`] over HTTP.
//!
//! Like [`super::locks`], with a `capacity` on `acquire` (every caller of one name should pass the
//! same) and the permit's `fence` alongside its token on `extend` and `release`. All permits taken
//! is 409 with `Retry-After`, not an error.

use super::error::{lib, ApiError, JsonBody};
use super::extract::Named;
use super::locks::{acquired, answer, conflict_unless, held, ms, token, AcquireResponse};
use super::params::{Capacity, Fence, KeyName, OwnerToken, SemaphoreTtlMs};
use super::Caller;
use axum::response::Response;
use redis_atomic::lease::{Extend, Release};
use redis_atomic::semaphore::{Acquire, Semaphore, SemaphoreConfig};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Body of semaphore `acquire`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SemAcquireRequest {
    /// Permits in total; pass the same for every caller of a name.
    pub capacity: Capacity,
    /// Lease length in milliseconds.
    pub ttl_ms: SemaphoreTtlMs,
    /// Your own owner token (to retry an acquisition whose answer was lost); default: a fresh
    /// random one.
    #[serde(default)]
    pub token: Option<OwnerToken>,
}

/// Body of semaphore `extend`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SemExtendRequest {
    /// The owner token `acquire` returned.
    pub token: OwnerToken,
    /// The fence `acquire` returned.
    pub fence: Fence,
    /// New lease from now, in milliseconds.
    pub ttl_ms: SemaphoreTtlMs,
}

/// Body of semaphore `release`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SemReleaseRequest {
    /// The owner token `acquire` returned.
    pub token: OwnerToken,
    /// The fence `acquire` returned.
    pub fence: Fence,
}

/// Answer of semaphore and idempotency `extend`: 200 extended, 409 not held.
#[derive(Debug, Serialize, ToSchema)]
pub struct LeaseExtendResponse {
    /// Whether the lease was extended.
    pub extended: bool,
    /// The new remaining lease (extended only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub ttl_ms: Option<u64>,
}

/// 200 with the new lease, or 409 when the permit (or claim) is no longer held.
pub(super) fn extended(got: Extend) -> Response {
    let ttl_ms = match got {
        Extend::Extended { ttl, .. } => Some(ms(ttl)),
        _ => None,
    };
    let extended = ttl_ms.is_some();
    answer(
        conflict_unless(extended),
        LeaseExtendResponse { extended, ttl_ms },
    )
}

/// Answer of semaphore `release`: 200 released, 409 not held.
#[derive(Debug, Serialize, ToSchema)]
pub struct SemReleaseResponse {
    /// Whether the permit was given back.
    pub released: bool,
}

// Capacity only matters to `acquire`; extend and release act on one holder's permit.
fn semaphore(t: &super::Tenant, name: &KeyName, capacity: u32) -> Result<Semaphore, ApiError> {
    let config = SemaphoreConfig::new(capacity);
    Semaphore::new(t.client.clone(), &t.keyspace, name.as_str(), config).map_err(lib)
}

/// Take a semaphore permit.
#[utoipa::path(post, path = "/v1/semaphores/{name}/acquire", operation_id = "semaphores_acquire",
    tag = "semaphores", request_body = SemAcquireRequest,
    params(("name" = KeyName, Path, description = "the semaphore")),
    responses((status = 200, body = AcquireResponse, description = "acquired"),
              (status = 409, body = AcquireResponse, description = "all permits taken",
               headers(("Retry-After" = u64, description = "seconds until the first permit's lease ends, rounded up")))))]
pub async fn acquire(
    Caller(t): Caller,
    Named(name): Named<KeyName>,
    JsonBody(req): JsonBody<SemAcquireRequest>,
) -> Result<Response, ApiError> {
    let sem = semaphore(&t, &name, req.capacity.0)?;
    let ttl = req.ttl_ms.duration();
    let got = match req.token.as_ref() {
        Some(given) => sem.acquire_with_token(&token(given)?, ttl).await,
        None => sem.acquire(ttl).await,
    }
    .map_err(lib)?;
    Ok(match got {
        Acquire::Acquired(permit) => acquired(permit.token(), permit.fence(), req.ttl_ms.0),
        Acquire::Full { retry_after } => held(retry_after),
        _ => return Err(ApiError::internal("unexpected semaphore acquire outcome")),
    })
}

/// Extend a held permit's lease.
#[utoipa::path(post, path = "/v1/semaphores/{name}/extend", operation_id = "semaphores_extend",
    tag = "semaphores", request_body = SemExtendRequest,
    params(("name" = KeyName, Path, description = "the semaphore")),
    responses((status = 200, body = LeaseExtendResponse, description = "extended"),
              (status = 409, body = LeaseExtendResponse, description = "permit not held")))]
pub async fn extend(
    Caller(t): Caller,
    Named(name): Named<KeyName>,
    JsonBody(req): JsonBody<SemExtendRequest>,
) -> Result<Response, ApiError> {
    let owner = token(&req.token)?;
    let got = semaphore(&t, &name, 1)?
        .extend(&owner, req.fence.fence(), req.ttl_ms.duration())
        .await
        .map_err(lib)?;
    Ok(extended(got))
}

/// Give a permit back.
#[utoipa::path(post, path = "/v1/semaphores/{name}/release", operation_id = "semaphores_release",
    tag = "semaphores", request_body = SemReleaseRequest,
    params(("name" = KeyName, Path, description = "the semaphore")),
    responses((status = 200, body = SemReleaseResponse, description = "released"),
              (status = 409, body = SemReleaseResponse, description = "permit not held")))]
pub async fn release(
    Caller(t): Caller,
    Named(name): Named<KeyName>,
    JsonBody(req): JsonBody<SemReleaseRequest>,
) -> Result<Response, ApiError> {
    let owner = token(&req.token)?;
    let got = semaphore(&t, &name, 1)?
        .release(&owner, req.fence.fence())
        .await
        .map_err(lib)?;
    let released = matches!(got, Release::Released { .. });
    Ok(answer(
        conflict_unless(released),
        SemReleaseResponse { released },
    ))
}
