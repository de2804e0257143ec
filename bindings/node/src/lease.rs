//! What the four lease handles share (`Lock`, `Permit`, `IdempotencyClaim`, `Job`): one
//! [`Slot`] around the library's handle, the extend and release vocabulary, and the watchdog.
//!
//! A handle is *held* (the library's handle), *watched* (a [`Watched`] renews it and owns it) or
//! *ended*. The end verbs (`release`, `complete`, `fail`, `ack`, `nack`) mark the handle ended
//! synchronously, before anything is sent, so a second end — even one made before the first
//! settled — rejects with `HandleEndedError` and sends nothing; the library's end verb then
//! consumes the handle. After an end that failed (an unknown outcome), repeat it *by parts* with
//! the token and fence the handle still shows.
//!
//! **The watchdog.** `watch()` hands the handle to the library's [`Watched`]: a task on the
//! runtime renews the lease every `renewFraction × ttl` through the handle's own extend and
//! declares it lost `marginFraction × ttl` before the proven lease ends. The loss reaches
//! JavaScript as the `AbortSignal` `watch()` returns, which aborts with a
//! `LeaseLostError`: pass it to the work the lease protects (`fetch(url, { signal })`, a loop that
//! checks `signal.aborted`). `unwatch()` stops the renewals and makes the handle held again; an end
//! verb on a watched handle stops them first. Nothing about a watched lease keeps the event loop
//! alive; a handle that is garbage-collected stops being renewed (its lease runs out, and its
//! signal fires once the proven lease ends).

use crate::call::{notify, spawn_failing, Call};
use crate::client::Gate;
use crate::convert::{duration, ms};
use crate::errors::{self, Failure};
use crate::value::{self, Out, Promise};
use napi::bindgen_prelude::{Either, Function, FunctionRef, JsObjectValue, Object, Unknown};
use napi::Env;
use napi_derive::napi;
use redis_atomic::lease::{
    Extend, Fence, Lease, LeaseLost, OwnerToken, Release, WatchdogConfig, Watched,
};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// How a watched lease is renewed (`watch(options)`).
#[napi(object)]
pub struct WatchOptions {
    /// Renew after this fraction of the lease, in (0, 1) (default 1/3: two renewals may fail
    /// before the lease is in danger).
    pub renew_fraction: Option<f64>,
    /// Declare the lease lost this fraction of the lease before the proven lease ends, in
    /// [0, renewFraction) (default 0.05).
    pub margin_fraction: Option<f64>,
}

/// An extend that took: the lease now ends `ttlMs` from the server's now.
#[napi(object)]
pub struct Extended {
    /// Always `true`.
    #[napi(ts_type = "true")]
    pub extended: bool,
    /// The lease's (unchanged) fence.
    pub fence: f64,
    /// The new remaining lease, ms.
    pub ttl_ms: f64,
}

/// A release that freed the lease.
#[napi(object)]
pub struct Released {
    /// Always `true`.
    #[napi(ts_type = "true")]
    pub released: bool,
    /// The released lease's fence.
    pub fence: f64,
}

/// The lease is no longer this token and fence's (expired and taken over, released, acked, or
/// ended already — a resent end after a lost reply answers this too): nothing changed. One shape
/// for every lease verb (release, extend, ack, nack, a claim's end): `lost` is always `true`, and
/// the field the verb's success sets says `false` too (`released`, `extended`, `acked`, `stored`;
/// a nack's `status` is `'lost'`), so code that tests those keeps working.
#[napi(object)]
pub struct Lost {
    /// Always `true`.
    #[napi(ts_type = "true")]
    pub lost: bool,
    /// `false` (from `release()`).
    #[napi(ts_type = "false")]
    pub released: Option<bool>,
    /// `false` (from `extend()`).
    #[napi(ts_type = "false")]
    pub extended: Option<bool>,
    /// `false` (from `ack()`).
    #[napi(ts_type = "false")]
    pub acked: Option<bool>,
    /// `false` (from a claim's `complete()` / `fail()`).
    #[napi(ts_type = "false")]
    pub stored: Option<bool>,
    /// `'lost'` (from `nack()`).
    #[napi(ts_type = "'lost'")]
    pub status: Option<String>,
}

