//! `Semaphore`: a named counting semaphore with expiring, fenced permits — the library's
//! `Semaphore`, and `Permit`, its handle.
//!
//! `acquire` resolves with a `Permit` (`acquired: true`) or `{ acquired: false, retryAfterMs }`
//! when every permit is taken; `release()` consumes the permit ([`crate::lease`]). Every caller of
//! one semaphore should pass the same `capacity`: it is sent with every acquire, not stored.

use crate::call::{spawn, spawn_failing, Call};
use crate::client::{Client, Gate};
use crate::convert::{duration, ms, uint};
use crate::errors;
use crate::lease::{self, Slot, WatchOptions};
use crate::value::{Js, Out, Promise, Resolve};
use napi::bindgen_prelude::{Either, Object};
use napi::Env;
use napi_derive::napi;
use redis_atomic::semaphore::{Acquire, Permit as LibPermit, Semaphore as Lib, SemaphoreConfig};
use redis_atomic::{Error, Keyspace};
use std::sync::Arc;

/// Settings of a `Semaphore`.
#[napi(object)]
pub struct SemaphoreOptions {
    /// Every key starts with `namespace:`.
    pub namespace: String,
    /// The semaphore's name (its hash tag: all its keys in one slot).
    pub name: String,
    /// Permits in all, 1..=100000.
    pub capacity: f64,
}

/// Options of one permit acquire.
#[napi(object)]
pub struct PermitOptions<'a> {
    /// Your owner token (default: a fresh random one): acquiring again with it while it holds a
    /// permit returns the same permit (same fence, lease reset).
    pub token: Option<String>,
    /// Abandons the acquire (a permit may still have been taken; it runs out after `ttlMs`).
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<Object<'a>>,
}

/// Every permit is taken.
#[napi(object)]
pub struct Full {
    /// Always `false`.
    #[napi(ts_type = "false")]
    pub acquired: bool,
    /// Until the earliest live lease ends, ms (a release may free one sooner).
    pub retry_after_ms: f64,
}

/// A semaphore's state, read without changing it.
#[napi(object)]
pub struct SemaphoreState {
    /// Unexpired permits.
    pub live: f64,
    /// Until the earliest live lease ends, ms (0 when none).
    pub next_expiry_ms: f64,
    /// The last fence issued.
    pub last_fence: f64,
}

/// The keys of one semaphore.
#[napi(object)]
pub struct SemaphoreKeys {
    /// Sorted set: holder token → lease end.
    pub permits: String,
    /// Hash: holder token → fence.
    pub holders: String,
    /// The last fence issued.
    pub fence: String,
}

/// One named semaphore of a fixed capacity.
#[napi]
pub struct Semaphore {
    inner: Lib,
    pub(crate) gate: Gate,
}

#[napi]
impl Semaphore {
    /// The semaphore `options.name` under `options.namespace`. Throws `BadArgumentError` for a
    /// capacity outside 1..=100000.
    #[napi(constructor)]
    pub fn new(env: &Env, client: &Client, options: SemaphoreOptions) -> napi::Result<Self> {
        let (conn, gate) = Gate::open(client).map_err(|e| errors::sync(env, e))?;
        let build = || -> Result<Lib, Error> {
            let capacity = u32::try_from(uint("capacity", options.capacity)?)
                .map_err(|_| errors::bad("capacity too large"))?;
            let keyspace = Keyspace::new(options.namespace)?;
            let config = SemaphoreConfig::new(capacity);
            Lib::new(conn, &keyspace, &options.name, config)
        };
        Ok(Semaphore {
            inner: build().map_err(|e| errors::sync(env, e))?,
            gate,
        })
    }

    /// The capacity.
    #[napi(getter)]
    pub fn capacity(&self) -> f64 {
        f64::from(self.inner.capacity())
    }

    /// The keys of this semaphore.
    #[napi(getter)]
    pub fn keys(&self) -> SemaphoreKeys {
        let k = self.inner.keys();
        SemaphoreKeys {
            permits: k.permits.clone(),
            holders: k.holders.clone(),
            fence: k.fence.clone(),
        }
    }

    /// Takes a permit for `ttlMs` (up to 7 days), or answers that all are taken.
    /// `OutcomeUnknownError.retrySafe` is true when you gave a `token`.
    #[napi]
    pub fn acquire(
        &self,
        env: &Env,
        ttl_ms: f64,
        options: Option<PermitOptions<'_>>,
    ) -> napi::Result<Promise<Either<Permit, Full>>> {
        let (token, signal) = match options {
            Some(o) => (o.token, o.signal),
            None => (None, None),
        };
        let call = Call::abortable(&self.gate, signal.as_ref(), token.is_some());
        let (sem, gate) = (self.inner.clone(), self.gate.clone());
        let fut = move || async move {
            let ttl = duration("ttlMs", ttl_ms)?;
            let acquired = match token {
                Some(t) => sem.acquire_with_token(&lease::token(t)?, ttl).await?,
                None => sem.acquire(ttl).await?,
            };
            acquire_out(acquired, gate)
        };
        spawn(env, call, fut)
    }

