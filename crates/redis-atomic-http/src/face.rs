//! What every HTTP face (`redis-atomic serve`, `redis-atomic proxy`) needs besides its routes:
//! bearer-token auth mapping each token to a namespace, the listen-address check, `/healthz` and
//! `/readyz`, Prometheus `/metrics` with HTTP request metrics, and graceful shutdown.
//!
//! Written once here so both faces behave alike: a token means the same tenant to both, an
//! operator scrapes the same metric names, and both refuse to listen off loopback without auth.
//!
//! * [`Auth`]: `Authorization: Bearer <token>` → namespace, from `[auth] tokens`. With no tokens
//!   configured every request gets the default namespace (allowed on loopback only, see
//!   [`check_listen`]). A missing or unknown token is `401` with `WWW-Authenticate: Bearer`; the
//!   token is never logged.
//! * [`track`]: a middleware counting `redis_atomic_http_requests_total{route,method,status}` and
//!   timing `redis_atomic_http_request_seconds{route,method}` (route = the matched pattern, so
//!   resource names never become label values).
//! * [`metrics_handle`]: the process-wide Prometheus recorder, which also records the library's
//!   own `redis_atomic_*` metrics.
//! * [`serve`]: runs a router on a bound listener until SIGTERM or Ctrl-C, then drains.

use crate::problem;
use axum::body::Body;
use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{header, HeaderMap, HeaderValue, StatusCode};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use redis_atomic::Client;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::Instant;

/// Bearer token → namespace. Tokens are kept and looked up as SHA-256 digests: the lookup's
/// timing depends on the digest of what was presented, not on how much of a real token it
/// shares, and the process holds no token in clear after start.
#[derive(Clone, Debug)]
pub struct Auth {
    tokens: HashMap<[u8; 32], String>,
    default_namespace: String,
}

/// Why a request was not authenticated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthError {
    /// No `Authorization: Bearer` header.
    Missing,
    /// A token the config does not know.
    Unknown,
}

impl Auth {
    /// From `[auth] tokens`; `default_namespace` serves every request when there are no tokens.
    pub fn new(config: &crate::config::AuthConfig, default_namespace: &str) -> Self {
        Auth {
            tokens: config
                .tokens
                .iter()
                .map(|(token, ns)| (digest(token), ns.clone()))
                .collect(),
            default_namespace: default_namespace.to_string(),
        }
    }

    /// Whether requests must carry a token.
    pub fn required(&self) -> bool {
        !self.tokens.is_empty()
    }

    /// Every namespace a request can get (the default one when auth is off).
    pub fn namespaces(&self) -> Vec<String> {
        if self.required() {
            let mut all: Vec<String> = self.tokens.values().cloned().collect();
            all.sort();
            all.dedup();
            all
        } else {
            vec![self.default_namespace.clone()]
        }
    }

    /// The namespace of the request with these headers.
    pub fn namespace(&self, headers: &HeaderMap) -> Result<&str, AuthError> {
        if !self.required() {
            return Ok(&self.default_namespace);
        }
        let token = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .ok_or(AuthError::Missing)?;
        self.tokens
            .get(&digest(token.trim()))
            .map(String::as_str)
            .ok_or(AuthError::Unknown)
    }
}

fn digest(token: &str) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(token.as_bytes()).into()
}

impl IntoResponse for AuthError {
    fn into_response(self) -> Response {
        let detail = match self {
            AuthError::Missing => "an Authorization: Bearer <token> header is required",
            AuthError::Unknown => "unknown bearer token",
        };
        let mut r = problem::typed(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            detail,
            Default::default(),
        );
        r.headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        r
    }
}

/// Refuses to listen on a non-loopback address without auth: one line saying why.
pub fn check_listen(addr: SocketAddr, auth: &Auth) -> Result<(), String> {
    if addr.ip().is_loopback() || auth.required() {
        Ok(())
    } else {
        Err(format!(
            "refusing to listen on {addr} without auth: add [auth] tokens to --config, or listen on 127.0.0.1"
        ))
    }
}

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

/// Resolves when SIGTERM or Ctrl-C arrives.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        // A handler that cannot be installed must not read as a signal.
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
    tracing::info!("shutting down: draining in-flight requests");
}

/// Serves `router` on `listener` until `shutdown` resolves, then lets in-flight requests finish.
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::AuthConfig;

    fn auth(tokens: &[(&str, &str)]) -> Auth {
        let mut config = AuthConfig::default();
        for (t, ns) in tokens {
            config.tokens.insert(t.to_string(), ns.to_string());
        }
        Auth::new(&config, "dflt")
    }

    /// Off loopback, no tokens is refused (one line naming the address); loopback or tokens pass.
    #[test]
    fn listen_check() {
        let open = auth(&[]);
        let closed = auth(&[("token-aaaa", "a")]);
        let lan: SocketAddr = "0.0.0.0:7379".parse().expect("address");
        let lo: SocketAddr = "127.0.0.1:0".parse().expect("address");
        let v6: SocketAddr = "[::1]:80".parse().expect("address");
        let err = check_listen(lan, &open).expect_err("refused");
        assert!(err.contains("0.0.0.0:7379") && !err.contains('\n'), "{err}");
        assert!(check_listen(lo, &open).is_ok() && check_listen(v6, &open).is_ok());
        assert!(check_listen(lan, &closed).is_ok());
    }

    /// Tokens map to their namespaces; missing and unknown tokens are told apart; without
    /// tokens every request gets the default namespace.
    #[test]
    fn tokens_to_namespaces() {
        let a = auth(&[("token-aaaa", "ns-a"), ("token-bbbb", "ns-b")]);
        let mut h = HeaderMap::new();
        assert_eq!(a.namespace(&h), Err(AuthError::Missing));
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer token-bbbb"),
        );
        assert_eq!(a.namespace(&h), Ok("ns-b"));
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer token-cccc"),
        );
        assert_eq!(a.namespace(&h), Err(AuthError::Unknown));
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Basic dG9rZW4="),
        );
        assert_eq!(a.namespace(&h), Err(AuthError::Missing));
        assert_eq!(a.namespaces(), vec!["ns-a".to_string(), "ns-b".to_string()]);
        assert_eq!(auth(&[]).namespace(&HeaderMap::new()), Ok("dflt"));
    }
}
