//! A tower layer that rate-limits requests with a [`RateLimiter`], answering as
//! draft-ietf-httpapi-ratelimit-headers (-10) describes.
//!
//! * Every limited route answers with `RateLimit-Policy` (each limit as `"name";q=<limit>` plus
//!   `;w=<seconds>` when its period is whole seconds) and `RateLimit` (each limit as
//!   `"name";r=<remaining>;t=<seconds>`, where `t` is when that limit admits this request again
//!   if it refused it, otherwise when it is back to full quota: an upper bound on when more quota
//!   arrives).
//! * Refused: `429 Too Many Requests`, `Retry-After` (whole seconds, rounded up), a
//!   `problem+json` body; the handler does not run.
//! * Cost above every limit's burst: `400`, since no wait would help.
//! * No key (the extractor returned `None`): [`RateLimitLayerConfig::missing_key`] (400 by default).
//! * Redis unreachable, failing or slower than [`RateLimitLayerConfig::timeout`]: the explicit
//!   [`Unavailable`] policy: [`Unavailable::FailOpen`] runs the handler unlimited (and logs),
//!   [`Unavailable::FailClosed`] answers `503` with `Retry-After: 1`. Never `429`: the client was
//!   not over its quota, the limiter was down.

use crate::layer::{run, Handler, Inner, Layer, Service};
use crate::problem;
use axum::body::Body;
use http::{header, HeaderName, HeaderValue, Request, Response, StatusCode};
use redis_atomic::ratelimit::{Decision, Limit, RateLimiter, Verdict};
use redis_atomic::Error;
use std::sync::Arc;
use std::time::Duration;

/// `RateLimit-Policy`.
pub const RATELIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");
/// `RateLimit`.
pub const RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");

/// Picks the rate-limited identity (API key, user, client IP) from the request head.
pub type KeyFn = Arc<dyn Fn(&http::request::Parts) -> Option<String> + Send + Sync>;
/// The cost of a request in quota units (1 by default).
pub type CostFn = Arc<dyn Fn(&http::request::Parts) -> u64 + Send + Sync>;

/// What to do when the limiter cannot decide (Redis down, erroring, or too slow).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unavailable {
    /// Serve the request unlimited: availability over protection.
    FailOpen,
    /// Refuse with 503: protection over availability.
    FailClosed,
}

/// Settings of the layer. There is no default: the [`Unavailable`] policy is always a choice.
#[derive(Clone)]
#[non_exhaustive]
pub struct RateLimitLayerConfig {
    /// The identity extractor.
    pub key: KeyFn,
    /// The cost extractor.
    pub cost: CostFn,
    /// Policy when the limiter cannot decide.
    pub unavailable: Unavailable,
    /// Longest wait for a decision; past it, [`RateLimitLayerConfig::unavailable`] applies.
    pub timeout: Duration,
    /// Status for requests without a key.
    pub missing_key: StatusCode,
}

impl RateLimitLayerConfig {
    /// Limits by `key`, with an explicit `unavailable` policy, cost 1, a 250 ms decision timeout.
    pub fn new(
        key: impl Fn(&http::request::Parts) -> Option<String> + Send + Sync + 'static,
        unavailable: Unavailable,
    ) -> Self {
        RateLimitLayerConfig {
            key: Arc::new(key),
            cost: Arc::new(|_| 1),
            unavailable,
            timeout: Duration::from_millis(250),
            missing_key: StatusCode::BAD_REQUEST,
        }
    }

    /// Limits by the value of request header `name` (requests without it get
    /// [`RateLimitLayerConfig::missing_key`]).
    pub fn by_header(name: &'static str, unavailable: Unavailable) -> Self {
        Self::new(
            move |parts| {
                parts
                    .headers
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .filter(|v| !v.is_empty())
                    .map(str::to_string)
            },
            unavailable,
        )
    }

    /// With this cost extractor.
    pub fn cost(
        mut self,
        f: impl Fn(&http::request::Parts) -> u64 + Send + Sync + 'static,
    ) -> Self {
        self.cost = Arc::new(f);
        self
    }

    /// With this decision timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// With this status for requests without a key (e.g. 401).
    pub fn missing_key(mut self, status: StatusCode) -> Self {
        self.missing_key = status;
        self
    }
}

/// What the rate-limit layer decides per request: the limiter, the settings and the
/// `RateLimit-Policy` header (computed once: the policy does not change).
pub struct RateLimitHandler {
    limiter: RateLimiter,
    config: RateLimitLayerConfig,
    policy_header: HeaderValue,
}

/// The layer.
pub type RateLimitLayer = Layer<RateLimitHandler>;

