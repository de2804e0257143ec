//! The route table: which stack of layers a request goes through, by longest path prefix.
//!
//! Each `[[proxy.routes]]` entry becomes one boxed service: its rate-limit layers (one per named
//! policy, outermost first), the idempotency layer (key required or not) and the shared
//! [`Forward`]. A path no route matches goes through the default stack (key optional, no
//! limits). Built once at start; a request only compares its path with the prefixes.
//!
//! The client's identity is its credential: [`credential_scope`] hashes the `Authorization`
//! header, so two clients using the same `Idempotency-Key` never see each other's responses, each
//! credential has its own quota, and the raw credential reaches neither Redis nor the logs.

use super::forward::Forward;
use super::GENERATION_HEADER;
use axum::body::Body;
use futures::future::BoxFuture;
use http::{header, HeaderName, Request, Response};
use redis_atomic::idempotency::Idempotency;
use redis_atomic::ratelimit::{Policy, RateLimiter};
use redis_atomic::{Client, Keyspace};
use redis_atomic_http::idempotency::{IdempotencyLayer, IdempotencyLayerConfig};
use redis_atomic_http::ratelimit::{RateLimitLayer, RateLimitLayerConfig, Unavailable};
use sha2::{Digest, Sha256};
use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tower::util::BoxCloneSyncService;
use tower::Layer as _;

/// One route's stack, boxed so routes with different layers share a type.
pub(crate) type Stack = BoxCloneSyncService<Request<Body>, Response<Body>, Infallible>;

/// The scope of a request's keys and quota: a SHA-256 of its `Authorization` header (hex, 32
/// characters), or `anonymous` without one.
pub fn credential_scope(parts: &http::request::Parts) -> String {
    match parts.headers.get(header::AUTHORIZATION) {
        Some(v) => {
            let digest = Sha256::digest(v.as_bytes());
            digest[..16].iter().map(|b| format!("{b:02x}")).collect()
        }
        None => "anonymous".to_string(),
    }
}

/// What one route needs to build its stack.
pub(crate) struct RouteSpec<'a> {
    /// Whether `POST`/`PATCH` without a key is refused.
    pub require_key: bool,
    /// The named policies, outermost first.
    pub policies: Vec<(&'a str, Policy)>,
}

/// What every route's stack shares.
pub(crate) struct Shared {
    pub client: Client,
    pub keyspace: Keyspace,
    pub store: Idempotency,
    pub max_body_bytes: usize,
    pub limiter_timeout: Duration,
    pub forward: Forward,
}

impl Shared {
    /// The stack of one route: limits → idempotency → forward.
    pub(crate) fn stack(&self, spec: &RouteSpec<'_>) -> Stack {
        let mut config = IdempotencyLayerConfig::default()
            .required(spec.require_key)
            .max_body_bytes(self.max_body_bytes)
            .scope(credential_scope)
            .generation_header(HeaderName::from_static(GENERATION_HEADER));
        config.replay_headers.extend([
            header::CONTENT_ENCODING,
            header::CONTENT_LANGUAGE,
            header::ETAG,
        ]);
        let idempotency = IdempotencyLayer::new(self.store.clone(), config);
        let mut stack = Stack::new(idempotency.layer(self.forward.clone()));
        // Innermost first, so the first policy named is the first checked.
        for (name, policy) in spec.policies.iter().rev() {
            let limiter =
                RateLimiter::new(self.client.clone(), self.keyspace.clone(), policy.clone());
            let name = name.to_string();
            let config = RateLimitLayerConfig::new(
                move |parts| Some(format!("{name}:{}", credential_scope(parts))),
                Unavailable::FailClosed,
            )
            .timeout(self.limiter_timeout);
            stack = Stack::new(RateLimitLayer::new(limiter, config).layer(stack));
        }
        stack
    }
}

/// Picks a route's stack by the longest matching path prefix and strips what only the proxy
/// may set (the generation header) before anything else sees the request.
#[derive(Clone)]
pub(crate) struct Dispatch {
    /// `(prefix, stack)`, longest prefix first.
    routes: Arc<Vec<(String, Stack)>>,
    fallback: Stack,
}

impl Dispatch {
    pub(crate) fn new(mut routes: Vec<(String, Stack)>, fallback: Stack) -> Dispatch {
        routes.sort_by_key(|(prefix, _)| std::cmp::Reverse(prefix.len()));
        Dispatch {
            routes: Arc::new(routes),
            fallback,
        }
    }

    fn pick(&self, path: &str) -> Stack {
        self.routes
            .iter()
            .find(|(prefix, _)| matches(prefix, path))
            .map_or_else(|| self.fallback.clone(), |(_, s)| s.clone())
    }
}

/// `/payments` matches `/payments`, `/payments/…` and `/payments?…`, not `/paymentsX`.
fn matches(prefix: &str, path: &str) -> bool {
    let prefix = prefix.trim_end_matches('/');
    match path.strip_prefix(prefix) {
        Some(rest) => rest.is_empty() || rest.starts_with('/'),
        None => false,
    }
}

impl tower::Service<Request<Body>> for Dispatch {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response<Body>, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut req: Request<Body>) -> Self::Future {
        req.headers_mut().remove(GENERATION_HEADER);
        let mut stack = self.pick(req.uri().path());
        Box::pin(async move {
            futures::future::poll_fn(|cx| stack.poll_ready(cx)).await?;
            stack.call(req).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_match_whole_segments() {
        assert!(matches("/payments", "/payments"));
        assert!(matches("/payments", "/payments/42"));
        assert!(matches("/payments/", "/payments/42"));
        assert!(matches("/", "/anything"));
        assert!(!matches("/payments", "/paymentsX"));
        assert!(!matches("/payments", "/pay"));
    }

    #[test]
    fn the_scope_never_contains_the_credential() {
        let req = Request::builder()
            .header("authorization", "Bearer s3cr3t-token")
            .body(())
            .expect("request");
        let (parts, ()) = req.into_parts();
        let scope = credential_scope(&parts);
        assert_eq!(scope.len(), 32);
        assert!(!scope.contains("s3cr3t"));
        let anon = Request::new(()).into_parts().0;
        assert_eq!(credential_scope(&anon), "anonymous");
    }
}
