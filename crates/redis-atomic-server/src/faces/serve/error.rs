//! How `serve` answers what went wrong: every error is `application/problem+json` with a stable
//! `type` (`urn:redis-atomic:problem:<kind>`), and the library's errors map by what a client
//! should do next:
//!
//! | cause | status | kind | client should |
//! |---|---|---|---|
//! | body not JSON | 400 | `bad-json` | fix the request |
//! | body over the size limit | 413 | `too-large` | send less |
//! | JSON of the wrong shape, a value out of range ([`Error::BadArgument`], cost above burst) | 422 | `invalid` | fix the request |
//! | unknown policy, unknown route | 404 | `not-found` | fix the request |
//! | missing or unknown bearer token | 401 | `unauthorized` | authenticate |
//! | nothing ran ([`Error::NotSent`], [`Error::Rejected`], [`Error::CrossSlot`], connection, TLS) | 503 + `Retry-After` | `unavailable` | resend later |
//! | may have run ([`Error::OutcomeUnknown`]: no reply in time, the connection broke, a reply that does not parse) | 504 | `outcome-unknown`, with `retry_safe` | resend only if `retry_safe` |
//! | ran, not replicated ([`Error::NotReplicated`]) | 503 + `Retry-After` | `not-replicated` | resend later |
//! | ran (or may have), its reply unusable ([`Error::BadReply`]: a shape no script sends) | 502 | `bad-reply`, with `retry_safe` | resend only if `retry_safe`; tell the operator |
//! | Redis refused or failed (script error, `NOPERM`, wrong type at a key) | 502 | `redis-error` | tell the operator |
//! | a failure inside `serve` before anything was sent ([`Error::Client`]) or an outcome this build does not know | 500 | `internal` | tell the operator |
//!
//! Nothing a server sends is ever a 500: every reply, well-formed or not, maps to one of the
//! statuses above by what the server may have done (a test drives `serve` through a proxy that
//! corrupts Redis' replies and finds no 500).
//!
//! A refusal by the primitive (lock held, rate limited, stale fence) is not an error: it is a
//! normal JSON body with 409 or 429.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::response::{IntoResponse, Response};
use http::{header, HeaderValue, StatusCode};
use redis_atomic::Error;
use redis_atomic_http::problem;
use serde::de::DeserializeOwned;

/// An error answer of `serve`.
#[derive(Debug)]
#[non_exhaustive]
pub enum ApiError {
    /// A library error; whether resending the same request after an unknown outcome is safe
    /// is the library's to say ([`Error::retry_safe`]), per call.
    Library {
        /// The error.
        error: Error,
    },
    /// The request itself is wrong.
    Client {
        /// 400, 404, 413 or 422.
        status: StatusCode,
        /// The problem kind.
        kind: &'static str,
        /// One line for the client.
        detail: String,
    },
}

impl ApiError {
    /// 422 with `detail`.
    pub fn invalid(detail: impl Into<String>) -> Self {
        ApiError::Client {
            status: StatusCode::UNPROCESSABLE_ENTITY,
            kind: "invalid",
            detail: detail.into(),
        }
    }

    /// 500 with `detail` (a library outcome this build does not know).
    pub fn internal(detail: impl Into<String>) -> Self {
        ApiError::Client {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            kind: "internal",
            detail: detail.into(),
        }
    }

    /// 404 with `detail`.
    pub fn not_found(detail: impl Into<String>) -> Self {
        ApiError::Client {
            status: StatusCode::NOT_FOUND,
            kind: "not-found",
            detail: detail.into(),
        }
    }
}

/// Wraps a library error for a route.
pub fn lib(error: Error) -> ApiError {
    ApiError::Library { error }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        match self {
            ApiError::Client {
                status,
                kind,
                detail,
            } => problem::typed(status, kind, &detail, Default::default()),
            ApiError::Library { error } => library(error),
        }
    }
}

fn library(error: Error) -> Response {
    let detail = error.to_string();
    let retry_safe = error.retry_safe();
    let (status, kind) = match &error {
        Error::BadArgument(_) | Error::CostExceedsBurst { .. } => {
            return ApiError::invalid(detail).into_response()
        }
        Error::OutcomeUnknown { .. } => (StatusCode::GATEWAY_TIMEOUT, "outcome-unknown"),
        Error::BadReply { .. } => (StatusCode::BAD_GATEWAY, "bad-reply"),
        Error::NotSent(_)
        | Error::Rejected { .. }
        | Error::CrossSlot { .. }
        | Error::Connection(_)
        | Error::Tls(_) => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
        Error::NotReplicated { .. } => (StatusCode::SERVICE_UNAVAILABLE, "not-replicated"),
        Error::Server { .. } | Error::WrongType(_) => (StatusCode::BAD_GATEWAY, "redis-error"),
        _ => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
    };
    tracing::warn!(error = %detail, status = status.as_u16(), retry_safe, "request failed");
    let mut extra = serde_json::Map::new();
    if matches!(kind, "outcome-unknown" | "bad-reply") {
        // It may have run: whether resending the same request is safe is the library's to say.
        extra.insert("retry_safe".into(), retry_safe.into());
    }
    let mut r = problem::typed(status, kind, &detail, extra);
    if status == StatusCode::SERVICE_UNAVAILABLE {
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    }
    r
}

/// A JSON request body, whatever its `Content-Type` (clients' defaults differ), size-limited by
/// the router's body limit; an empty body reads as `{}`. Rejections are problems: 400 not JSON,
/// 413 too large, 422 wrong shape.
pub struct JsonBody<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(|e| ApiError::Client {
                status: e.status(),
                kind: if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                    "too-large"
                } else {
                    "bad-body"
                },
                detail: e.body_text(),
            })?;
        // Only no body at all reads as `{}`: whitespace alone is not JSON (400), as the document says.
        let bytes: &[u8] = if bytes.is_empty() { b"{}" } else { &bytes };
        super::extract::from_object(bytes)
            .map(JsonBody)
            .map_err(|e| {
                use serde_json::error::Category;
                match e.classify() {
                    Category::Data => ApiError::invalid(e.to_string()),
                    _ => ApiError::Client {
                        status: StatusCode::BAD_REQUEST,
                        kind: "bad-json",
                        detail: e.to_string(),
                    },
                }
            })
    }
}
