//! How calls reach the runtime and their outcomes reach their promises: per JavaScript thread,
//! in batches, with the promises made by `index.js`.
//!
//! Why not napi-rs's own `async fn` / `spawn_future` bridge: it makes a Node-API thread-safe
//! function (a libuv handle, opened and closed) per promise, hands every call to the runtime on
//! its own and builds each result through Node-API, so each decision costs several thread
//! switches and dozens of Node-API calls — more than the Redis round trip. Here:
//!
//! * **The promise is JavaScript's.** `index.js` wraps every method: before the native call it
//!   writes the next free *slot* into the thread's shared control array (`ctl[0]`); a method that
//!   starts a call takes it (`ctl[1] = 1`, [`take_slot`]) and returns `undefined`, and the
//!   wrapper returns a promise filed under that slot. No call back into JavaScript per call.
//! * **Out, in batches.** The call's future is parked in this thread's batch ([`submit`]); the
//!   first call of a batch sets `ctl[2]`, and the wrapper schedules `flush` with `setImmediate`,
//!   i.e. once the current turn of the event loop (every completion it delivered, every call
//!   those made) is over. The batch goes to the runtime as one task that drives all its futures,
//!   so their requests reach the connection together (and the client can send them together).
//! * **Back, through one inbox.** Each JavaScript thread (main or worker) has an [`Inbox`]: a
//!   list and one thread-safe function (unreferenced) that wakes the thread when the list stops
//!   being empty — once the runtime has no other work left ([`send`]), so the responses of one
//!   round trip come back in one wake-up. The thread takes every outcome that arrived and writes
//!   each as a record of numbers into the shared record array (`rec`: slot, kind, length,
//!   numbers — [`crate::value`]); values that need Node-API are converted and put in one
//!   `values` array. One call of `index.js`'s `settle(end, values)` then decodes every record,
//!   builds each result with an object literal and resolves (or rejects) its promise.
//! * **Targets without a promise.** An outcome can go to a JavaScript function instead of a
//!   slot ([`Target::Call`]): a watched lease's loss reaches its `AbortController` this way.
//!
//! `index.js` keeps the event loop alive while any promise is pending (a referenced timer), as a
//! per-promise handle would.

use crate::errors::{self, Failure};
use crate::shared::Shared;
use crate::value::{Kind, Out};
use futures::stream::{FuturesUnordered, StreamExt};
use napi::bindgen_prelude::{
    Array, Float64Array, FnArgs, Function, FunctionRef, JsObjectValue, Object, ToNapiValue, Unknown,
};
use napi::threadsafe_function::{
    ThreadsafeCallContext, ThreadsafeFunction, ThreadsafeFunctionCallMode,
};
use napi::{Env, JsValue, Status};
use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

