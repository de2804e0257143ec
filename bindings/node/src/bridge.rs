//! How a finished call reaches its `Promise`: one thread-safe function per JavaScript thread.
//!
//! Why not napi-rs's own `async fn` / `spawn_future` bridge: it creates a Node-API thread-safe
//! function (a libuv async handle, opened and closed) for every promise and hands every call to
//! the runtime on its own, so each decision costs several thread switches — with Node and the
//! runtime sharing one core, more than the Redis round trip. Here:
//!
//! * **Out, in batches.** A call takes an id and a plain JavaScript promise from the `defer`
//!   hook and parks its future in this thread's batch ([`submit`]); the first call of a batch
//!   asks `index.js` to `flush` it with `setImmediate`, i.e. once the current turn of the event
//!   loop (every completion it delivered, every call those made) is over. The batch goes to the
//!   runtime as one task that drives all its futures, so their requests reach the connection
//!   together (and are written together).
//! * **Back, through one inbox.** Each JavaScript thread (main or worker) has an [`Inbox`]: a
//!   list and one thread-safe function (unreferenced) that wakes the thread when the list stops
//!   being empty. Each future, when done, appends its id and outcome ([`Settled`]); the thread,
//!   woken once, takes every outcome that arrived meanwhile, converts each value (or builds the
//!   error, [`crate::errors`]) and hands it to the `settle` hook, which resolves or rejects the
//!   promise; the continuations then run together and their next calls make the next batch.
//!   `index.js` keeps the event loop alive while any promise is pending (a referenced timer,
//!   unreferenced when none is), as a per-promise handle would.

use crate::errors::{self, Failure};
use futures::stream::{FuturesUnordered, StreamExt};
use napi::bindgen_prelude::{FnArgs, Function, FunctionRef, JsObjectValue, Object, Unknown};
use napi::threadsafe_function::{
    ThreadsafeCallContext, ThreadsafeFunction, ThreadsafeFunctionCallMode,
};
use napi::{Env, JsValue, Status};
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

/// A finished value, converted to JavaScript on the JavaScript thread.
pub(crate) type Convert = Box<dyn for<'e> FnOnce(&'e Env) -> napi::Result<Unknown<'e>> + Send>;

/// A conversion of a `T` on the JavaScript thread.
pub(crate) type ToJs<T> = for<'e> fn(&'e Env, T) -> napi::Result<Unknown<'e>>;

/// `value`, to be converted by `to_js` when it reaches the JavaScript thread.
pub(crate) fn convert<T: Send + 'static>(to_js: ToJs<T>, value: T) -> Convert {
    Box::new(hrtb(move |env| to_js(env, value)))
}

/// Gives a closure the signature [`Convert`] needs (closures infer no higher-ranked lifetimes
/// from a later coercion).
fn hrtb<F>(f: F) -> F
where
    F: for<'e> FnOnce(&'e Env) -> napi::Result<Unknown<'e>>,
{
    f
}

/// What a finished call sends to its JavaScript thread.
pub(crate) struct Settled {
    /// The promise's id (from [`defer`]).
    pub id: f64,
    /// The value, or why it failed.
    pub outcome: Result<Convert, Failure>,
    /// For `OutcomeUnknownError.retrySafe`.
    pub retry_safe: bool,
    /// Removes the call's `AbortSignal` listener and gives `signal.reason`.
    pub unwatch: Option<FunctionRef<(), Unknown<'static>>>,
}

/// Finished calls waiting for one JavaScript thread, and what wakes it.
pub(crate) struct Inbox {
    items: Arc<Mutex<Vec<Settled>>>,
    /// Unreferenced (`index.js` keeps the loop alive while calls are pending); unbounded, so a
    /// busy JavaScript thread never blocks the runtime.
    wake: ThreadsafeFunction<(), (), (), Status, false, true, 0>,
}

/// A call's future, parked until its batch is flushed.
pub(crate) type Job = Pin<Box<dyn Future<Output = ()> + Send>>;

struct Bridge {
    inbox: Arc<Inbox>,
    next: Cell<f64>,
    batch: RefCell<Vec<Job>>,
}

thread_local! {
    static BRIDGE: RefCell<Option<Bridge>> = const { RefCell::new(None) };
}

