//! The one layer skeleton every layer of this crate is an instance of.
//!
//! A tower middleware is mostly plumbing: a `Layer` that wraps the inner service, a `Service`
//! that forwards readiness, hands the *ready* inner service to the request (a fresh clone takes
//! its place, tower's pattern: a clone is not necessarily ready) and boxes the future. That is
//! written here once, as [`Layer<H>`] and [`Service<S, H>`]; what a layer decides is its
//! [`Handler`]: one method from (inner service, request) to the response.
//!
//! Layers answer every refusal and failure themselves (problem+json), so the error type is
//! [`Infallible`], as axum requires of route layers.

use axum::body::Body;
use futures::future::BoxFuture;
use http::{Request, Response};
use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll};

/// A service a layer wraps: an axum route or router (infallible, `Send`, `'static`).
pub trait Inner:
    tower::Service<Request<Body>, Response = Response<Body>, Error = Infallible, Future: Send>
    + Send
    + 'static
{
}

impl<S> Inner for S where
    S: tower::Service<Request<Body>, Response = Response<Body>, Error = Infallible, Future: Send>
        + Send
        + 'static
{
}

/// What a layer decides: given the ready inner service and a request, the response (running
/// the inner service or not). Shared by every request through an `Arc`.
pub trait Handler: Send + Sync + 'static {
    /// The response to `req`; `inner` is ready to be called (at most once) with it.
    fn handle<S: Inner>(
        self: Arc<Self>,
        inner: S,
        req: Request<Body>,
    ) -> impl Future<Output = Response<Body>> + Send + 'static;
}

/// A tower layer that puts [`Handler`] `H` in front of a service.
pub struct Layer<H> {
    handler: Arc<H>,
}

impl<H: Handler> Layer<H> {
    /// A layer running `handler` in front of every service it wraps.
    pub fn from_handler(handler: H) -> Self {
        Layer {
            handler: Arc::new(handler),
        }
    }
}

// By hand: a derive would require `H: Clone`, and only the `Arc` is cloned.
impl<H> Clone for Layer<H> {
    fn clone(&self) -> Self {
        Layer {
            handler: self.handler.clone(),
        }
    }
}

impl<S, H> tower::Layer<S> for Layer<H> {
    type Service = Service<S, H>;
    fn layer(&self, inner: S) -> Self::Service {
        Service {
            inner,
            handler: self.handler.clone(),
        }
    }
}

/// The service a [`Layer`] wraps around yours.
pub struct Service<S, H> {
    inner: S,
    handler: Arc<H>,
}

impl<S: Clone, H> Clone for Service<S, H> {
    fn clone(&self) -> Self {
        Service {
            inner: self.inner.clone(),
            handler: self.handler.clone(),
        }
    }
}

impl<S, H> tower::Service<Request<Body>> for Service<S, H>
where
    S: Inner + Clone,
    H: Handler,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response<Body>, Infallible>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<Body>) -> Self::Future {
        // The ready service handles this request; a fresh clone takes its place (tower's pattern).
        let clone = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, clone);
        let response = self.handler.clone().handle(inner, req);
        Box::pin(async move { Ok(response.await) })
    }
}

/// Runs the inner service on `req`: what a handler does when it lets the request through.
pub async fn run<S: Inner>(mut inner: S, req: Request<Body>) -> Response<Body> {
    match inner.call(req).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

/// A request body read whole, up to `limit` bytes; above it (or if it breaks off), the 413
/// answer to send instead.
pub async fn read_request_body(
    body: Body,
    limit: usize,
) -> Result<axum::body::Bytes, Response<Body>> {
    use http_body_util::BodyExt;
    match http_body_util::Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(_) => Err(crate::problem::response(
            http::StatusCode::PAYLOAD_TOO_LARGE,
            "request body over the limit",
        )),
    }
}