/// Where an outcome goes.
pub(crate) enum Target {
    /// The promise `index.js` filed under this slot.
    Slot(f64),
    /// A function called with the value (an error value for a failure); no promise.
    Call(FunctionRef<Unknown<'static>, ()>),
}

/// What a finished call sends to its JavaScript thread.
pub(crate) struct Settled {
    pub target: Target,
    /// The value, or why it failed.
    pub outcome: Result<Out, Failure>,
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

/// The longest record written to `rec` (longer ones go as values).
const RECORD_MAX: usize = 256;

struct Bridge {
    inbox: Arc<Inbox>,
    batch: Vec<Job>,
    shared: Shared,
}

thread_local! {
    static BRIDGE: RefCell<Option<Bridge>> = const { RefCell::new(None) };
}

/// Creates this JavaScript thread's bridge (called once by `index.js`, through `__init`, with
/// `ctl` and `rec`, its shared arrays, and `noop`, the wake-up target).
pub(crate) fn install(hooks: &Object) -> napi::Result<()> {
    let ctl: Float64Array = hooks.get_named_property("ctl")?;
    let rec: Float64Array = hooks.get_named_property("rec")?;
    let shared = Shared::new(ctl, rec, 4 * (RECORD_MAX + 3))?;
    let target: Function<(), ()> = hooks.get_named_property("noop")?;
    let items: Arc<Mutex<Vec<Settled>>> = Arc::default();
    let arrived = items.clone();
    let wake = target
        .build_threadsafe_function::<()>()
        .callee_handled::<false>()
        .weak::<true>()
        .build_callback(move |ctx: ThreadsafeCallContext<()>| {
            let batch = std::mem::take(&mut *lock(&arrived));
            settle_all(&ctx.env, batch)
        })?;
    let inbox = Arc::new(Inbox { items, wake });
    BRIDGE.with(|b| {
        *b.borrow_mut() = Some(Bridge {
            inbox,
            batch: Vec::new(),
            shared,
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

fn with_bridge<R>(f: impl FnOnce(&mut Bridge) -> R) -> napi::Result<R> {
    BRIDGE
        .with(|b| b.borrow_mut().as_mut().map(f))
        .ok_or_else(not_installed)
}

/// This thread's inbox (outcomes of calls made on it go there).
pub(crate) fn inbox() -> napi::Result<Arc<Inbox>> {
    with_bridge(|b| b.inbox.clone())
}

/// Takes the slot `index.js` offered for this method call: the wrapper files a promise under it
/// and returns that. Take it last, once nothing can fail any more.
pub(crate) fn take_slot() -> napi::Result<f64> {
    with_bridge(|b| b.shared.take_slot())
}

/// Parks `job` in this thread's batch; the first of a batch asks `index.js` for a flush.
pub(crate) fn submit(job: Job) -> napi::Result<()> {
    with_bridge(|b| {
        b.batch.push(job);
        if b.batch.len() == 1 {
            b.shared.want_flush();
        }
    })
}

/// Hands this thread's batch to the runtime as one task (from `index.js`, via `setImmediate`).
pub(crate) fn flush() {
    let jobs = with_bridge(|b| std::mem::take(&mut b.batch)).unwrap_or_default();
    match jobs.len() {
        0 => {}
        1 => crate::runtime::spawn(jobs.into_iter().next().expect("one job")),
        _ => crate::runtime::spawn(async move {
            let mut running: FuturesUnordered<Job> = jobs.into_iter().collect();
            while running.next().await.is_some() {}
        }),
    }
}

/// Delivers `settled` to its JavaScript thread (from a runtime task). The first outcome into an
/// empty inbox wakes the thread, but only once the runtime has run out of other work (tokio's
/// `yield_now` defers the task until its worker would park, or after at most a few dozen task
/// polls): every response that arrived meanwhile goes in the same wake-up, so the JavaScript
/// thread and the runtime's switch once per batch, not once per outcome.
pub(crate) async fn send(inbox: &Inbox, settled: Settled) {
    let first = {
        let mut items = lock(&inbox.items);
        items.push(settled);
        items.len() == 1
    };
    if first {
        tokio::task::yield_now().await;
        // `Closing`: the JavaScript thread is gone (a terminated worker); nobody waits any more.
        let _ = inbox.wake.call((), ThreadsafeFunctionCallMode::NonBlocking);
    }
}

/// `settle(end, values)` of `index.js`.
type SettleFn<'f> = Function<'f, FnArgs<(f64, Unknown<'f>)>, ()>;

/// On the JavaScript thread: records every outcome that arrived and settles them, in as few
/// `settle` calls as `rec` allows.
fn settle_all(env: &Env, batch: Vec<Settled>) -> napi::Result<()> {
    let settle: SettleFn = errors::hook(env, "settle").ok_or_else(not_installed)?;
    let mut w = Writer::new(env)?;
    for s in batch {
        let reason = match s.unwatch {
            Some(unwatch) => unwatch.borrow_back(env)?.call(()).ok(),
            None => None,
        };
        let slot = match s.target {
            Target::Slot(slot) => slot,
            Target::Call(f) => {
                let value = match s.outcome {
                    Ok(out) => js_value(env, out)?,
                    Err(failure) => errors::value(env, failure, reason)?,
                };
                f.borrow_back(env)?.call(value)?;
                continue;
            }
        };
        match s.outcome {
            Ok(Out::Record(kind, nums)) if nums.len() <= RECORD_MAX => w.record(slot, kind, &nums),
            Ok(out) => match js_value(env, out) {
                Ok(v) => w.value(slot, Kind::Value, v)?,
                Err(e) => w.value(slot, Kind::Error, env.create_error(e)?.to_unknown())?,
            },
            Err(failure) => {
                let e = errors::value(env, failure, reason)?;
                w.value(slot, Kind::Error, e)?
            }
        }
        if w.full() {
            w.flush(&settle)?;
        }
    }
    w.flush(&settle)
}

/// Any outcome as a JavaScript value (records decoded here, for the few targets without a slot).
fn js_value(env: &Env, out: Out) -> napi::Result<Unknown<'_>> {
    match out {
        Out::Js(convert) => convert(env),
        Out::Record(Kind::Number, n) => n[0].into_unknown(env),
        Out::Record(Kind::Bool, n) => (n[0] != 0.0).into_unknown(env),
        Out::Record(..) => ().into_unknown(env),
    }
}

/// Writes records into `rec` and values into one `values` array, for one `settle` call.
struct Writer<'e> {
    env: &'e Env,
    at: usize,
    values: Option<Array<'e>>,
    count: u32,
}

impl<'e> Writer<'e> {
    fn new(env: &'e Env) -> napi::Result<Self> {
        Ok(Writer {
            env,
            at: 0,
            values: None,
            count: 0,
        })
    }

    fn record(&mut self, slot: f64, kind: Kind, nums: &[f64]) {
        let header = [slot, f64::from(kind as u8), nums.len() as f64];
        let at = self.at;
        // `full()` before every record keeps room for the longest.
        if let Ok(Some(end)) = with_bridge(|b| b.shared.write(at, header, nums)) {
            self.at = end;
        }
    }

    fn value(&mut self, slot: f64, kind: Kind, value: Unknown) -> napi::Result<()> {
        if self.values.is_none() {
            self.values = Some(self.env.create_array(0)?);
        }
        let values = self.values.as_mut().expect("just made");
        values.set(self.count, value)?;
        self.record(slot, kind, &[f64::from(self.count)]);
        self.count += 1;
        Ok(())
    }

    /// Whether the next record might not fit.
    fn full(&self) -> bool {
        let len = with_bridge(|b| b.shared.rec_len()).unwrap_or(0);
        self.at + 3 + RECORD_MAX > len
    }

    fn flush(&mut self, settle: &SettleFn) -> napi::Result<()> {
        if self.at == 0 {
            return Ok(());
        }
        let values = match self.values.take() {
            Some(v) => v.to_unknown(),
            None => ().into_unknown(self.env)?,
        };
        settle.call((self.at as f64, values).into())?;
        self.at = 0;
        self.count = 0;
        Ok(())
    }
}

fn not_installed() -> napi::Error {
    napi::Error::new(
        Status::GenericFailure,
        "redis-atomic: load the package through its index.js",
    )
}