/// The service the layer wraps around yours.
pub type RateLimitService<S> = Service<S, RateLimitHandler>;

impl RateLimitLayer {
    /// A layer over `limiter`.
    pub fn new(limiter: RateLimiter, config: RateLimitLayerConfig) -> Self {
        let policy_header = policy_header(limiter.policy().limits());
        Layer::from_handler(RateLimitHandler {
            limiter,
            config,
            policy_header,
        })
    }
}

impl Handler for RateLimitHandler {
    async fn handle<S: Inner>(self: Arc<Self>, inner: S, req: Request<Body>) -> Response<Body> {
        let config = &self.config;
        let (parts, body) = req.into_parts();
        let Some(key) = (config.key)(&parts) else {
            return problem::response(config.missing_key, "no rate-limit key in the request");
        };
        let cost = (config.cost)(&parts);
        let decided = tokio::time::timeout(
            config.timeout,
            self.limiter.consume_detailed(&key, cost, None),
        )
        .await;
        let verdict = match decided {
            Ok(Ok(v)) => v,
            Ok(Err(Error::CostExceedsBurst { .. } | Error::BadArgument(_))) => {
                return problem::response(
                    StatusCode::BAD_REQUEST,
                    "the request costs more than the rate limit admits at once",
                );
            }
            Ok(Err(e)) => {
                return unavailable(
                    inner,
                    &self,
                    Request::from_parts(parts, body),
                    &e.to_string(),
                )
                .await
            }
            Err(_) => {
                return unavailable(
                    inner,
                    &self,
                    Request::from_parts(parts, body),
                    "decision timed out",
                )
                .await
            }
        };
        let mut response = match verdict.decision {
            Decision::Limited { retry_after, .. } => too_many(retry_after),
            _ => run(inner, Request::from_parts(parts, body)).await,
        };
        let headers = response.headers_mut();
        headers.insert(RATELIMIT_POLICY, self.policy_header.clone());
        if let Some(v) = ratelimit_header(self.limiter.policy().limits(), &verdict) {
            headers.insert(RATELIMIT, v);
        }
        response
    }
}

async fn unavailable<S: Inner>(
    inner: S,
    state: &RateLimitHandler,
    req: Request<Body>,
    why: &str,
) -> Response<Body> {
    match state.config.unavailable {
        Unavailable::FailOpen => {
            tracing::warn!(
                reason = why,
                "rate limiter unavailable; request served unlimited (fail open)"
            );
            run(inner, req).await
        }
        _ => {
            tracing::warn!(
                reason = why,
                "rate limiter unavailable; request refused (fail closed)"
            );
            let mut r = problem::response(
                StatusCode::SERVICE_UNAVAILABLE,
                "rate limiter unavailable; retry later",
            );
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            r
        }
    }
}

pub(crate) fn too_many(retry_after: Duration) -> Response<Body> {
    let mut r = problem::response(StatusCode::TOO_MANY_REQUESTS, "rate limit exceeded");
    if let Ok(v) = HeaderValue::from_str(&ceil_secs(retry_after).max(1).to_string()) {
        r.headers_mut().insert(header::RETRY_AFTER, v);
    }
    r
}

/// Whole seconds of `d`, rounded up (what `Retry-After` and the `RateLimit` header's `t` carry).
pub fn ceil_secs(d: Duration) -> u128 {
    d.as_micros().div_ceil(1_000_000)
}

/// The `RateLimit-Policy` header of `limits`: `"name";q=<limit>[;w=<seconds>], ...` (names are
/// `[A-Za-z0-9_.-]`, so valid sf-strings).
pub fn policy_header(limits: &[Limit]) -> HeaderValue {
    let items: Vec<String> = limits
        .iter()
        .map(|l| {
            let p = l.period();
            let w = if p.subsec_nanos() == 0 {
                format!(";w={}", p.as_secs())
            } else {
                String::new()
            };
            format!("\"{}\";q={}{w}", l.name(), l.limit())
        })
        .collect();
    HeaderValue::from_str(&items.join(", ")).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// The `RateLimit` header of a decision on `limits`: `"name";r=<remaining>;t=<seconds>, ...`.
pub fn ratelimit_header(limits: &[Limit], verdict: &Verdict) -> Option<HeaderValue> {
    let items: Vec<String> = limits
        .iter()
        .zip(&verdict.limits)
        .map(|(l, s)| {
            let t = if s.retry_after.is_zero() {
                s.reset_after
            } else {
                s.retry_after
            };
            format!("\"{}\";r={};t={}", l.name(), s.remaining, ceil_secs(t))
        })
        .collect();
    HeaderValue::from_str(&items.join(", ")).ok()
}
