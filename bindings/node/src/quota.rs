//! `Quotas`: bounded counters, a TTL set once or extended forward only, a monotonic max, and
//! "ZADD unless smaller" — the library's `Quotas`, by name.
//!
//! A refused add is a value (`{ applied: false, value }`), not an error. `add` with a
//! `requestId` is retry-safe (the first answer is recorded and replayed); without one an
//! `OutcomeUnknownError` says `retrySafe: false`: the add may have happened.

use crate::call::{spawn, Call};
use crate::client::{Client, Gate};
use crate::convert::{bytes, duration, int, opt_duration};
use crate::errors;
use crate::value::{flag, Js, Kind, Out, Promise, Resolve};
use napi::bindgen_prelude::{Buffer, Either, Object};
use napi::Env;
use napi_derive::napi;
use redis_atomic::quota::{Bounded, Bounds, Quotas as Lib, Raise};
use redis_atomic::{Error, Keyspace};

/// Settings of `Quotas`.
#[napi(object)]
pub struct QuotasOptions {
    /// Every key starts with `namespace:`.
    pub namespace: String,
    /// How long a request id's answer is remembered, ms (1 s ..= 1 day; default 1 h).
    pub request_ttl_ms: Option<f64>,
}

/// Options of one add.
#[napi(object)]
pub struct AddOptions<'a> {
    /// Lower bound (default 0).
    pub min: Option<f64>,
    /// Upper bound.
    pub max: f64,
    /// Set when the counter is created, never extended, ms.
    pub ttl_ms: Option<f64>,
    /// Clamp into the bounds instead of refusing (always applied).
    pub clamp: Option<bool>,
    /// Makes the add retry-safe: a repeat of the id returns the first answer and adds nothing.
    pub request_id: Option<String>,
    /// Abandons the wait (the add may still have run).
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<Object<'a>>,
}

/// An add that applied (or, clamped, stopped at a bound).
#[napi(object)]
pub struct Applied {
    /// Always `true`.
    #[napi(ts_type = "true")]
    pub applied: bool,
    /// The counter after the add.
    pub value: f64,
}

/// An add that would have left the bounds: nothing changed.
#[napi(object)]
pub struct Refused {
    /// Always `false`.
    #[napi(ts_type = "false")]
    pub applied: bool,
    /// The counter, unchanged.
    pub value: f64,
}

/// A monotonic max that raised the value to the candidate.
#[napi(object)]
pub struct Raised {
    /// Always `true`.
    #[napi(ts_type = "true")]
    pub raised: bool,
    /// The value now.
    pub value: f64,
}

/// A monotonic max that kept the value: it already was at least the candidate.
#[napi(object)]
pub struct Kept {
    /// Always `false`.
    #[napi(ts_type = "false")]
    pub raised: bool,
    /// The value, unchanged.
    pub value: f64,
}

/// One entry of `addUnlessSmaller`.
#[napi(object)]
pub struct ScoredMember {
    /// An integer score within ±(2^53 − 1).
    pub score: f64,
    /// The member.
    pub member: Either<String, Buffer>,
}

/// The keys of one counter.
#[napi(object)]
pub struct QuotaKeys {
    /// The counter (or sorted set).
    pub value: String,
    /// The request id's record (only with a request id).
    pub request: Option<String>,
}

/// Counters and sorted sets under one namespace.
#[napi]
pub struct Quotas {
    inner: Lib,
    gate: Gate,
}

#[napi]
impl Quotas {
    /// Quotas whose keys live under `options.namespace`.
    #[napi(constructor)]
    pub fn new(env: &Env, client: &Client, options: QuotasOptions) -> napi::Result<Self> {
        let (conn, gate) = Gate::open(client).map_err(|e| errors::sync(env, e))?;
        let build = || -> Result<Lib, Error> {
            let mut q = Lib::new(conn, Keyspace::new(options.namespace)?);
            if let Some(ttl) = opt_duration("requestTtlMs", options.request_ttl_ms)? {
                q = q.with_request_ttl(ttl)?;
            }
            Ok(q)
        };
        let inner = build().map_err(|e| errors::sync(env, e))?;
        Ok(Quotas { inner, gate })
    }

