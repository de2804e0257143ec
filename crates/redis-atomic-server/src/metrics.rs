//! Prometheus `/metrics` for every face: the process-wide recorder (which also records the
//! library's own `redis_atomic_*` metrics) and [`track`], a middleware counting
//! `redis_atomic_http_requests_total{route,method,status}` and timing
//! `redis_atomic_http_request_seconds{route,method}` (route = the matched pattern, so resource
//! names never become label values). One place, so an operator scrapes the same names from every
//! face.

use axum::body::Body;
use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use http::{header, HeaderValue};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use std::sync::OnceLock;
use std::time::Instant;

/// The process-wide Prometheus recorder (installed on first call; `None` if another recorder
/// was installed first, e.g. by an embedding application).
pub fn metrics_handle() -> Option<PrometheusHandle> {
    static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();
    HANDLE
        .get_or_init(|| PrometheusBuilder::new().install_recorder().ok())
        .clone()
}

/// `GET /metrics`: the Prometheus text format.
pub async fn metrics() -> Response {
    let text = metrics_handle().map(|h| h.render()).unwrap_or_default();
    let mut r = Response::new(Body::from(text));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4"),
    );
    r
}

/// Middleware: HTTP request counter and latency histogram, and one debug log line per request
/// (method, route pattern, status, µs; never the path's resource names or headers).
pub async fn track(req: Request, next: Next) -> Response {
    let started = Instant::now();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "unmatched".into());
    let method = req.method().as_str().to_string();
    let response = next.run(req).await;
    let status = response.status().as_u16().to_string();
    let took = started.elapsed();
    metrics::counter!("redis_atomic_http_requests_total",
        "route" => route.clone(), "method" => method.clone(), "status" => status)
    .increment(1);
    metrics::histogram!("redis_atomic_http_request_seconds",
        "route" => route.clone(), "method" => method.clone())
    .record(took.as_secs_f64());
    tracing::debug!(%method, %route, status = response.status().as_u16(), us = took.as_micros() as u64, "request");
    response
}