impl Lost {
    fn new() -> Self {
        Lost {
            lost: true,
            released: None,
            extended: None,
            acked: None,
            stored: None,
            status: None,
        }
    }

    /// The answer of a release that found the lease gone.
    pub(crate) fn release() -> Self {
        Lost {
            released: Some(false),
            ..Self::new()
        }
    }

    /// The answer of an extend that found the lease gone.
    pub(crate) fn extend() -> Self {
        Lost {
            extended: Some(false),
            ..Self::new()
        }
    }

    /// The answer of an ack that found the lease gone.
    pub(crate) fn ack() -> Self {
        Lost {
            acked: Some(false),
            ..Self::new()
        }
    }

    /// The answer of a claim's end that found the claim superseded.
    pub(crate) fn store() -> Self {
        Lost {
            stored: Some(false),
            ..Self::new()
        }
    }

    /// The answer of a nack that found the lease gone.
    pub(crate) fn nack() -> Self {
        Lost {
            status: Some("lost".into()),
            ..Self::new()
        }
    }
}

/// `Extend` as `{ extended, fence, ttlMs }`.
pub(crate) fn extended(e: Extend) -> Result<Out, redis_atomic::Error> {
    use value::{Js, Resolve};
    Ok(match e {
        Extend::Extended { fence, ttl } => Js(Extended {
            extended: true,
            fence: fence.0 as f64,
            ttl_ms: ms(ttl),
        })
        .resolve(),
        Extend::Lost => Js(Lost::extend()).resolve(),
        other => return Err(errors::unknown_outcome(&other)),
    })
}

/// `Release` as `{ released, fence }`.
pub(crate) fn released(r: Release) -> Result<Out, redis_atomic::Error> {
    use value::{Js, Resolve};
    Ok(match r {
        Release::Released { fence } => Js(Released {
            released: true,
            fence: fence.0 as f64,
        })
        .resolve(),
        Release::Lost => Js(Lost::release()).resolve(),
        other => return Err(errors::unknown_outcome(&other)),
    })
}

/// A fence from JavaScript (a positive integer below 2^53).
pub(crate) fn fence(n: f64) -> Result<Fence, redis_atomic::Error> {
    Ok(Fence(crate::convert::uint("fence", n)?))
}

/// An owner token (or worker name) from JavaScript.
pub(crate) fn token(t: String) -> Result<OwnerToken, redis_atomic::Error> {
    OwnerToken::new(t)
}

enum State<L: Lease> {
    Held(L),
    Watched(Watched<L>),
    Ended,
}

/// When the lease surely lasts until, by the local clock, and its length as last set.
#[derive(Clone, Copy)]
struct Clock {
    ttl: Duration,
    expires_by: Instant,
}

/// One handle's state, shared by its JavaScript object and the calls in flight on it.
pub(crate) struct Slot<L: Lease> {
    what: &'static str,
    end_verb: &'static str,
    fence: Fence,
    token: OwnerToken,
    state: tokio::sync::Mutex<State<L>>,
    ended: AtomicBool,
    clock: Mutex<Clock>,
    /// Tells the `lost` notification the watchdog was stopped on purpose (nothing to report).
    stop_lost: Mutex<Option<oneshot::Sender<()>>>,
    /// The client's: once it is closed, the handle's calls are refused.
    pub(crate) gate: Gate,
}

