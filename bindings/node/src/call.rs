//! The one path from a library future to a JavaScript `Promise`, with `AbortSignal` support.
//!
//! Every asynchronous method goes through [`spawn`]: the future runs on the runtime
//! ([`crate::runtime`]: one per process, built on first use, shared by every `Client`, worker
//! threads included), and its outcome reaches the promise `index.js` made for the call
//! ([`crate::bridge`]): a value by the method's own conversion ([`crate::value`]), an error as
//! one of the package's error classes ([`crate::errors`]).
//!
//! **Cancellation.** A call given `signal` (an `AbortSignal`) rejects with `AbortedError` as soon
//! as the signal fires; the library future is dropped at its next await point. A request already
//! written to a connection is not recalled: an aborted call **may still have run**, exactly like
//! `OutcomeUnknown` (`AbortedError` is a subclass of `OutcomeUnknownError`; resend with the same
//! request id, token or claim id to learn the outcome). A signal that had already fired when the
//! call was made rejects at once with `nothingRan: true`. `index.js` keeps one listener per
//! signal that fans out to the calls in flight on it, removed when the last settles: one
//! long-lived signal (a shutdown signal) can serve any number of calls.

use crate::bridge::{self, Settled, Target};
use crate::client::Gate;
use crate::errors::{self, Failure};
use crate::value::{Promise, Resolve};
use napi::bindgen_prelude::{FnArgs, Function, FunctionRef, JsObjectValue, Object, Unknown};
use napi::Env;
use std::future::Future;
use std::sync::Mutex;
use tokio::sync::oneshot;

/// What a call needs besides its future: the client it goes through (a closed client refuses
/// it), its `AbortSignal`, if any, and for an abort whether resending the call is safe.
pub(crate) struct Call<'a, 'env> {
    gate: Option<&'a Gate>,
    signal: Option<&'a Object<'env>>,
    resend_safe: bool,
}

impl<'a, 'env> Call<'a, 'env> {
    /// A call through the client behind `gate`, without an `AbortSignal`.
    pub fn on(gate: &'a Gate) -> Self {
        Call {
            gate: Some(gate),
            signal: None,
            resend_safe: false,
        }
    }

    /// A call through the client behind `gate` that `signal` may abort. `resend_safe`: the call
    /// carries the caller's own key (request id, token, claim id) or runs a script whose header
    /// says `retry: safe`, so an aborted call that may have run can be resent
    /// (`AbortedError.retrySafe`; the library's errors carry their own `retry_safe()`).
    pub fn abortable(gate: &'a Gate, signal: Option<&'a Object<'env>>, resend_safe: bool) -> Self {
        Call {
            gate: Some(gate),
            signal,
            resend_safe,
        }
    }

    /// `Client.connect`: no client yet; an abort before it connected leaves nothing behind.
    pub fn connect(signal: Option<&'a Object<'env>>) -> Self {
        Call {
            gate: None,
            signal,
            resend_safe: true,
        }
    }
}

/// How a spawned call ended.
enum Ended<T, E> {
    Done(Result<T, E>),
    Aborted { started: bool },
}

/// Runs the future `make` builds on the runtime; the call's promise resolves with its value or
/// rejects with the error's class. `R` is what the promise resolves with in TypeScript; `V`
/// converts to it ([`Resolve`]).
///
/// The call is `make`, a closure that builds its future on the runtime: a library future is
/// kilobytes (its largest state), and built here it would be copied on the JavaScript thread;
/// boxed there, the parked job is a few words.
pub(crate) fn spawn<R, V, M, F>(env: &Env, call: Call<'_, '_>, make: M) -> napi::Result<Promise<R>>
where
    V: Resolve,
    M: FnOnce() -> F + Send + 'static,
    F: Future<Output = Result<V, redis_atomic::Error>> + Send + 'static,
{
    start(env, call, make)
}

/// [`spawn`] for a future that fails with a [`Failure`] (a lease handle's calls, which can also
/// fail with `HandleEndedError`).
pub(crate) fn spawn_failing<R, V, M, F>(
    env: &Env,
    call: Call<'_, '_>,
    make: M,
) -> napi::Result<Promise<R>>
where
    V: Resolve,
    M: FnOnce() -> F + Send + 'static,
    F: Future<Output = Result<V, Failure>> + Send + 'static,
{
    start(env, call, make)
}

