//! The library's errors as the package's JavaScript error classes.
//!
//! The classes are plain JavaScript (`errors.js`: `RedisAtomicError` and one subclass per
//! [`redis_atomic::Error`] variant, each with a stable `code`), so `instanceof` works across the
//! package and users can subclass nothing native. The package's `index.js` hands this module a
//! factory once per JavaScript thread ([`install`]); a failed call then rejects with the very
//! instance the factory built. Its `code` and what a retry would do (`nothingRan`, `transient`,
//! `timedOut`, `retrySafe`) are the library error's own facts (`redis_atomic::Error::code()`,
//! `nothing_ran()`, ...), copied, never recomputed: one rule for every face. Only an abort (the
//! caller's `AbortSignal`, which the library never sees) and a misused handle are the package's
//! own errors.
//!
//! Every conversion here runs on the JavaScript thread (a promise's settle callback, or a
//! synchronous method), the only thread where JavaScript values may be made.

use napi::bindgen_prelude::{
    FnArgs, Function, JsObjectValue, Object, ObjectRef, ToNapiValue, Unknown,
};
use napi::{Env, JsValue, Status};
use napi_derive::napi;
use redis_atomic::Error as LibError;
use std::cell::RefCell;

thread_local! {
    /// `{ createError, watchSignal }` from `index.js`, per JavaScript thread (main or worker).
    static HOOKS: RefCell<Option<ObjectRef<false>>> = const { RefCell::new(None) };
}

/// Keeps the package's hooks for this JavaScript thread (called once by `index.js`).
pub(crate) fn install(hooks: &Object) -> napi::Result<()> {
    let reference = hooks.create_ref::<false>()?;
    HOOKS.with(|h| *h.borrow_mut() = Some(reference));
    Ok(())
}

/// A hook function by name, if `index.js` installed the hooks on this thread.
pub(crate) fn hook<'env, Args, Ret>(env: &'env Env, name: &str) -> Option<Function<'env, Args, Ret>>
where
    Args: napi::bindgen_prelude::JsValuesTupleIntoVec,
    Ret: napi::bindgen_prelude::FromNapiValue,
{
    let hooks = HOOKS.with(|h| h.borrow().as_ref().map(|r| r.get_value(env)))?;
    hooks.ok()?.get_named_property(name).ok()
}

/// Why a call failed: the library's error, the caller's `AbortSignal`, or a lease handle used
/// after its end verb.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The library's error.
    Library(LibError),
    /// The call's `AbortSignal` fired: `started` says whether the call had been handed to the
    /// runtime (then it may have run, like `OutcomeUnknown`); `resend_safe`, whether resending
    /// it cannot repeat its effect (see `Call::abortable`).
    Aborted { started: bool, resend_safe: bool },
    /// The handle's end verb was already called (`HandleEndedError`): nothing was sent.
    Ended(String),
}

impl From<LibError> for Failure {
    fn from(e: LibError) -> Self {
        Failure::Library(e)
    }
}

/// One error's class code, message and extra properties.
struct Shape {
    code: &'static str,
    message: String,
    props: Vec<(&'static str, Prop)>,
}

enum Prop {
    Bool(bool),
    Num(f64),
    Str(String),
    Nums(Vec<f64>),
}

/// What every error says about a retry, read from the library's error (never recomputed here):
/// the facts `docs/vocabulary.md` names, in camelCase.
fn facts(
    nothing_ran: bool,
    transient: bool,
    timed_out: bool,
    retry_safe: bool,
) -> Vec<(&'static str, Prop)> {
    vec![
        ("nothingRan", Prop::Bool(nothing_ran)),
        ("transient", Prop::Bool(transient)),
        ("timedOut", Prop::Bool(timed_out)),
        ("retrySafe", Prop::Bool(retry_safe)),
    ]
}

/// A library error: its `code()` (the class `errors.js` picks), its facts, and the fields of its
/// variant.
fn shape(error: &LibError) -> Shape {
    use LibError as E;
    let mut props = facts(
        error.nothing_ran(),
        error.is_transient(),
        error.timed_out(),
        error.retry_safe(),
    );
    match error {
        E::Rejected { code, .. } | E::Server { code, .. } => {
            props.push(("serverCode", Prop::Str(code.clone())));
        }
        E::OutcomeUnknown { attempts, .. } => {
            props.push(("attempts", Prop::Num(f64::from(*attempts))));
        }
        E::CostExceedsBurst { cost, burst } => {
            props.push(("cost", Prop::Num(*cost as f64)));
            props.push(("burst", Prop::Num(*burst as f64)));
        }
        E::BadReply { script, .. } => {
            props.push(("script", Prop::Str((*script).to_string())));
        }
        E::CrossSlot { slots } => {
            let slots = slots.iter().map(|&s| f64::from(s)).collect();
            props.push(("slots", Prop::Nums(slots)));
        }
        E::NotReplicated { acked, wanted } => {
            props.push(("acked", Prop::Num(f64::from(*acked))));
            props.push(("wanted", Prop::Num(f64::from(*wanted))));
        }
        _ => {}
    }
    Shape {
        code: error.code(),
        message: error.to_string(),
        props,
    }
}

/// What an abort says: like `OutcomeUnknown` once the call started. The library never sees an
/// abort, so this one error is the package's own: `resend_safe` says whether resending the call
/// cannot repeat its effect (its caller's own key, see `Call::abortable`).
fn aborted(started: bool, resend_safe: bool) -> Shape {
    let message = if started {
        "aborted by its AbortSignal: the call may still have run"
    } else {
        "aborted by its AbortSignal before it was sent: nothing ran"
    };
    let mut props = facts(!started, false, false, resend_safe || !started);
    props.push(("attempts", Prop::Num(if started { 1.0 } else { 0.0 })));
    Shape {
        code: "aborted",
        message: message.into(),
        props,
    }
}

/// The JavaScript error for `failure` (a promise rejects with it). `cause` (an abort's
/// `signal.reason`) is attached when given.
pub(crate) fn value<'env>(
    env: &'env Env,
    failure: Failure,
    cause: Option<Unknown>,
) -> napi::Result<Unknown<'env>> {
    let shape = match &failure {
        Failure::Library(e) => shape(e),
        Failure::Aborted {
            started,
            resend_safe,
        } => aborted(*started, *resend_safe),
        // A misused handle: the client refused it before sending anything.
        Failure::Ended(message) => Shape {
            code: "handle_ended",
            message: message.clone(),
            props: facts(true, false, false, true),
        },
    };
    build(env, &shape, cause).or_else(|_| {
        // No hooks (the addon loaded without `index.js`): a plain error that still names the code.
        let plain = napi::Error::new(
            Status::GenericFailure,
            format!("{}: {}", shape.code, shape.message),
        );
        Ok(env.create_error(plain)?.to_unknown())
    })
}