impl<L: Lease + Send + 'static> Slot<L> {
    /// A held handle made through the client behind `gate`; `what` names it in errors (`Lock`),
    /// `end_verb` its end verbs (`release()`).
    pub(crate) fn new(
        lease: L,
        gate: Gate,
        what: &'static str,
        end_verb: &'static str,
    ) -> Arc<Self> {
        Arc::new(Slot {
            gate,
            what,
            end_verb,
            fence: lease.fence(),
            token: lease.token().clone(),
            clock: Mutex::new(Clock {
                ttl: lease.ttl(),
                expires_by: lease.expires_by(),
            }),
            state: tokio::sync::Mutex::new(State::Held(lease)),
            ended: AtomicBool::new(false),
            stop_lost: Mutex::new(None),
        })
    }

    pub(crate) fn fence(&self) -> f64 {
        self.fence.0 as f64
    }

    pub(crate) fn token(&self) -> String {
        self.token.as_str().to_string()
    }

    fn clock(&self) -> Clock {
        *self.clock.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The lease's length as last set (by the take or the last confirmed extend), ms.
    pub(crate) fn ttl_ms(&self) -> f64 {
        ms(self.clock().ttl)
    }

    /// How long the lease surely lasts from now by the local clock, ms (0 once past). A watched
    /// lease's renewals do not show here: its `lost` signal is the truth.
    pub(crate) fn expires_in_ms(&self) -> f64 {
        ms(self
            .clock()
            .expires_by
            .saturating_duration_since(Instant::now()))
    }

    /// Fails once the handle's client is closed.
    fn open(&self) -> Result<(), Failure> {
        match self.gate.is_closed() {
            true => Err(Failure::Library(Gate::closed_error())),
            false => Ok(()),
        }
    }

    pub(crate) fn ended(&self) -> bool {
        self.ended.load(Ordering::Acquire)
    }

    fn ended_error(&self) -> Failure {
        Failure::Ended(format!(
            "this {} has ended: {} consumes the handle, and nothing was sent now (to repeat an \
             end whose outcome is unknown, call it by parts with the token and fence)",
            self.what, self.end_verb
        ))
    }

    /// Sets the lease to end `ttl` from the server's now (not while watched: the watchdog
    /// extends it).
    pub(crate) async fn extend(self: Arc<Self>, ttl: Duration) -> Result<Extend, Failure> {
        let mut state = self.state.lock().await;
        match &mut *state {
            State::Held(lease) => {
                let outcome = lease.extend(ttl).await?;
                let mut clock = self.clock.lock().unwrap_or_else(|p| p.into_inner());
                clock.ttl = lease.ttl();
                clock.expires_by = lease.expires_by();
                Ok(outcome)
            }
            State::Watched(_) => Err(Failure::Library(errors::bad(format!(
                "this {} is watched: its watchdog extends it (unwatch() first)",
                self.what
            )))),
            State::Ended => Err(self.ended_error()),
        }
    }

    /// Marks the handle ended before its end verb is sent: a second end fails here (and any,
    /// without ending the handle, once its client is closed).
    pub(crate) fn end(&self) -> Result<(), Failure> {
        self.open()?;
        match self.ended.swap(true, Ordering::AcqRel) {
            true => Err(self.ended_error()),
            false => Ok(()),
        }
    }

    /// After [`Slot::end`]: the library's handle, the watchdog stopped first, to end it with
    /// its own verb.
    pub(crate) async fn take(self: Arc<Self>) -> Result<L, Failure> {
        let state = std::mem::replace(&mut *self.state.lock().await, State::Ended);
        match state {
            State::Held(lease) => Ok(lease),
            State::Watched(watched) => {
                self.stop_notifying();
                Ok(watched.stop().await?)
            }
            State::Ended => Err(self.ended_error()),
        }
    }

    /// Hands the lease to a watchdog; returns the future that resolves when it is lost (never,
    /// once the watchdog is stopped on purpose). Synchronous: fails while another call holds the
    /// handle (an extend in flight).
    pub(crate) fn watch(
        &self,
        options: Option<WatchOptions>,
    ) -> Result<impl std::future::Future<Output = Option<LeaseLost>> + Send + 'static, Failure>
    {
        self.open()?;
        if self.ended() {
            return Err(self.ended_error());
        }
        let mut state = self.state.try_lock().map_err(|_| {
            Failure::Library(errors::bad(format!(
                "this {} is busy (an extend is in flight): watch it once that settles",
                self.what
            )))
        })?;
        let lease = match std::mem::replace(&mut *state, State::Ended) {
            State::Held(lease) => lease,
            watched @ State::Watched(_) => {
                *state = watched;
                return Err(Failure::Library(errors::bad(format!(
                    "this {} is watched already",
                    self.what
                ))));
            }
            State::Ended => return Err(self.ended_error()),
        };
        let mut config = WatchdogConfig::default();
        if let Some(o) = options {
            if let Some(f) = o.renew_fraction {
                config = config.renew_fraction(f);
            }
            if let Some(f) = o.margin_fraction {
                config = config.margin_fraction(f);
            }
        }
        let _runtime = crate::runtime::handle().enter();
        let watched = match Watched::with_config(lease, config) {
            Ok(w) => w,
            Err(e) => {
                // The library consumed the handle: only the by-parts calls reach the lease now.
                self.ended.store(true, Ordering::Release);
                return Err(Failure::Library(errors::bad(format!(
                    "{e} (the {} handle has ended: release its lease by parts with its token \
                     and fence, or let it run out)",
                    self.what
                ))));
            }
        };
        let lost = watched.lost();
        *state = State::Watched(watched);
        let (stop, stopped) = oneshot::channel();
        *self.stop_lost.lock().unwrap_or_else(|p| p.into_inner()) = Some(stop);
        Ok(async move {
            let mut lost = std::pin::pin!(lost);
            tokio::select! {
                why = &mut lost => Some(why),
                stopped = stopped => match stopped {
                    Ok(()) => None,
                    // The handle was dropped without a stop: the renewals stopped with it, so
                    // the loss comes once the proven lease ends.
                    Err(_) => Some(lost.await),
                },
            }
        })
    }

    /// Stops the watchdog and makes the handle held again.
    pub(crate) async fn unwatch(self: Arc<Self>) -> Result<(), Failure> {
        let mut state = self.state.lock().await;
        match std::mem::replace(&mut *state, State::Ended) {
            State::Watched(watched) => {
                self.stop_notifying();
                *state = State::Held(watched.stop().await?);
                Ok(())
            }
            held @ State::Held(_) => {
                *state = held;
                Ok(())
            }
            State::Ended => Err(self.ended_error()),
        }
    }

    fn stop_notifying(&self) {
        if let Some(stop) = self
            .stop_lost
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            let _ = stop.send(());
        }
    }
}

