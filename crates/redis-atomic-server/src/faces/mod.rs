//! One module per face, each a [`crate::start::Face`] over the same config, auth, health,
//! metrics and start-up: [`serve`] (the primitives over HTTP/JSON), [`proxy`]
//! (Idempotency-Key and rate limits in front of any HTTP service) and [`rls`] (Envoy's gRPC
//! rate-limit service). A new face is a new module here and an implementation of the trait;
//! nothing else changes.

pub mod proxy;
pub mod rls;
pub mod serve;

pub use proxy::ProxyFace;
pub use rls::RlsFace;
pub use serve::ServeFace;
