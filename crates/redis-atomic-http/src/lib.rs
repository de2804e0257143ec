//! # redis-atomic-http
//!
//! The `redis-atomic` primitives as tower middleware for axum:
//!
//! * [`idempotency::IdempotencyLayer`]: the IETF `Idempotency-Key` header.
//! * [`ratelimit::RateLimitLayer`]: 429 with `Retry-After`, IETF `RateLimit-Policy` / `RateLimit`
//!   headers, an explicit fail-open or fail-closed policy when Redis is unreachable.
//! * [`proxy::Proxy`]: both, per route, in front of any HTTP service (`redis-atomic proxy`).
//!
//! A crate of its own, not a feature of `redis-atomic`: a service that only locks, queues or
//! limits in Rust should not compile axum, tower and hyper. Depend on this crate where a layer
//! goes in front of handlers; `redis-atomic serve` and `redis-atomic proxy` build on it too.
//!
//! Two HTTP faces build on the same pieces: [`serve`] (every primitive over HTTP/JSON, the
//! router behind `redis-atomic serve`) and the proxy; what they share (auth, health, metrics,
//! shutdown) is in [`face`].
//!
//! Both layers are one skeleton ([`layer`]): the tower plumbing (readiness, handing the ready
//! inner service to the request, boxing the future) is written once, and each layer is a
//! [`layer::Handler`] that turns (inner service, request) into the response.
//!
//! ```no_run
//! # async fn demo(client: redis_atomic::Client) -> Result<(), redis_atomic::Error> {
//! use axum::{routing::post, Router};
//! use redis_atomic::idempotency::Idempotency;
//! use redis_atomic::Keyspace;
//! use redis_atomic_http::{IdempotencyLayer, IdempotencyLayerConfig};
//!
//! let store = Idempotency::new(client, Keyspace::new("payments")?);
//! let layer = IdempotencyLayer::new(store, IdempotencyLayerConfig::default());
//! let app: Router = Router::new().route("/charges", post(|| async { "charged" }).layer(layer));
//! # Ok(()) }
//! ```

pub mod config;
pub mod face;
pub mod idempotency;
pub mod layer;
mod problem;
pub mod proxy;
pub mod ratelimit;
pub mod serve;

pub use idempotency::{IdempotencyLayer, IdempotencyLayerConfig};
pub use ratelimit::{RateLimitLayer, RateLimitLayerConfig, Unavailable};
