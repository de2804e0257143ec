//! The one path from a library future to a JavaScript `Promise`, with `AbortSignal` support.
//!
//! Every asynchronous method goes through [`spawn`]: the future runs on napi-rs's tokio runtime
//! (one per process, built on first use, shared by every `Client`, worker threads included), and
//! its result is converted on the JavaScript thread when the promise settles ([`crate::bridge`]):
//! a value by the method's own conversion, an error into the package's error classes
//! ([`crate::errors`]).
//!
//! **Cancellation.** A call given `signal` (an `AbortSignal`) rejects with `AbortedError` as soon
//! as the signal fires; the library future is dropped at its next await point. A request already
//! written to a connection is not recalled: an aborted call **may still have run**, exactly like
//! `OutcomeUnknown` (`AbortedError` is a subclass of `OutcomeUnknownError`; resend with the same
//! request id to learn the outcome). A signal that had already fired when the call was made
//! rejects at once with `nothingRan: true`. `index.js` keeps one listener per signal that fans out
//! to the calls in flight on it, removed when the last settles: one long-lived signal (a shutdown
//! signal) can serve any number of calls.

use crate::bridge::{self, Settled, ToJs};
use crate::errors::{self, Failure};
use napi::bindgen_prelude::{
    FnArgs, Function, FunctionRef, JsObjectValue, Object, PromiseRaw, ToNapiValue, Unknown,
};
use napi::{Env, JsValue};
use std::future::Future;
use std::sync::Mutex;
use tokio::sync::oneshot;

/// What a call needs besides its future: whether resending it cannot repeat its effect (for
/// `OutcomeUnknownError.retrySafe`) and its `AbortSignal`, if any.
pub(crate) struct Call<'a, 'env> {
    pub retry_safe: bool,
    pub signal: Option<&'a Object<'env>>,
}

impl<'a, 'env> Call<'a, 'env> {
    /// A call whose resend cannot repeat its effect.
    pub fn safe(signal: Option<&'a Object<'env>>) -> Self {
        Call {
            retry_safe: true,
            signal,
        }
    }

    /// A call whose resend may repeat its effect (an add without a request id).
    pub fn unsafe_to_resend(signal: Option<&'a Object<'env>>) -> Self {
        Call {
            retry_safe: false,
            signal,
        }
    }
}

/// How a spawned call ended.
enum Ended<T> {
    Done(Result<T, redis_atomic::Error>),
    Aborted { started: bool },
}

/// Runs `fut` on the runtime; the promise resolves with its value or rejects with the error's
/// class.
pub(crate) fn spawn<'env, V, M, F>(
    env: &'env Env,
    call: Call<'_, 'env>,
    make: M,
) -> napi::Result<PromiseRaw<'env, V>>
where
    V: ToNapiValue + Send + 'static,
    M: FnOnce() -> F + Send + 'static,
    F: Future<Output = Result<V, redis_atomic::Error>> + Send + 'static,
{
    spawn_with(env, call, make, |env, value: V| value.into_unknown(env))
}

/// [`spawn`] for a value that needs the JavaScript thread to convert (`to_js`); the promise is
/// typed as resolving with `R`, what `to_js` makes.
///
/// The call is `make`, a closure that builds its future on the runtime: a library future is
/// kilobytes (its largest state), and built here it would be copied on the JavaScript thread;
/// boxed there, the parked job is a few words.
pub(crate) fn spawn_with<'env, R, T, M, F>(
    env: &'env Env,
    call: Call<'_, 'env>,
    make: M,
    to_js: ToJs<T>,
) -> napi::Result<PromiseRaw<'env, R>>
where
    T: Send + 'static,
    M: FnOnce() -> F + Send + 'static,
    F: Future<Output = Result<T, redis_atomic::Error>> + Send + 'static,
{
    let retry_safe = call.retry_safe;
    let (fired, unwatch) = match call.signal {
        Some(signal) => {
            let w = Watch::start(env, signal)?;
            (Some((w.fired, w.already)), Some(w.unwatch))
        }
        None => (None, None),
    };
    let (id, inbox, promise) = bridge::defer(env)?;
    let job = Box::pin(async move {
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
            Ended::Done(Ok(value)) => Ok(bridge::convert(to_js, value)),
            Ended::Done(Err(e)) => Err(Failure::Library(e)),
            Ended::Aborted { started } => Err(Failure::Aborted { started }),
        };
        let settled = Settled {
            id,
            outcome,
            retry_safe,
            unwatch,
        };
        bridge::send(&inbox, settled);
    });
    bridge::submit(env, job)?;
    Ok(PromiseRaw::new(env.raw(), promise.raw()))
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
