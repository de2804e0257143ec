//! HTTP layers (feature `http`): the primitives as tower middleware for axum.
//!
//! * [`idempotency::IdempotencyLayer`]: the IETF `Idempotency-Key` header.
//! * [`ratelimit::RateLimitLayer`]: 429 with `Retry-After`, IETF `RateLimit-Policy` / `RateLimit`
//!   headers, an explicit fail-open or fail-closed policy when Redis is unreachable.

pub mod idempotency;
mod problem;
pub mod ratelimit;

pub use idempotency::{IdempotencyLayer, IdempotencyLayerConfig};
pub use ratelimit::{RateLimitLayer, RateLimitLayerConfig, Unavailable};