/// Creates this JavaScript thread's inbox (called once by `index.js`, through `__init`).
pub(crate) fn install(hooks: &Object) -> napi::Result<()> {
    let target: Function<(), ()> = hooks.get_named_property("noop")?;
    let items: Arc<Mutex<Vec<Settled>>> = Arc::default();
    let arrived = items.clone();
    let wake = target
        .build_threadsafe_function::<()>()
        .callee_handled::<false>()
        .weak::<true>()
        .build_callback(move |ctx: ThreadsafeCallContext<()>| {
            let batch = std::mem::take(&mut *lock(&arrived));
            settle_all(&ctx.env, batch)?;
            Ok(())
        })?;
    BRIDGE.with(|b| {
        *b.borrow_mut() = Some(Bridge {
            inbox: Arc::new(Inbox { items, wake }),
            next: Cell::new(0.0),
            batch: RefCell::new(Vec::new()),
        })
    });
    Ok(())
}

fn lock(items: &Mutex<Vec<Settled>>) -> std::sync::MutexGuard<'_, Vec<Settled>> {
    // A panic while holding it leaves a list that is still a valid list.
    items
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A new pending promise: its id, the inbox its outcome goes to, and the promise object.
pub(crate) fn defer(env: &Env) -> napi::Result<(f64, Arc<Inbox>, Object<'_>)> {
    let (id, inbox) = BRIDGE
        .with(|b| {
            b.borrow().as_ref().map(|b| {
                let id = b.next.get() + 1.0;
                b.next.set(id);
                (id, b.inbox.clone())
            })
        })
        .ok_or_else(not_installed)?;
    let defer: Function<f64, Object> = errors::hook(env, "defer").ok_or_else(not_installed)?;
    Ok((id, inbox, defer.call(id)?))
}

/// Parks `job` in this thread's batch; the first of a batch schedules its flush.
pub(crate) fn submit(env: &Env, job: Job) -> napi::Result<()> {
    let first = BRIDGE
        .with(|b| {
            b.borrow().as_ref().map(|b| {
                let mut batch = b.batch.borrow_mut();
                batch.push(job);
                batch.len() == 1
            })
        })
        .ok_or_else(not_installed)?;
    if first {
        let schedule: Function<(), ()> = errors::hook(env, "schedule").ok_or_else(not_installed)?;
        schedule.call(())?;
    }
    Ok(())
}

/// Hands this thread's batch to the runtime as one task (from `index.js`, via `setImmediate`).
pub(crate) fn flush() {
    let jobs = BRIDGE.with(|b| {
        b.borrow()
            .as_ref()
            .map(|b| std::mem::take(&mut *b.batch.borrow_mut()))
            .unwrap_or_default()
    });
    if jobs.is_empty() {
        return;
    }
    napi::bindgen_prelude::spawn(async move {
        let mut running: FuturesUnordered<Job> = jobs.into_iter().collect();
        while running.next().await.is_some() {}
    });
}

/// Delivers `settled` to its JavaScript thread (from any thread): the first outcome into an
/// empty inbox wakes the thread.
pub(crate) fn send(inbox: &Inbox, settled: Settled) {
    let first = {
        let mut items = lock(&inbox.items);
        items.push(settled);
        items.len() == 1
    };
    if first {
        // `Closing`: the JavaScript thread is gone (a terminated worker); nobody waits any more.
        let _ = inbox.wake.call((), ThreadsafeFunctionCallMode::NonBlocking);
    }
}

/// On the JavaScript thread: settles every outcome that arrived.
fn settle_all(env: &Env, batch: Vec<Settled>) -> napi::Result<()> {
    let settle: Settle = errors::hook(env, "settle").ok_or_else(not_installed)?;
    for s in batch {
        settle_one(env, &settle, s)?;
    }
    Ok(())
}

/// `settle(id, failed, value)` of `index.js`.
type Settle<'f> = Function<'f, FnArgs<(f64, bool, Unknown<'f>)>, ()>;

/// Converts one outcome and resolves or rejects its promise.
fn settle_one(env: &Env, settle: &Settle, s: Settled) -> napi::Result<()> {
    let reason = match s.unwatch {
        Some(unwatch) => unwatch.borrow_back(env)?.call(()).ok(),
        None => None,
    };
    let (failed, value) = match s.outcome {
        Ok(convert) => match convert(env) {
            Ok(value) => (false, value),
            Err(e) => (true, env.create_error(e)?.to_unknown()),
        },
        Err(failure) => (true, errors::value(env, failure, s.retry_safe, reason)?),
    };
    settle.call((s.id, failed, value).into())
}

fn not_installed() -> napi::Error {
    napi::Error::new(
        Status::GenericFailure,
        "redis-atomic: load the package through its index.js",
    )
}
