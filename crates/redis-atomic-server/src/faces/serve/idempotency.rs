//! `/v1/idempotency/{key}/{begin,extend,complete,fail}`: [`redis_atomic::idempotency`] over HTTP.
//!
//! `begin` claims the key for a request with a `fingerprint` (any string identifying the request,
//! e.g. method + path + body hash): 200 `claimed` with a token and fence (run the request, then
//! `complete`), 200 `completed`/`failed` with the stored response to replay, 409 + `Retry-After`
//! while another executor holds it, 422 `fingerprint-mismatch` when the key was used for another
//! request. Keys live under the caller's tenant (scope `serve`).

use super::error::{lib, ApiError, JsonBody};
use super::extract::Named;
use super::locks::{answer, conflict_unless, ms, token, with_retry_after};
use super::params::{Fence, IdempotencyKey, LeaseMs, OwnerToken, Status};
use super::semaphores::{extended, LeaseExtendResponse};
use super::Caller;
use axum::response::Response;
use http::StatusCode;
use redis_atomic::idempotency::{
    Begin, Body, Failure, Fingerprint, Idempotency, IdempotencyConfig, Outcome, Response as Stored,
    Stored as Kept,
};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The scope of every serve key (the tenant is the keyspace).
const SCOPE: &str = "serve";

/// Body of idempotency `begin`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BeginRequest {
    /// Identifies the request: equal requests under one key must send equal fingerprints.
    pub fingerprint: String,
    /// Claim lease in milliseconds; absent or null: the library's default (30000).
    #[serde(default)]
    pub lease_ms: Option<LeaseMs>,
    /// Your own owner token (to retry a `begin` whose answer was lost); default: a fresh one.
    #[serde(default)]
    pub token: Option<OwnerToken>,
}

/// A stored response, as replayed.
#[derive(Debug, Serialize, ToSchema)]
pub struct StoredResponse {
    /// The stored status.
    pub status: u16,
    /// The stored body (UTF-8, lossy).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub body: Option<String>,
    /// Where the body is kept, when the library stored a reference.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub reference: Option<String>,
}

/// Answer of `begin`: 200 `claimed`, `completed` or `failed`; 409 `in_progress`.
#[derive(Debug, Serialize, ToSchema)]
pub struct BeginResponse {
    /// `claimed`, `completed`, `failed` or `in_progress`.
    pub state: &'static str,
    /// The claim's owner token (claimed only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub token: Option<String>,
    /// The claim's fence (claimed only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub fence: Option<u64>,
    /// Whether the claim took over an expired one (claimed only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub takeover: Option<bool>,
    /// The response to replay (completed or failed only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub response: Option<StoredResponse>,
    /// Time left on the other executor's lease (in progress only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub retry_after_ms: Option<u64>,
}

/// Body of idempotency `extend`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct IdemExtendRequest {
    /// The token `begin` returned.
    pub token: OwnerToken,
    /// The fence `begin` returned.
    pub fence: Fence,
    /// New lease from now, in milliseconds.
    pub lease_ms: LeaseMs,
}

/// Body of idempotency `complete`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CompleteRequest {
    /// The token `begin` returned.
    pub token: OwnerToken,
    /// The fence `begin` returned.
    pub fence: Fence,
    /// The response status to store.
    pub status: Status,
    /// The response body to store (UTF-8).
    #[serde(default)]
    pub body: String,
}

/// Answer of `complete` and `fail`: 200 stored (or freed), 409 claim lost (nothing written).
#[derive(Debug, Serialize, ToSchema)]
pub struct CompleteResponse {
    /// Whether the response was stored.
    pub stored: bool,
}

fn store(t: &super::Tenant, lease: Option<LeaseMs>) -> Result<Idempotency, ApiError> {
    let mut config = IdempotencyConfig::default();
    if let Some(lease) = lease {
        config = config.ttl(lease.duration());
    }
    Idempotency::new(t.client.clone(), t.keyspace.clone())
        .with_config(config)
        .map_err(lib)
}

fn stored(r: &Stored) -> StoredResponse {
    let (body, reference) = match &r.body {
        Body::Bytes(b) => (Some(String::from_utf8_lossy(b).into_owned()), None),
        Body::Reference(at) => (None, Some(at.clone())),
        _ => (None, None),
    };
    StoredResponse {
        status: r.status,
        body,
        reference,
    }
}

fn begun(state: &'static str) -> BeginResponse {
    BeginResponse {
        state,
        token: None,
        fence: None,
        takeover: None,
        response: None,
        retry_after_ms: None,
    }
}

/// Claim an idempotency key, or get its stored response.
#[utoipa::path(post, path = "/v1/idempotency/{key}/begin", operation_id = "idempotency_begin",
    tag = "idempotency", request_body = BeginRequest,
    params(("key" = IdempotencyKey, Path, description = "the idempotency key")),
    responses((status = 200, body = BeginResponse, description = "claimed, or the stored response"),
              (status = 409, body = BeginResponse, description = "in progress elsewhere",
               headers(("Retry-After" = u64, description = "seconds until the other executor's lease ends, rounded up")))))]
