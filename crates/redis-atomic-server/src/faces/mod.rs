//! One module per face, each a [`crate::start::Face`] over the same config, auth, health,
//! metrics and start-up: [`serve`] (the primitives over HTTP/JSON) and [`proxy`]
//! (Idempotency-Key and rate limits in front of any HTTP service). A new face is a new module
//! here and an implementation of the trait; nothing else changes.

pub mod proxy;
pub mod serve;

pub use proxy::ProxyFace;
pub use serve::ServeFace;