/// A library error thrown by a synchronous method (constructors, key helpers): a `napi::Error`
/// carrying the JavaScript error, which napi throws as that very object. Nothing was sent.
pub(crate) fn sync(env: &Env, error: LibError) -> napi::Error {
    throw(env, Failure::Library(error))
}

/// The error the package rejects with for a server's error reply `code message`: the library's
/// classification (`Error::from_server_error`), returned, not thrown. Private (the addon's own
/// export, not the package's): the conformance vectors check every error reply through it.
#[napi(js_name = "_classifyServerError", skip_typescript)]
#[allow(dead_code)] // called from JavaScript only
pub fn classify_server_error(
    env: &Env,
    code: String,
    message: String,
) -> napi::Result<Unknown<'_>> {
    value(
        env,
        Failure::Library(LibError::from_server_error(&code, &message)),
        None,
    )
}

/// Any failure, thrown by a synchronous method.
pub(crate) fn throw(env: &Env, failure: Failure) -> napi::Error {
    match value(env, failure, None) {
        Ok(v) => napi::Error::from(v),
        Err(e) => e,
    }
}

/// The `LeaseLostError` a watched lease's `lost` signal fires with: `reason` is `not_held` (the
/// server said this token and fence no longer hold it) or `unconfirmed` (no renewal was confirmed
/// before the proven lease ended).
pub(crate) fn lease_lost<'env>(
    env: &'env Env,
    why: redis_atomic::lease::LeaseLost,
    fence: u64,
) -> napi::Result<Unknown<'env>> {
    use redis_atomic::lease::LeaseLost;
    let (reason, message) = match why {
        LeaseLost::NotHeld => ("not_held", "the lease is no longer held by this token and fence"),
        LeaseLost::Unconfirmed => (
            "unconfirmed",
            "no renewal was confirmed before the proven lease ended (server unreachable or stalled)",
        ),
        _ => ("unconfirmed", "the lease was lost"),
    };
    let mut props = facts(true, false, false, true);
    props.push(("reason", Prop::Str(reason.into())));
    props.push(("fence", Prop::Num(fence as f64)));
    let shape = Shape {
        code: "lease_lost",
        message: format!("{message} (fence {fence}): stop the work it protects"),
        props,
    };
    build(env, &shape, None)
}

/// An outcome variant the library added after this binding was written (its enums are
/// `#[non_exhaustive]`): a `ClientError`, never a guess.
pub(crate) fn unknown_outcome(what: &dyn std::fmt::Debug) -> LibError {
    LibError::Client(format!("an outcome this package does not know: {what:?}"))
}

/// A bad argument found by the binding itself (a fractional cost, an unknown write op).
pub(crate) fn bad(message: impl Into<String>) -> LibError {
    LibError::BadArgument(message.into())
}

fn build<'env>(
    env: &'env Env,
    shape: &Shape,
    cause: Option<Unknown>,
) -> napi::Result<Unknown<'env>> {
    let create: Function<FnArgs<(&str, &str, Object)>, Unknown> = hook(env, "createError")
        .ok_or_else(|| napi::Error::new(Status::GenericFailure, "hooks not installed"))?;
    let mut props = Object::new(env)?;
    for (name, prop) in &shape.props {
        match prop {
            Prop::Bool(b) => props.set(name, *b)?,
            Prop::Num(n) => props.set(name, *n)?,
            Prop::Str(s) => props.set(name, s.as_str())?,
            Prop::Nums(v) => props.set(name, v.clone())?,
        }
    }
    if let Some(cause) = cause {
        props.set("cause", cause)?;
    }
    let value = create.call((shape.code, shape.message.as_str(), props).into())?;
    // `Unknown` from `call` borrows nothing but the env: re-tie it to `env`.
    value.into_unknown(env)
}
