//! # redis-atomic for Node
//!
//! The npm package `redis-atomic`: the Rust library bound directly into Node with napi-rs — no
//! HTTP hop, no second implementation. Every decision is the library's; this crate only turns
//! JavaScript values into the library's types and back.
//!
//! ## Layout
//!
//! ```text
//! call.rs      the one future → Promise path (AbortSignal)
//! bridge.rs    calls to the runtime in batches, outcomes back to their JavaScript thread
//! value.rs     what a call resolves with (numbers decoded by index.js, or Node-API values)
//! runtime.rs   the tokio runtime      shared.rs  the arrays shared with index.js
//! errors.rs    library errors → the package's Error subclasses (errors.js), stable `code`s
//! convert.rs   ms durations, integers, script replies
//! client.rs    Client.connect(url | urls, options)
//! ratelimit.rs RateLimiter      quota.rs Quotas      dedup.rs Dedup
//! fenced.rs    FencedWrites     scripts.rs ScriptSet
//! lease.rs     what every lease handle shares: its slot, end-once, the watchdog (AbortSignal)
//! lock.rs      Locks, Lock      semaphore.rs Semaphore, Permit
//! idempotency.rs Idempotency, IdempotencyClaim   response.rs stored responses
//! queue.rs     Queue (enqueue, claim, by parts)   queue_admin.rs stats, dead letters, reap
//! job.rs       Job
//! ```
//!
//! ## Conventions (the same in every module)
//!
//! * One class per library type, built with `new X(client, { namespace, … })`; methods take the
//!   identity first and an options object last; names are camelCase.
//! * Durations are milliseconds as `number` (`…Ms`), fractions to the µs; integers are `number`s
//!   checked to be integers below 2^53 ([`convert`]).
//! * Every call returns a `Promise`; refusals resolve as values (`{ allowed: false, … }`,
//!   `{ applied: false, … }`); errors reject with a `RedisAtomicError` subclass whose `code` is
//!   stable ([`errors`]). A synchronous method (constructor, `keys`) throws the same classes.
//! * Calls whose wait can be long take `signal` (an `AbortSignal`); an aborted call may still
//!   have run ([`call`]).
//!
//! ## Lease-like primitives (locks, semaphores, idempotency, the queue)
//!
//! A class over each library type (`Locks`, `Semaphore`, `Idempotency`, `Queue`) whose acquiring
//! call resolves with a refusal value or a **handle** class (`Lock`, `Permit`,
//! `IdempotencyClaim`, `Job`) holding the library's handle in a [`lease`] slot: `fence`, `token`
//! and `ttlMs` as getters; `extend(ttlMs)` resolving `{ extended: true, fence, ttlMs } |
//! { extended: false }`; the end verbs (`release`, `complete` / `fail`, `ack` / `nack`) taking
//! the handle out of the slot, so a second end is a typed `HandleEndedError` rather than a second
//! request. By-parts calls take token and fence for a handle rebuilt elsewhere. `watch()` puts
//! the handle under the library's watchdog (`Watched<L>`) and returns an `AbortSignal` fired when
//! it is lost.

mod bridge;
mod call;
mod client;
mod convert;
mod dedup;
mod errors;
mod fenced;
mod idempotency;
mod job;
mod lease;
mod lock;
mod queue;
mod queue_admin;
mod quota;
mod ratelimit;
mod response;
mod runtime;
mod scripts;
mod semaphore;
mod shared;
mod value;

use napi::bindgen_prelude::Object;
use napi_derive::napi;

/// Called once per JavaScript thread by the package's `index.js` with its hooks: `createError`
/// (the factory of `errors.js`), `watchSignal` (the `AbortSignal` helper), `internNames` (limit
/// names of a policy), and the promise bridge's `settle`, `noop`, `ctl` and `rec` ([`bridge`]).
#[napi(js_name = "__init", skip_typescript)]
pub fn init(hooks: Object) -> napi::Result<()> {
    errors::install(&hooks)?;
    bridge::install(&hooks)
}

/// Sends this thread's batch of calls to the runtime (`index.js` calls it via `setImmediate`).
#[napi(js_name = "__flush", skip_typescript)]
pub fn flush() {
    bridge::flush();
}

/// The addon's allocator. Calls are built on the JavaScript thread and freed on the runtime's
/// (and results the other way), which glibc's malloc serves through locked arena frees and
/// fastbin consolidation; mimalloc frees across threads without a lock. Only the addon's own
/// (Rust) allocations use it: Node's heap is untouched.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
