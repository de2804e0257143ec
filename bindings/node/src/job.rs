//! `Job`: a leased job — the library's `Job` — and the answers of ack and nack.
//!
//! Pass `fence` to every write the job makes, then `ack()` or `nack(retryAfterMs, error)` it
//! (both consume the handle, [`crate::lease`]); `extend` a long job's lease, or `watch()` it.

use crate::call::{spawn_failing, Call};
use crate::client::Gate;
use crate::convert::{duration, ms};
use crate::errors;
use crate::lease::{self, Lost, Slot, WatchOptions};
use crate::value::{Js, Out, Promise, Resolve};
use napi::bindgen_prelude::{Buffer, Either, Either3, Object};
use napi::Env;
use napi_derive::napi;
use redis_atomic::queue::{Ack, Job as LibJob, Nack};
use redis_atomic::Error;
use std::sync::Arc;

/// An ack that completed the job.
#[napi(object)]
pub struct Acked {
    /// Always `true` (`Lost` when this worker and fence no longer hold the job's lease).
    #[napi(ts_type = "true")]
    pub acked: bool,
}

/// A nacked job is due again after `retryAfterMs`.
#[napi(object)]
pub struct Retrying {
    /// Always `'retrying'`.
    #[napi(ts_type = "'retrying'")]
    pub status: String,
    /// The pause before it is due, ms.
    pub retry_after_ms: f64,
}

/// A nacked job was delivered `maxDeliveries` times: it is a dead letter now, with the error.
#[napi(object)]
pub struct Dead {
    /// Always `'dead'`.
    #[napi(ts_type = "'dead'")]
    pub status: String,
}

/// `Ack` for JavaScript.
pub(crate) fn ack(a: Ack) -> Result<Out, Error> {
    Ok(match a {
        Ack::Acked => Js(Acked { acked: true }).resolve(),
        Ack::Lost => Js(Lost::ack()).resolve(),
        other => return Err(errors::unknown_outcome(&other)),
    })
}

/// `Nack` for JavaScript.
pub(crate) fn nack(n: Nack) -> Result<Out, Error> {
    Ok(match n {
        Nack::Retrying { retry_after } => Js(Retrying {
            status: "retrying".into(),
            retry_after_ms: ms(retry_after),
        })
        .resolve(),
        Nack::Dead => Js(Dead {
            status: "dead".into(),
        })
        .resolve(),
        Nack::Lost => Js(Lost::nack()).resolve(),
        other => return Err(errors::unknown_outcome(&other)),
    })
}

/// A leased job. Dropping it does nothing: the lease runs out and the job is claimed again.
#[napi]
pub struct Job {
    slot: Arc<Slot<LibJob>>,
    id: String,
    payload: Vec<u8>,
    deliveries: u32,
    claimed_at_ms: u64,
}

impl Job {
    pub(crate) fn new(job: LibJob, gate: Gate) -> Self {
        Job {
            id: job.id().to_string(),
            payload: job.payload().to_vec(),
            deliveries: job.deliveries(),
            claimed_at_ms: job.claimed_at_ms(),
            slot: Slot::new(job, gate, "Job", "ack() or nack()"),
        }
    }
}

#[napi]
impl Job {
    /// The job id.
    #[napi(getter)]
    pub fn id(&self) -> String {
        self.id.clone()
    }

    /// The payload, byte for byte as enqueued (a new `Buffer` on every read: keep it).
    #[napi(getter)]
    pub fn payload(&self) -> Buffer {
        Buffer::from(self.payload.clone())
    }

    /// This lease's fence: larger than every earlier lease of this job.
    #[napi(getter)]
    pub fn fence(&self) -> f64 {
        self.slot.fence()
    }

    /// The worker the job is leased to (the lease's token).
    #[napi(getter)]
    pub fn worker(&self) -> String {
        self.slot.token()
    }

    /// Deliveries of this job so far, this one included (1 on the first claim).
    #[napi(getter)]
    pub fn deliveries(&self) -> f64 {
        f64::from(self.deliveries)
    }

    /// The server's clock (ms since the epoch) when the lease began.
    #[napi(getter)]
    pub fn claimed_at_ms(&self) -> f64 {
        self.claimed_at_ms as f64
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

    /// Whether `ack()` or `nack()` was called.
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

    /// Completes the job if this is still its lease; consumes the handle. After an unknown
    /// outcome, `Queue.ack` by parts (within the dedup window a repeat answers `acked: true`).
    #[napi]
    pub fn ack(&self, env: &Env) -> napi::Result<Promise<Either<Acked, Lost>>> {
        let slot = self.slot.clone();
        let ended = slot.end();
        let fut = move || async move {
            ended?;
            let job = slot.take().await?;
            Ok(ack(job.ack().await?)?)
        };
        spawn_failing(env, Call::on(&self.slot.gate), fut)
    }

    /// Gives the job back if this is still its lease: due again after `retryAfterMs` (default
    /// 0: at once), or a dead letter with `error` (default empty) once delivered `maxDeliveries`
    /// times; consumes the handle. After an unknown outcome, `Queue.nack` by parts.
    #[napi]
    pub fn nack(
        &self,
        env: &Env,
        retry_after_ms: Option<f64>,
        error: Option<String>,
    ) -> napi::Result<Promise<Either3<Retrying, Dead, Lost>>> {
        let slot = self.slot.clone();
        let pause = duration("retryAfterMs", retry_after_ms.unwrap_or(0.0));
        let error = error.unwrap_or_default();
        let ended = pause.as_ref().map_or(Ok(()), |_| slot.end());
        let fut = move || async move {
            let pause = pause?;
            ended?;
            let job = slot.take().await?;
            Ok(nack(job.nack(pause, &error).await?)?)
        };
        spawn_failing(env, Call::on(&self.slot.gate), fut)
    }

    /// Renews the lease in the background until `ack()`, `nack()` or `unwatch()`; returns the
    /// `AbortSignal` that fires (with a `LeaseLostError`) if the lease is lost.
    #[napi(ts_return_type = "AbortSignal")]
    pub fn watch<'e>(
        &self,
        env: &'e Env,
        options: Option<WatchOptions>,
    ) -> napi::Result<Object<'e>> {
        lease::watch(env, &self.slot, options)
    }

    /// Stops the renewals; the job is held (unwatched) again.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn unwatch(&self, env: &Env) -> napi::Result<Promise<()>> {
        lease::unwatch(env, &self.slot)
    }
}