pub async fn begin(
    Caller(t): Caller,
    Named(key): Named<IdempotencyKey>,
    JsonBody(req): JsonBody<BeginRequest>,
) -> Result<Response, ApiError> {
    let fp = Fingerprint::of(&[req.fingerprint.as_bytes()]);
    let (store, key) = (store(&t, req.lease_ms)?, key.as_str().as_bytes());
    let got = match req.token.as_ref() {
        Some(given) => store.begin_with_token(SCOPE, key, fp, &token(given)?).await,
        None => store.begin(SCOPE, key, fp).await,
    }
    .map_err(lib)?;
    Ok(match got {
        Begin::Claimed(claim) => answer(
            StatusCode::OK,
            BeginResponse {
                token: Some(claim.token().as_str().to_string()),
                fence: Some(claim.fence().0),
                takeover: Some(claim.is_takeover()),
                ..begun("claimed")
            },
        ),
        Begin::Replay(kept) => {
            let (state, r) = match &kept {
                Kept::Completed(r) => ("completed", r),
                Kept::Failed(r) => ("failed", r),
                _ => return Err(ApiError::internal("unexpected stored outcome")),
            };
            let response = Some(stored(r));
            answer(
                StatusCode::OK,
                BeginResponse {
                    response,
                    ..begun(state)
                },
            )
        }
        Begin::InProgress { retry_after } => with_retry_after(
            answer(
                StatusCode::CONFLICT,
                BeginResponse {
                    retry_after_ms: Some(ms(retry_after)),
                    ..begun("in_progress")
                },
            ),
            retry_after,
        ),
        Begin::Mismatch => {
            return Err(ApiError::Client {
                status: StatusCode::UNPROCESSABLE_ENTITY,
                kind: "fingerprint-mismatch",
                detail: "this idempotency key was used with a different fingerprint".into(),
            })
        }
        _ => return Err(ApiError::internal("unexpected begin outcome")),
    })
}

/// Extend a claim's lease.
#[utoipa::path(post, path = "/v1/idempotency/{key}/extend", operation_id = "idempotency_extend",
    tag = "idempotency", request_body = IdemExtendRequest,
    params(("key" = IdempotencyKey, Path, description = "the idempotency key")),
    responses((status = 200, body = LeaseExtendResponse, description = "extended"),
              (status = 409, body = LeaseExtendResponse, description = "claim lost")))]
pub async fn extend(
    Caller(t): Caller,
    Named(key): Named<IdempotencyKey>,
    JsonBody(req): JsonBody<IdemExtendRequest>,
) -> Result<Response, ApiError> {
    let owner = token(&req.token)?;
    let lease = req.lease_ms.duration();
    let got = store(&t, None)?
        .extend(
            SCOPE,
            key.as_str().as_bytes(),
            &owner,
            req.fence.fence(),
            lease,
        )
        .await
        .map_err(lib)?;
    Ok(extended(got))
}

/// Store a claim's response for replay.
#[utoipa::path(post, path = "/v1/idempotency/{key}/complete",
    operation_id = "idempotency_complete", tag = "idempotency", request_body = CompleteRequest,
    params(("key" = IdempotencyKey, Path, description = "the idempotency key")),
    responses((status = 200, body = CompleteResponse, description = "stored"),
              (status = 409, body = CompleteResponse, description = "claim lost")))]
pub async fn complete(
    Caller(t): Caller,
    Named(key): Named<IdempotencyKey>,
    JsonBody(req): JsonBody<CompleteRequest>,
) -> Result<Response, ApiError> {
    let owner = token(&req.token)?;
    let response = Stored::new(req.status.0, req.body.into_bytes());
    let fence = req.fence.fence();
    let got = store(&t, None)?
        .complete(SCOPE, key.as_str().as_bytes(), &owner, fence, &response)
        .await
        .map_err(lib)?;
    let ok = matches!(got, Outcome::Stored);
    Ok(answer(conflict_unless(ok), CompleteResponse { stored: ok }))
}

/// Body of idempotency `fail`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FailRequest {
    /// The token `begin` returned.
    pub token: OwnerToken,
    /// The fence `begin` returned.
    pub fence: Fence,
    /// `true`: free the key (the next `begin` runs the request again); `false`: store `status`
    /// and `body` as the final answer that duplicates replay.
    pub retryable: bool,
    /// The response status to store: final failures only, and then required.
    #[serde(default)]
    pub status: Option<Status>,
    /// The response body to store (final only).
    #[serde(default)]
    pub body: String,
}

/// End a claim with a failure.
#[utoipa::path(post, path = "/v1/idempotency/{key}/fail", operation_id = "idempotency_fail",
    tag = "idempotency", request_body = FailRequest,
    params(("key" = IdempotencyKey, Path, description = "the idempotency key")),
    responses((status = 200, body = CompleteResponse, description = "freed or stored"),
              (status = 409, body = CompleteResponse, description = "claim lost")))]
pub async fn fail(
    Caller(t): Caller,
    Named(key): Named<IdempotencyKey>,
    JsonBody(req): JsonBody<FailRequest>,
) -> Result<Response, ApiError> {
    let owner = token(&req.token)?;
    let failure = match (req.retryable, req.status) {
        (true, _) => Failure::Retryable,
        (false, Some(status)) => Failure::Final(Stored::new(status.0, req.body.into_bytes())),
        (false, None) => return Err(ApiError::invalid("a final failure needs a status")),
    };
    let fence = req.fence.fence();
    let got = store(&t, None)?
        .fail(SCOPE, key.as_str().as_bytes(), &owner, fence, &failure)
        .await
        .map_err(lib)?;
    let ok = matches!(got, Outcome::Stored);
    Ok(answer(conflict_unless(ok), CompleteResponse { stored: ok }))
}

/// The rule the handler of `fail` enforces beyond the fields' own ("a final failure needs a
/// status"), as JSON Schema: if `retryable` is `false`, `status` is present and not null. The
/// document adds it to `FailRequest` ([`super::openapi`]). Written as `if`/`then` (not an
/// `anyOf` of the two cases): validators and property-based testers read it the same, and client
/// generators, which do not model it, leave the request type as it is instead of splitting it.
pub fn fail_needs_status() -> serde_json::Value {
    serde_json::json!({
        "if": {"properties": {"retryable": {"const": false}}},
        "then": {"required": ["status"], "properties": {"status": {"not": {"type": "null"}}}}
    })
}
