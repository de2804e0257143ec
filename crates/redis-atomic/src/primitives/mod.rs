//! The primitives, one module each, all with the same shape: a handle built from a
//! [`crate::Client`] (and a [`crate::Keyspace`] for those that name their own keys), a public
//! typed key set, one method per script, typed outcomes in which a refusal is a value, and a
//! module doc stating the invariant, the keys, the mechanism (its rung), what a retry does, and
//! what is not guaranteed. The crate docs state the two constructor kinds (collections keyed per
//! call, named instances) and the rungs once, for all of them; lease-like primitives share
//! [`crate::lease`]'s handle shape, fence rule and watchdog.

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
