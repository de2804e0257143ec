//! `Locks`: leases with fencing tokens — the library's `Locks`, and its `LockGuard` (the class
//! was `Lock`, still exported under that name by `index.js`).
//!
//! `acquire` resolves with a `LockGuard` handle (`acquired: true`) or the refusal
//! `{ acquired: false, retryAfterMs }`; `release()` consumes the handle ([`crate::lease`]). With
//! `waitMs` the acquire waits for the lock under the client's contention backoff (the library's
//! `acquire_timeout`), and `signal` abandons the wait: an acquisition in flight at that moment
//! may still succeed, with a random token nobody knows — that lease runs out after `ttlMs`. To be
//! able to recover an acquisition whose outcome is unknown, pass your own `token` (not allowed
//! with `waitMs`): acquiring again with it returns the same lease.

use crate::call::{spawn, spawn_failing, Call};
use crate::client::{Client, Gate};
use crate::convert::{duration, ms};
use crate::errors::{self, bad};
use crate::lease::{self, Slot, WatchOptions};
use crate::value::{Js, Out, Promise};
use napi::bindgen_prelude::{Either, Object};
use napi::Env;
use napi_derive::napi;
use redis_atomic::lock::{Acquire, LockGuard as LibGuard, LockState, Locks as Lib};
use redis_atomic::{Error, Keyspace};
use std::sync::Arc;

/// Settings of `Locks`.
#[napi(object)]
pub struct LocksOptions {
    /// Every key starts with `namespace:`.
    pub namespace: String,
}

/// Options of one acquire.
#[napi(object)]
pub struct AcquireOptions<'a> {
    /// Your owner token (default: a fresh random one): acquiring again with it while it holds
    /// the lock returns the same lease (same fence, lease reset) — how to recover an acquire
    /// whose outcome is unknown. Not with `waitMs`.
    pub token: Option<String>,
    /// Wait up to this long for the lock (retrying under the client's contention backoff)
    /// instead of answering `{ acquired: false }` at once.
    pub wait_ms: Option<f64>,
    /// Abandons the acquire (the promise rejects with `AbortedError`; a lease may still have
    /// been taken, and runs out after `ttlMs`).
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<Object<'a>>,
}

/// The lock is held by someone else.
#[napi(object)]
pub struct Held {
    /// Always `false`.
    #[napi(ts_type = "false")]
    pub acquired: bool,
    /// The holder's remaining lease, ms (a release may free it sooner).
    pub retry_after_ms: f64,
}

/// `inspect()`: the lock is held.
#[napi(object)]
pub struct Locked {
    /// Always `true`.
    #[napi(ts_type = "true")]
    pub held: bool,
    /// The holder's fence.
    pub fence: f64,
    /// The holder's remaining lease, ms.
    pub ttl_ms: f64,
}

/// `inspect()`: the lock is free.
#[napi(object)]
pub struct Free {
    /// Always `false`.
    #[napi(ts_type = "false")]
    pub held: bool,
    /// The last fence issued (0 if none is remembered).
    pub fence: f64,
    /// Always 0.
    #[napi(ts_type = "0")]
    pub ttl_ms: f64,
}

/// The keys of one resource's lock.
#[napi(object)]
pub struct LockKeys {
    /// `"<fence>:<token>"` with the lease as its TTL.
    pub lock: String,
    /// The last fence issued.
    pub fence: String,
}

/// Locks under one namespace, keyed per call by resource.
#[napi]
pub struct Locks {
    inner: Lib,
    gate: Gate,
}

#[napi]
impl Locks {
    /// Locks whose keys live under `options.namespace`.
    #[napi(constructor)]
    pub fn new(env: &Env, client: &Client, options: LocksOptions) -> napi::Result<Self> {
        let (conn, gate) = Gate::open(client).map_err(|e| errors::sync(env, e))?;
        let keyspace = Keyspace::new(options.namespace).map_err(|e| errors::sync(env, e))?;
        Ok(Locks {
            inner: Lib::new(conn, keyspace),
            gate,
        })
    }

    /// Takes `resource` for `ttlMs` (up to 7 days), or answers who holds it. Rejects only for
    /// errors; `OutcomeUnknownError.retrySafe` is true when you gave a `token`.
    #[napi]
    pub fn acquire(
        &self,
        env: &Env,
        resource: String,
        ttl_ms: f64,
        options: Option<AcquireOptions<'_>>,
    ) -> napi::Result<Promise<Either<LockGuard, Held>>> {
        let (token, wait, signal) = match options {
            Some(o) => (o.token, o.wait_ms, o.signal),
            None => (None, None, None),
        };
        let call = Call::abortable(&self.gate, signal.as_ref(), token.is_some());
        let (locks, gate) = (self.inner.clone(), self.gate.clone());
        let fut = move || async move {
            let ttl = duration("ttlMs", ttl_ms)?;
            let acquired = match (token, wait) {
                (Some(_), Some(_)) => {
                    return Err(bad("acquire takes a token or waitMs, not both"));
                }
                (Some(t), None) => {
                    locks
                        .acquire_with_token(&resource, &lease::token(t)?, ttl)
                        .await?
                }
                (None, Some(w)) => {
                    let wait = duration("waitMs", w)?;
                    locks.acquire_timeout(&resource, ttl, wait).await?
                }
                (None, None) => locks.acquire(&resource, ttl).await?,
            };
            acquire_out(acquired, gate)
        };
        spawn(env, call, fut)
    }