    /// Gives back the permit `token` holds with `fence`: `release()` by parts.
    #[napi]
    pub fn release(
        &self,
        env: &Env,
        token: String,
        fence: f64,
    ) -> napi::Result<Promise<Either<lease::Released, lease::Lost>>> {
        let sem = self.inner.clone();
        let fut = move || async move {
            let (token, fence) = (lease::token(token)?, lease::fence(fence)?);
            lease::released(sem.release(&token, fence).await?)
        };
        spawn(env, Call::on(&self.gate), fut)
    }

    /// Sets the lease of the permit `token` holds with `fence` to end `ttlMs` from the server's
    /// now: `extend()` by parts.
    #[napi]
    pub fn extend(
        &self,
        env: &Env,
        token: String,
        fence: f64,
        ttl_ms: f64,
    ) -> napi::Result<Promise<Either<lease::Extended, lease::Lost>>> {
        let sem = self.inner.clone();
        let fut = move || async move {
            let (token, fence) = (lease::token(token)?, lease::fence(fence)?);
            let ttl = duration("ttlMs", ttl_ms)?;
            lease::extended(sem.extend(&token, fence, ttl).await?)
        };
        spawn(env, Call::on(&self.gate), fut)
    }

    /// Counts live permits without changing anything (may run on a replica).
    #[napi]
    pub fn inspect(&self, env: &Env) -> napi::Result<Promise<SemaphoreState>> {
        let sem = self.inner.clone();
        let fut = move || async move {
            let s = sem.inspect().await?;
            Ok(Js(SemaphoreState {
                live: f64::from(s.live),
                next_expiry_ms: ms(s.next_expiry),
                last_fence: s.last_fence.0 as f64,
            }))
        };
        spawn(env, Call::on(&self.gate), fut)
    }
}

fn acquire_out(a: Acquire, gate: Gate) -> Result<Out, Error> {
    Ok(match a {
        Acquire::Acquired(permit) => Js(Permit {
            slot: Slot::new(permit, gate, "Permit", "release()"),
        })
        .resolve(),
        Acquire::Full { retry_after } => Js(Full {
            acquired: false,
            retry_after_ms: ms(retry_after),
        })
        .resolve(),
        other => return Err(errors::unknown_outcome(&other)),
    })
}

/// A held permit: pass `fence` to the writes it protects, then `release()` it. Dropping it does
/// nothing (the lease runs out).
#[napi]
pub struct Permit {
    slot: Arc<Slot<LibPermit>>,
}

#[napi]
impl Permit {
    /// Always `true` (the refusal says `false`).
    #[napi(getter, ts_return_type = "true")]
    pub fn acquired(&self) -> bool {
        true
    }

    /// The permit's fence: strictly greater than every earlier one of this semaphore.
    #[napi(getter)]
    pub fn fence(&self) -> f64 {
        self.slot.fence()
    }

    /// The owner token (reuse it to acquire again after an unknown outcome).
    #[napi(getter)]
    pub fn token(&self) -> String {
        self.slot.token()
    }

    /// The lease's length as last set, ms.
    #[napi(getter)]
    pub fn ttl_ms(&self) -> f64 {
        self.slot.ttl_ms()
    }

    /// How long the lease surely lasts from now by the local clock, ms (0 once past).
    #[napi(getter)]
    pub fn expires_in_ms(&self) -> f64 {
        self.slot.expires_in_ms()
    }

    /// Whether `release()` was called.
    #[napi(getter)]
    pub fn ended(&self) -> bool {
        self.slot.ended()
    }

    /// Sets the lease to end `ttlMs` from the server's now (absolute, never added).
    #[napi]
    pub fn extend(
        &self,
        env: &Env,
        ttl_ms: f64,
    ) -> napi::Result<Promise<Either<lease::Extended, lease::Lost>>> {
        lease::extend(env, &self.slot, ttl_ms)
    }

    /// Gives the permit back if it is still live; consumes the handle. After an unknown outcome,
    /// `Semaphore.release` by parts.
    #[napi]
    pub fn release(
        &self,
        env: &Env,
    ) -> napi::Result<Promise<Either<lease::Released, lease::Lost>>> {
        let slot = self.slot.clone();
        let ended = slot.end();
        let fut = move || async move {
            ended?;
            let permit = slot.take().await?;
            Ok(lease::released(permit.release().await?)?)
        };
        spawn_failing(env, Call::on(&self.slot.gate), fut)
    }

    /// Renews the lease in the background until `release()` or `unwatch()`; returns the
    /// `AbortSignal` that fires (with a `LeaseLostError`) if the permit is lost.
    #[napi(ts_return_type = "AbortSignal")]
    pub fn watch<'e>(
        &self,
        env: &'e Env,
        options: Option<WatchOptions>,
    ) -> napi::Result<Object<'e>> {
        lease::watch(env, &self.slot, options)
    }

    /// Stops the renewals; the permit is held (unwatched) again.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn unwatch(&self, env: &Env) -> napi::Result<Promise<()>> {
        lease::unwatch(env, &self.slot)
    }
}