fn start<R, V, E, M, F>(env: &Env, call: Call<'_, '_>, make: M) -> napi::Result<Promise<R>>
where
    V: Resolve,
    E: Into<Failure> + Send,
    M: FnOnce() -> F + Send + 'static,
    F: Future<Output = Result<V, E>> + Send + 'static,
{
    let resend_safe = call.resend_safe;
    let closed = call.gate.is_some_and(Gate::is_closed);
    let (fired, unwatch) = match call.signal {
        Some(signal) => {
            let w = Watch::start(env, signal)?;
            (Some((w.fired, w.already)), Some(w.unwatch))
        }
        None => (None, None),
    };
    let inbox = bridge::inbox()?;
    let slot = bridge::take_slot()?;
    let job = Box::pin(async move {
        if closed {
            let settled = Settled {
                target: Target::Slot(slot),
                outcome: Err(Failure::Library(Gate::closed_error())),
                unwatch,
            };
            return bridge::send(&inbox, settled).await;
        }
        let fut = Box::pin(make());
        let ended = match fired {
            None => Ended::Done(fut.await),
            Some((_, true)) => Ended::Aborted { started: false },
            Some((receiver, false)) => tokio::select! {
                out = fut => Ended::Done(out),
                () = aborted(receiver) => Ended::Aborted { started: true },
            },
        };
        let outcome = match ended {
            Ended::Done(Ok(value)) => Ok(value.resolve()),
            Ended::Done(Err(e)) => Err(e.into()),
            Ended::Aborted { started } => Err(Failure::Aborted {
                started,
                resend_safe,
            }),
        };
        let settled = Settled {
            target: Target::Slot(slot),
            outcome,
            unwatch,
        };
        bridge::send(&inbox, settled).await;
    });
    bridge::submit(job)?;
    Ok(Promise::pending())
}

/// Runs `fut` on the runtime and calls `target` with its value on this JavaScript thread — no
/// promise, nothing keeps the event loop alive. A future that resolves `None` calls nothing.
pub(crate) fn notify<V, F>(target: FunctionRef<Unknown<'static>, ()>, fut: F) -> napi::Result<()>
where
    V: Resolve,
    F: Future<Output = Option<V>> + Send + 'static,
{
    let inbox = bridge::inbox()?;
    crate::runtime::spawn(async move {
        if let Some(value) = fut.await {
            let settled = Settled {
                target: Target::Call(target),
                outcome: Ok(value.resolve()),
                unwatch: None,
            };
            bridge::send(&inbox, settled).await;
        }
    });
    Ok(())
}

/// Resolves when the signal fires; never when its listener is dropped unfired.
async fn aborted(receiver: oneshot::Receiver<()>) {
    if receiver.await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// `watchSignal(signal, onAbort)` of `index.js`: adds the listener, returns `unwatch`.
type WatchSignal<'f> =
    Function<'f, FnArgs<(&'f Object<'f>, Function<'f, (), ()>)>, Option<Unwatch<'f>>>;
/// `unwatch()`: removes the listener, returns `signal.reason`.
type Unwatch<'f> = Function<'f, (), Unknown<'static>>;

/// A call's watch on its `AbortSignal`: fired by its listener, or `already` fired before the
/// call; `unwatch()` removes the listener and returns `signal.reason`.
struct Watch {
    fired: oneshot::Receiver<()>,
    already: bool,
    unwatch: FunctionRef<(), Unknown<'static>>,
}

impl Watch {
    /// Registers a once-listener on `signal` through the package's `watchSignal` hook.
    fn start(env: &Env, signal: &Object) -> napi::Result<Watch> {
        let already: Option<bool> = signal.get_named_property("aborted")?;
        let (tx, rx) = oneshot::channel::<()>();
        let tx = Mutex::new(Some(tx));
        let listener = env.create_function_from_closure::<(), (), _>("onAbort", move |_| {
            if let Some(tx) = tx.lock().ok().and_then(|mut t| t.take()) {
                let _ = tx.send(());
            }
            Ok(())
        })?;
        let watch: WatchSignal = errors::hook(env, "watchSignal")
            .ok_or_else(|| napi::Error::new(napi::Status::GenericFailure, "hooks not installed"))?;
        let Some(unwatch) = watch.call((signal, listener).into())? else {
            return Err(napi::Error::from_reason("signal must be an AbortSignal"));
        };
        Ok(Watch {
            fired: rx,
            already: already.unwrap_or(false),
            unwatch: unwatch.create_ref()?,
        })
    }
}