    /// Releases `resource` if `token` holds it with the lease `fence`: `release()` by parts.
    #[napi]
    pub fn release(
        &self,
        env: &Env,
        resource: String,
        token: String,
        fence: f64,
    ) -> napi::Result<Promise<Either<lease::Released, lease::Lost>>> {
        let locks = self.inner.clone();
        let fut = move || async move {
            let (token, fence) = (lease::token(token)?, lease::fence(fence)?);
            lease::released(locks.release(&resource, &token, fence).await?)
        };
        spawn(env, Call::on(&self.gate), fut)
    }

    /// Sets the lease `fence` of `token` on `resource` to end `ttlMs` from the server's now:
    /// `extend()` by parts.
    #[napi]
    pub fn extend(
        &self,
        env: &Env,
        resource: String,
        token: String,
        fence: f64,
        ttl_ms: f64,
    ) -> napi::Result<Promise<Either<lease::Extended, lease::Lost>>> {
        let locks = self.inner.clone();
        let fut = move || async move {
            let (token, fence) = (lease::token(token)?, lease::fence(fence)?);
            let ttl = duration("ttlMs", ttl_ms)?;
            lease::extended(locks.extend(&resource, &token, fence, ttl).await?)
        };
        spawn(env, Call::on(&self.gate), fut)
    }

    /// Reads the lock's state without changing it (may run on a replica).
    #[napi]
    pub fn inspect(
        &self,
        env: &Env,
        resource: String,
    ) -> napi::Result<Promise<Either<Locked, Free>>> {
        use crate::value::Resolve;
        let locks = self.inner.clone();
        let fut = move || async move {
            Ok(match locks.inspect(&resource).await? {
                LockState::Locked { fence, ttl } => Js(Locked {
                    held: true,
                    fence: fence.0 as f64,
                    ttl_ms: ms(ttl),
                })
                .resolve(),
                LockState::Free { last_fence } => Js(Free {
                    held: false,
                    fence: last_fence.0 as f64,
                    ttl_ms: 0.0,
                })
                .resolve(),
                other => return Err(errors::unknown_outcome(&other)),
            })
        };
        spawn(env, Call::on(&self.gate), fut)
    }

    /// The keys of `resource`'s lock.
    #[napi]
    pub fn keys(&self, env: &Env, resource: String) -> napi::Result<LockKeys> {
        let k = self
            .inner
            .keys(&resource)
            .map_err(|e| errors::sync(env, e))?;
        Ok(LockKeys {
            lock: k.lock,
            fence: k.fence,
        })
    }
}

fn acquire_out(a: Acquire, gate: Gate) -> Result<Out, Error> {
    use crate::value::Resolve;
    Ok(match a {
        Acquire::Acquired(guard) => Js(LockGuard::new(guard, gate)).resolve(),
        Acquire::Held { retry_after } => Js(Held {
            acquired: false,
            retry_after_ms: ms(retry_after),
        })
        .resolve(),
        other => return Err(errors::unknown_outcome(&other)),
    })
}

/// A held lock: pass `fence` to every write it protects, then `release()` it. Dropping it does
/// nothing (the lease runs out).
#[napi]
pub struct LockGuard {
    slot: Arc<Slot<LibGuard>>,
    resource: String,
}

impl LockGuard {
    fn new(guard: LibGuard, gate: Gate) -> Self {
        let resource = guard.resource().to_string();
        LockGuard {
            slot: Slot::new(guard, gate, "LockGuard", "release()"),
            resource,
        }
    }
}

#[napi]
impl LockGuard {
    /// Always `true` (the refusal says `false`).
    #[napi(getter, ts_return_type = "true")]
    pub fn acquired(&self) -> bool {
        true
    }

    /// The locked resource.
    #[napi(getter)]
    pub fn resource(&self) -> String {
        self.resource.clone()
    }

    /// The lease's fence: strictly greater than every earlier one of this resource.
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

    /// Releases the lock if this lease still holds it; consumes the handle (a second end rejects
    /// with `HandleEndedError`). After an unknown outcome, `Locks.release` by parts.
    #[napi]
    pub fn release(
        &self,
        env: &Env,
    ) -> napi::Result<Promise<Either<lease::Released, lease::Lost>>> {
        let slot = self.slot.clone();
        let ended = slot.end();
        let fut = move || async move {
            ended?;
            let guard = slot.take().await?;
            Ok(lease::released(guard.release().await?)?)
        };
        spawn_failing(env, Call::on(&self.slot.gate), fut)
    }

    /// Renews the lease in the background until `release()` or `unwatch()`; returns the
    /// `AbortSignal` that fires (with a `LeaseLostError`) if the lease is lost.
    #[napi(ts_return_type = "AbortSignal")]
    pub fn watch<'e>(
        &self,
        env: &'e Env,
        options: Option<WatchOptions>,
    ) -> napi::Result<Object<'e>> {
        lease::watch(env, &self.slot, options)
    }

    /// Stops the renewals; the handle is held (unwatched) again.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn unwatch(&self, env: &Env) -> napi::Result<Promise<()>> {
        lease::unwatch(env, &self.slot)
    }
}