    /// Adds `delta` unless the result would leave `[min, max]` (or clamps, with `clamp`).
    #[napi]
    pub fn add<'env>(
        &self,
        env: &'env Env,
        name: String,
        delta: f64,
        options: AddOptions<'env>,
    ) -> napi::Result<Promise<Either<Applied, Refused>>> {
        let resend_safe = options.request_id.is_some();
        let call = Call::abortable(&self.gate, options.signal.as_ref(), resend_safe);
        let q = self.inner.clone();
        let (min, max, ttl) = (options.min, options.max, options.ttl_ms);
        let (clamp, id) = (options.clamp.unwrap_or(false), options.request_id);
        let fut = move || async move {
            let delta = int("delta", delta)?;
            let bounds = Bounds::new(int("min", min.unwrap_or(0.0))?, int("max", max)?)?;
            let ttl = opt_duration("ttlMs", ttl)?;
            let b = match (clamp, id) {
                (false, None) => q.add(&name, delta, bounds, ttl).await,
                (false, Some(id)) => q.add_with_id(&name, delta, bounds, ttl, &id).await,
                (true, None) => q.add_clamped(&name, delta, bounds, ttl).await,
                (true, Some(id)) => q.add_clamped_with_id(&name, delta, bounds, ttl, &id).await,
            }?;
            let (applied, value) = match b {
                Bounded::Applied { value } => (true, value),
                Bounded::Refused { value } => (false, value),
                other => return Err(errors::unknown_outcome(&other)),
            };
            // `{ applied, value }` (`Applied | Refused`), built by index.js.
            Ok(Out::Record(
                Kind::Applied,
                vec![flag(applied), value as f64],
            ))
        };
        spawn(env, call, fut)
    }

    /// The counter's value (0 when absent).
    #[napi]
    pub fn get(&self, env: &Env, name: String) -> napi::Result<Promise<f64>> {
        let q = self.inner.clone();
        let fut = move || async move { Ok(q.get(&name).await? as f64) };
        spawn(env, Call::on(&self.gate), fut)
    }

    /// Sets the counter's TTL only if it has none: `true` when set.
    #[napi]
    pub fn expire_once(&self, env: &Env, name: String, ttl_ms: f64) -> napi::Result<Promise<bool>> {
        let q = self.inner.clone();
        let fut = move || async move { q.expire_once(&name, duration("ttlMs", ttl_ms)?).await };
        spawn(env, Call::on(&self.gate), fut)
    }

    /// Moves expiry to `ttlMs` from now only if that is later (never shortens): `true` when
    /// moved.
    #[napi]
    pub fn extend_ttl(&self, env: &Env, name: String, ttl_ms: f64) -> napi::Result<Promise<bool>> {
        let q = self.inner.clone();
        let fut = move || async move { q.extend_ttl(&name, duration("ttlMs", ttl_ms)?).await };
        spawn(env, Call::on(&self.gate), fut)
    }

    /// Raises the value to `candidate` unless it already holds at least that.
    #[napi]
    pub fn raise(
        &self,
        env: &Env,
        name: String,
        candidate: f64,
    ) -> napi::Result<Promise<Either<Raised, Kept>>> {
        let q = self.inner.clone();
        let fut = move || async move {
            Ok(match q.raise(&name, int("candidate", candidate)?).await? {
                Raise::Raised { value } => Js(Raised {
                    raised: true,
                    value: value as f64,
                })
                .resolve(),
                Raise::Kept { value } => Js(Kept {
                    raised: false,
                    value: value as f64,
                })
                .resolve(),
                other => return Err(errors::unknown_outcome(&other)),
            })
        };
        spawn(env, Call::on(&self.gate), fut)
    }

    /// Adds members and raises smaller scores, never lowering one (`ZADD GT CH`): how many
    /// were added or raised.
    #[napi]
    pub fn add_unless_smaller(
        &self,
        env: &Env,
        set: String,
        entries: Vec<ScoredMember>,
    ) -> napi::Result<Promise<f64>> {
        let q = self.inner.clone();
        let entries: Vec<(f64, Vec<u8>)> = entries
            .iter()
            .map(|e| (e.score, bytes(&e.member)))
            .collect();
        let fut = move || async move {
            let scored = entries
                .iter()
                .map(|(s, m)| Ok((int("score", *s)?, m.as_slice())))
                .collect::<Result<Vec<_>, Error>>()?;
            Ok(q.add_unless_smaller(&set, &scored).await? as f64)
        };
        spawn(env, Call::on(&self.gate), fut)
    }

    /// The keys of counter `name` (and of `requestId`'s record).
    #[napi]
    pub fn keys(
        &self,
        env: &Env,
        name: String,
        request_id: Option<String>,
    ) -> napi::Result<QuotaKeys> {
        let k = self
            .inner
            .keys(&name, request_id.as_deref())
            .map_err(|e| errors::sync(env, e))?;
        Ok(QuotaKeys {
            value: k.value,
            request: k.request,
        })
    }
}
