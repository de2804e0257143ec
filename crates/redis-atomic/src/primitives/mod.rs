//! The primitives, one module each, all with the same shape: a handle built from a
//! [`crate::Client`] and a [`crate::Keyspace`], a public typed key set, one method per script,
//! typed outcomes in which a refusal is a value, and a module doc stating the invariant, the
//! keys, the mechanism (its rung), what a retry does, and what is not guaranteed. Lease-like
//! primitives share [`crate::lease`]'s handle shape, fence rule and watchdog.
//!
//! **Two constructor kinds.**
//!
//! * *Collections keyed per call*: [`lock::Locks`], [`idempotency::Idempotency`],
//!   [`quota::Quotas`], [`fenced::FencedWrites`], [`dedup::Dedup`], [`ratelimit::RateLimiter`].
//!   `new(client, keyspace)` never fails; settings that need checking come through `with_*`
//!   builders returning `Result<Self, Error>` (`Idempotency::with_config`,
//!   `Quotas::with_request_ttl`, `FencedWrites::with_retention`, `RateLimiter::with_request_ttl`);
//!   every call names what it acts on (a resource, a scope and key, a counter, an event id, an
//!   identity), and `keys(id..) -> Result<..Keys, Error>` shows the keys of one such id.
//!   [`ratelimit::RateLimiter::new`] takes its [`ratelimit::Policy`] as a third argument: a
//!   limiter is one policy applied over many identities, so the policy belongs to the
//!   collection, not to a call.
//! * *Named instances*: [`semaphore::Semaphore`], [`queue::Queue`].
//!   `new(client, &keyspace, name, config) -> Result<Self, Error>` (the config, a
//!   [`semaphore::SemaphoreConfig`] holding the capacity or a [`queue::QueueConfig`], is checked
//!   there); `keys() -> &SemaphoreKeys` / `&QueueKeys` holds every key the instance uses.
//!
//! [`cas::Cas`] and [`multi::MultiWrite`] act on the caller's own keys and take no keyspace.
//!
//! **Rungs.** Each primitive uses the weakest mechanism that keeps its invariant, from a ladder
//! of five: (1) a plain command, (2) one command with options (`SET NX PX GET`, `PEXPIRE NX`,
//! `ZADD GT`), (3) `MULTI`/`EXEC` of writes known in advance, (4) optimistic `WATCH`/`MULTI`/
//! `EXEC`, (5) a Lua script, where the decision reads state and must not interleave with other
//! writers. A native command that decides exactly what a script decides replaces the script where
//! the server has it ([`crate::client::Capabilities`]).

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
