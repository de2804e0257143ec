//! # redis-atomic-http
//!
//! The `redis-atomic` primitives as tower middleware for axum:
//!
//! * [`idempotency::IdempotencyLayer`]: the IETF `Idempotency-Key` header.
//! * [`ratelimit::RateLimitLayer`]: 429 with `Retry-After`, IETF `RateLimit-Policy` / `RateLimit`
//!   headers, an explicit fail-open or fail-closed policy when Redis is unreachable.
//! * [`problem`]: the `application/problem+json` bodies they answer errors with.
//!
//! **Who it is for:** a Rust service on axum that puts a layer in front of its handlers.
//!
//! **Why a crate of its own:** not a feature of `redis-atomic`, because a service that only
//! locks, queues or limits in Rust should not compile axum, tower and hyper; and not the
//! applications built on these layers (`redis-atomic serve` and `redis-atomic proxy`, in
//! `redis-atomic-server`), because a user of one layer should not compile an OpenAPI generator,
//! a Prometheus exporter and a TOML parser.
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

pub mod idempotency;
pub mod layer;
pub mod problem;
pub mod ratelimit;

pub use idempotency::{IdempotencyLayer, IdempotencyLayerConfig};
pub use ratelimit::{RateLimitLayer, RateLimitLayerConfig, Unavailable};
