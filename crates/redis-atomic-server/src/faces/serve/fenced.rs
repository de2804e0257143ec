//! `/v1/fenced/{resource}/write`: [`redis_atomic::fenced`] over HTTP: `SET`s that apply only if
//! `fence` is at least the highest fence that wrote to the resource. A stale fence is 409 with
//! the current one, nothing applied. Keys are parts under the tenant's
//! `<ns>:fenced:v1:{resource}:data:` prefix ([`FencedWrites::key`]), never raw Redis keys. A
//! resend after a 504 is safe (the writes are idempotent and only the same fence can pass).

use super::error::{lib, ApiError, JsonBody};
use super::extract::Named;
use super::locks::{answer, conflict_unless};
use super::params::{KeyName, WriteFence};
use super::Caller;
use axum::response::Response;
use redis_atomic::fenced::{Fenced, FencedWrites};
use redis_atomic::write::{Write, MAX_WRITES};
use serde::{Deserialize, Deserializer, Serialize};
use utoipa::openapi::schema::ArrayBuilder;
use utoipa::openapi::{RefOr, Schema};
use utoipa::{PartialSchema, ToSchema};

/// One `SET` of a fenced write.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FencedSet {
    /// The key's part under the resource (the stored key is
    /// `<ns>:fenced:v1:{resource}:data:<key>`).
    pub key: KeyName,
    /// The value (UTF-8).
    pub value: String,
}

/// Body of a fenced write.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FencedWriteRequest {
    /// The writer's fence (from a lock or semaphore acquire).
    pub fence: WriteFence,
    /// The `SET`s, applied all or none.
    pub writes: Writes,
}

/// The `SET`s of one fenced write: 1..=`write::MAX_WRITES` (the library's batch limit), checked
/// while parsing and stated in the schema from the same constant.
#[derive(Debug)]
pub struct Writes(pub Vec<FencedSet>);

impl<'de> Deserialize<'de> for Writes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let writes = Vec::<FencedSet>::deserialize(d)?;
        if writes.is_empty() || writes.len() > MAX_WRITES {
            return Err(serde::de::Error::custom(format!(
                "writes must hold 1..={MAX_WRITES} items, got {}",
                writes.len()
            )));
        }
        Ok(Writes(writes))
    }
}

impl PartialSchema for Writes {
    fn schema() -> RefOr<Schema> {
        ArrayBuilder::new()
            .items(FencedSet::schema())
            .min_items(Some(1))
            .max_items(Some(MAX_WRITES))
            .into()
    }
}

impl ToSchema for Writes {}

/// Answer of a fenced write: 200 applied, 409 stale.
#[derive(Debug, Serialize, ToSchema)]
pub struct FencedWriteResponse {
    /// Whether the writes applied.
    pub applied: bool,
    /// The highest fence that wrote (stale only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub current_fence: Option<u64>,
}

/// Write under a fence.
#[utoipa::path(post, path = "/v1/fenced/{resource}/write", operation_id = "fenced_write",
    tag = "fenced", request_body = FencedWriteRequest,
    params(("resource" = KeyName, Path, description = "the fenced resource")),
    responses((status = 200, body = FencedWriteResponse, description = "applied"),
              (status = 409, body = FencedWriteResponse, description = "a larger fence has written")))]
pub async fn write(
    Caller(t): Caller,
    Named(resource): Named<KeyName>,
    JsonBody(req): JsonBody<FencedWriteRequest>,
) -> Result<Response, ApiError> {
    let resource = resource.as_str();
    let fenced = FencedWrites::new(t.client.clone(), t.keyspace.clone());
    let writes = req
        .writes
        .0
        .into_iter()
        .map(|w| Ok(Write::set(fenced.key(resource, w.key.as_str())?, w.value)))
        .collect::<Result<Vec<_>, redis_atomic::Error>>()
        .map_err(lib)?;
    let got = fenced
        .fenced_write(resource, req.fence.fence(), &writes)
        .await
        .map_err(lib)?;
    let current_fence = match got {
        Fenced::Applied { .. } => None,
        Fenced::Stale { highest } => Some(highest.0),
        _ => return Err(ApiError::internal("unexpected fenced write outcome")),
    };
    let applied = current_fence.is_none();
    Ok(answer(
        conflict_unless(applied),
        FencedWriteResponse {
            applied,
            current_fence,
        },
    ))
}
