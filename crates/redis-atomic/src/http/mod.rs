//! HTTP layers (feature `http`): the primitives as tower middleware for axum.
//!
//! * [`idempotency::IdempotencyLayer`]: the IETF `Idempotency-Key` header.

pub mod idempotency;
mod problem;

pub use idempotency::{IdempotencyLayer, IdempotencyLayerConfig};
