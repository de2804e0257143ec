//! The primitives, one module each, all with the same shape (see `lib.rs`): a handle type built
//! from a [`crate::Client`] and a [`crate::Keyspace`], a public typed key set (`keys(...)`), one
//! method per script, typed outcomes in which a refusal is a value, and a module doc stating the
//! invariant, the keys, the mechanism (its rung), what a retry does, and what is not guaranteed.
//! Lease-like primitives share [`crate::lease`]'s handle shape.

pub mod cas;
pub mod dedup;
pub mod fenced;
pub mod idempotency;
pub mod lock;
pub mod multi;
pub mod queue;
pub mod quota;
pub mod ratelimit;
pub mod semaphore;
