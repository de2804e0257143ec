//! What a finished call resolves with, and the promise type the methods declare.
//!
//! A call's value reaches JavaScript one of two ways ([`Out`]):
//!
//! * **As numbers** (`Out::Record`): numbers, booleans, `undefined`, and the hot results —
//!   a rate-limit decision, a quota add — are written as a record of `f64`s into the thread's
//!   shared `Float64Array`, and `index.js` builds the object with a literal (`decoders`, keyed
//!   by [`Kind`]). V8 builds a literal with a ready-made hidden class; building the same object
//!   through Node-API is one C++ call and one map transition per property, which cost more than
//!   the Redis round trip itself.
//! * **Through Node-API** (`Out::Js`): everything else (handles, strings, `Buffer`s, nested
//!   replies) is converted on the JavaScript thread by its own conversion.
//!
//! Methods declare `napi::Result<Promise<T>>`: the generated `index.d.ts` says `Promise<T>`
//! (napi-rs's type generator names promise types by their last path segment), while the native
//! method returns `undefined` and `index.js` returns the promise it made for the call
//! ([`crate::bridge`]).

use napi::bindgen_prelude::{ToNapiValue, Unknown};
use napi::sys;
use napi::Env;
use std::marker::PhantomData;

/// The promise `index.js` returns for a call, resolving with a `T` (the TypeScript view; the
/// native method itself returns `undefined`).
pub struct Promise<T>(PhantomData<fn() -> T>);

impl<T> Promise<T> {
    pub(crate) fn pending() -> Self {
        Promise(PhantomData)
    }
}

// `ToNapiValue` is an unsafe trait method; this one only delegates to `()`'s.
#[allow(unsafe_code)]
impl<T> ToNapiValue for Promise<T> {
    unsafe fn to_napi_value(env: sys::napi_env, _: Self) -> napi::Result<sys::napi_value> {
        // SAFETY: called by napi-rs with the env of the running call.
        unsafe { ToNapiValue::to_napi_value(env, ()) }
    }
}

/// A value converted on the JavaScript thread.
pub(crate) type Convert = Box<dyn for<'e> FnOnce(&'e Env) -> napi::Result<Unknown<'e>> + Send>;

/// The decoders of `index.js` (`decoders[kind]`): keep the two lists in step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Kind {
    /// `values[n0]`: a value converted through Node-API.
    Value = 0,
    /// Rejects with `values[n0]`.
    Error = 1,
    /// `undefined`.
    Undefined = 2,
    /// The number `n0`.
    Number = 3,
    /// The boolean `n0 !== 0`.
    Bool = 4,
    /// A rate-limit decision ([`crate::ratelimit`]).
    Verdict = 5,
    /// `{ applied, value }` (a quota add).
    Applied = 6,
}

/// A call's outcome, ready to be handed to its promise.
pub(crate) enum Out {
    /// Numbers `index.js` decodes into a value.
    Record(Kind, Vec<f64>),
    /// A conversion through Node-API.
    Js(Convert),
}

/// A value a call can resolve with.
pub(crate) trait Resolve: Send + 'static {
    fn resolve(self) -> Out;
}

impl Resolve for Out {
    fn resolve(self) -> Out {
        self
    }
}

impl Resolve for f64 {
    fn resolve(self) -> Out {
        Out::Record(Kind::Number, vec![self])
    }
}

impl Resolve for bool {
    fn resolve(self) -> Out {
        Out::Record(Kind::Bool, vec![flag(self)])
    }
}

impl Resolve for () {
    fn resolve(self) -> Out {
        Out::Record(Kind::Undefined, Vec::new())
    }
}

/// A value converted through Node-API by its `ToNapiValue`.
pub(crate) struct Js<T>(pub T);

impl<T: ToNapiValue + Send + 'static> Resolve for Js<T> {
    fn resolve(self) -> Out {
        let value = self.0;
        Out::Js(Box::new(hrtb(move |env| value.into_unknown(env))))
    }
}

/// A value converted by `to_js` on the JavaScript thread.
pub(crate) fn with<T: Send + 'static>(
    to_js: for<'e> fn(&'e Env, T) -> napi::Result<Unknown<'e>>,
    value: T,
) -> Out {
    Out::Js(Box::new(hrtb(move |env| to_js(env, value))))
}

/// Gives a closure the signature [`Convert`] needs (closures infer no higher-ranked lifetimes
/// from a later coercion).
fn hrtb<F>(f: F) -> F
where
    F: for<'e> FnOnce(&'e Env) -> napi::Result<Unknown<'e>>,
{
    f
}

/// A boolean as a record number.
pub(crate) fn flag(b: bool) -> f64 {
    if b {
        1.0
    } else {
        0.0
    }
}