/// `extend(ttlMs)` of a handle class: the lease set to end `ttlMs` from the server's now
/// (absolute, never added).
pub(crate) fn extend<L: Lease + Send + 'static>(
    env: &Env,
    slot: &Arc<Slot<L>>,
    ttl_ms: f64,
) -> napi::Result<Promise<Either<Extended, Lost>>> {
    let call = Call::on(&slot.gate);
    let slot = slot.clone();
    let fut = move || async move {
        let ttl = duration("ttlMs", ttl_ms)?;
        Ok(extended(slot.extend(ttl).await?)?)
    };
    spawn_failing(env, call, fut)
}

/// `unwatch()` of a handle class: the renewals stop and the handle is held (unwatched) again.
pub(crate) fn unwatch<L: Lease + Send + 'static>(
    env: &Env,
    slot: &Arc<Slot<L>>,
) -> napi::Result<Promise<()>> {
    let call = Call::on(&slot.gate);
    let slot = slot.clone();
    spawn_failing(env, call, move || slot.unwatch())
}

/// `watch()` of a handle class: starts the watchdog and returns the `AbortSignal` that fires with
/// a `LeaseLostError` when the lease is lost.
pub(crate) fn watch<'e, L: Lease + Send + 'static>(
    env: &'e Env,
    slot: &Arc<Slot<L>>,
    options: Option<WatchOptions>,
) -> napi::Result<Object<'e>> {
    let lost = slot.watch(options).map_err(|f| errors::throw(env, f))?;
    let make: Function<(), Object> = errors::hook(env, "lostSignal")
        .ok_or_else(|| napi::Error::from_reason("redis-atomic: hooks not installed"))?;
    let pair = make.call(())?;
    let signal: Object = pair.get_named_property("signal")?;
    let abort: Function<Unknown<'static>, ()> = pair.get_named_property("abort")?;
    let abort: FunctionRef<Unknown<'static>, ()> = abort.create_ref()?;
    let fence = slot.fence.0;
    notify(abort, async move {
        let why = lost.await?;
        Some(value::with(
            |env, (why, fence)| errors::lease_lost(env, why, fence),
            (why, fence),
        ))
    })?;
    Ok(signal)
}
