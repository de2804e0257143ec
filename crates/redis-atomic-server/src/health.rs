//! `/healthz` (the process answers) and `/readyz` (Redis answers `PING`), the same for every face.

use axum::response::{IntoResponse, Response};
use http::{header, HeaderValue, StatusCode};
use redis_atomic::Client;
use redis_atomic_http::problem;

/// `GET /healthz`: the process answers.
pub async fn healthz() -> &'static str {
    "ok"
}

/// `GET /readyz`: Redis answers `PING` (503 problem otherwise).
pub async fn readyz(client: &Client) -> Response {
    match client.command(&redis::cmd("PING")).await {
        Ok(_) => "ready".into_response(),
        Err(e) => {
            tracing::warn!(error = %e, "readiness: redis unreachable");
            let mut r = problem::typed(
                StatusCode::SERVICE_UNAVAILABLE,
                "unavailable",
                "redis is unreachable",
                Default::default(),
            );
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            r
        }
    }
}
