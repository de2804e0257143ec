//! `RateLimiter`: the library's six algorithms, multi-limit policies and request ids.
//!
//! A refusal is a value, never an exception: `consume` resolves with `{ allowed: true, … }` or
//! `{ allowed: false, retryAfterMs, … }` (a TypeScript discriminated union), each with every
//! limit's status for `RateLimit` headers. Limits are validated by the library's own `Limit` and
//! `Policy` when the limiter is built (a zero limit, a burst on a window algorithm, two limits
//! with one name: `BadArgumentError`, thrown by the constructor).
//!
//! A decision travels as numbers ([`Kind::Verdict`]) and `index.js` builds the object: the
//! shapes below (`Allowed`, `Limited`, `LimitStatus`) are what it builds, declared here so
//! `index.d.ts` states them. The limit names are the policy's, sent to `index.js` once per
//! limiter (`internNames`) and named in each record by number.

use crate::call::{spawn, Call};
use crate::client::{Client, Gate};
use crate::convert::{duration, ms, num, opt_duration, uint};
use crate::errors;
use crate::value::{flag, Kind, Out, Promise};
use napi::bindgen_prelude::{Either, FnArgs, Function, Object};
use napi::Env;
use napi_derive::napi;
use redis_atomic::ratelimit::{
    Algorithm as LibAlgorithm, Decision, Limit, Policy, RateLimiter as Lib, Verdict,
};
use redis_atomic::{Error, Keyspace};

/// A rate-limit algorithm, by the library's name for it: `fixed-window` (a window aligned to
/// the epoch; up to 2 × limit across a boundary), `anchored-window` (opened by an identity's
/// first request; the cheapest), `sliding-log` (exact; memory grows with the limit),
/// `sliding-window` (the counter approximation; constant memory), `token-bucket` and `gcra`
/// (`burst` at once, then one per `period / limit`). `algorithms()` lists the library's own
/// `Algorithm::ALL`; a test checks this type names exactly those.
#[napi(string_enum = "kebab-case")]
pub enum Algorithm {
    FixedWindow,
    AnchoredWindow,
    SlidingLog,
    SlidingWindow,
    TokenBucket,
    Gcra,
}

/// One limit: `limit` units per `periodMs` under `algorithm`, with a `burst` for the bucket
/// algorithms (`token-bucket`, `gcra`; default: the limit) and a `name` (default: the
/// algorithm's; limits of one policy need distinct names).
#[napi(object)]
pub struct LimitSpec {
    /// The algorithm, by its name (the library also takes it in snake_case: `fixed_window`, …).
    #[napi(
        ts_type = "Algorithm | 'fixed_window' | 'anchored_window' | 'sliding_log' | 'sliding_window' | 'token_bucket'"
    )]
    pub algorithm: String,
    /// Units per period.
    pub limit: f64,
    /// The period, ms (1 ms to 366 days, whole µs).
    pub period_ms: f64,
    /// Units admitted at once from idle (bucket algorithms only).
    pub burst: Option<f64>,
    /// 1..=64 bytes of `[A-Za-z0-9_.-]`.
    pub name: Option<String>,
}

/// A rate limiter's settings.
#[napi(object)]
pub struct RateLimiterOptions {
    /// Every key starts with `namespace:` (no `:`, `{` or `}` in it).
    pub namespace: String,
    /// One or more limits, decided together (all or nothing).
    pub limits: Vec<LimitSpec>,
    /// How long request ids are remembered, ms (default: the longest period, at most 24 h).
    pub request_ttl_ms: Option<f64>,
}

/// Options of one consume.
#[napi(object)]
pub struct ConsumeOptions<'a> {
    /// Units charged (default 1).
    pub cost: Option<f64>,
    /// Makes the consume retry-safe: the same id within the request TTL gets the first
    /// admission's answer back and is charged once.
    pub request_id: Option<String>,
    /// Abandons the wait (the promise rejects with `AbortedError`; the consume may have run).
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<Object<'a>>,
}

/// One limit's state after a decision.
#[napi(object)]
#[allow(dead_code)] // built by index.js (Kind::Verdict)
pub struct LimitStatus {
    /// The limit's name.
    pub name: String,
    /// Units this limit would still admit now.
    pub remaining: f64,
    /// Until this limit is back to full capacity, ms.
    pub reset_after_ms: f64,
    /// Until this limit alone would admit the request, ms (0 when it would now).
    pub retry_after_ms: f64,
}

/// An admitted request: charged to every limit.
#[napi(object)]
#[allow(dead_code)] // built by index.js (Kind::Verdict)
pub struct Allowed {
    /// Always `true`.
    #[napi(ts_type = "true")]
    pub allowed: bool,
    /// Units still available now (the smallest over the limits).
    pub remaining: f64,
    /// Until every limit is back to full capacity, ms.
    pub reset_after_ms: f64,
    /// The recorded answer of an earlier consume with the same request id (nothing charged now).
    pub replayed: bool,
    /// Each limit's status, in the policy's order.
    pub limits: Vec<LimitStatus>,
}

/// A refused request: charged to no limit.
#[napi(object)]
#[allow(dead_code)] // built by index.js (Kind::Verdict)
pub struct Limited {
    /// Always `false`.
    #[napi(ts_type = "false")]
    pub allowed: bool,
    /// The earliest time the same request would be admitted, ms.
    pub retry_after_ms: f64,
    /// Until every limit is back to full capacity, ms.
    pub reset_after_ms: f64,
    /// Always `false` (refusals are not recorded).
    pub replayed: bool,
    /// Each limit's status, in the policy's order.
    pub limits: Vec<LimitStatus>,
}

/// The keys one consume uses.
#[napi(object)]
pub struct RateLimitKeys {
    /// Each limit's state key, in the policy's order.
    pub limits: Vec<String>,
    /// The request id's record (only with a request id).
    pub request: Option<String>,
}

/// The names of every algorithm, in the library's order.
#[napi(ts_return_type = "Algorithm[]")]
#[allow(dead_code)] // called from JavaScript only
pub fn algorithms() -> Vec<String> {
    LibAlgorithm::ALL
        .iter()
        .map(|a| a.name().to_string())
        .collect()
}

/// Rate limits under one namespace: one policy applied per identity (user, API key, IP).
#[napi]
pub struct RateLimiter {
    inner: Lib,
    /// The policy's limit names, as `index.js` knows them (`internNames`).
    names: f64,
    gate: Gate,
}

#[napi]
impl RateLimiter {
    /// A limiter applying `options.limits` to every identity. Throws `BadArgumentError` for a
    /// limit the library refuses.
    #[napi(constructor)]
    pub fn new(env: &Env, client: &Client, options: RateLimiterOptions) -> napi::Result<Self> {
        let (conn, gate) = Gate::open(client).map_err(|e| errors::sync(env, e))?;
        let inner = build(conn, options).map_err(|e| errors::sync(env, e))?;
        let names = intern_names(env, &inner)?;
        Ok(RateLimiter { inner, names, gate })
    }

    /// Charges `cost` units (default 1) to every limit of `key`'s policy, or to none. Resolves
    /// with the decision; rejects only for errors (`OutcomeUnknownError` with `retrySafe` true
    /// exactly when a `requestId` was given).
    #[napi]
    pub fn consume<'env>(
        &self,
        env: &'env Env,
        key: String,
        options: Option<ConsumeOptions<'env>>,
    ) -> napi::Result<Promise<Either<Allowed, Limited>>> {
        let (cost, request_id, signal) = match options {
            Some(o) => (o.cost, o.request_id, o.signal),
            None => (None, None, None),
        };
        let call = Call::abortable(&self.gate, signal.as_ref(), request_id.is_some());
        let limiter = self.inner.clone();
        let names = self.names;
        let fut = move || async move {
            let cost = uint("cost", cost.unwrap_or(1.0))?;
            let verdict = limiter
                .consume_detailed(&key, cost, request_id.as_deref())
                .await?;
            record(verdict, names)
        };
        spawn(env, call, fut)
    }

    /// The keys a consume for `identity` (with `requestId`) uses.
    #[napi]
    pub fn keys(
        &self,
        env: &Env,
        identity: String,
        request_id: Option<String>,
    ) -> napi::Result<RateLimitKeys> {
        let keys = self
            .inner
            .keys(&identity, request_id.as_deref())
            .map_err(|e| errors::sync(env, e))?;
        Ok(RateLimitKeys {
            limits: keys.limits,
            request: keys.request,
        })
    }

    /// The limits as the library normalised them (names, bursts, periods to the µs).
    #[napi(getter)]
    pub fn limits(&self) -> Vec<LimitSpec> {
        self.inner
            .policy()
            .limits()
            .iter()
            .map(|l| LimitSpec {
                algorithm: l.algorithm().name().to_string(),
                limit: num(l.limit()),
                period_ms: ms(l.period()),
                burst: Some(num(l.burst())),
                name: Some(l.name().to_string()),
            })
            .collect()
    }

    /// How long request ids are remembered, ms.
    #[napi(getter)]
    pub fn request_ttl_ms(&self) -> f64 {
        ms(self.inner.request_ttl())
    }
}

fn build(conn: redis_atomic::Client, o: RateLimiterOptions) -> Result<Lib, Error> {
    let limits = o.limits.iter().map(limit).collect::<Result<Vec<_>, _>>()?;
    let policy = Policy::new(limits)?;
    let mut inner = Lib::new(conn, Keyspace::new(o.namespace)?, policy);
    if let Some(ttl) = opt_duration("requestTtlMs", o.request_ttl_ms)? {
        inner = inner.with_request_ttl(ttl)?;
    }
    Ok(inner)
}

/// `internNames(names)` of `index.js`: the number it knows the policy's limit names by.
fn intern_names(env: &Env, limiter: &Lib) -> napi::Result<f64> {
    let names: Vec<String> = limiter
        .policy()
        .limits()
        .iter()
        .map(|l| l.name().to_string())
        .collect();
    let intern: Function<FnArgs<(Vec<String>,)>, f64> = errors::hook(env, "internNames")
        .ok_or_else(|| napi::Error::from_reason("redis-atomic: hooks not installed"))?;
    intern.call((names,).into())
}

fn limit(s: &LimitSpec) -> Result<Limit, Error> {
    let algorithm: LibAlgorithm = s.algorithm.parse()?;
    let mut l = Limit::new(
        algorithm,
        uint("limit", s.limit)?,
        duration("periodMs", s.period_ms)?,
    )?;
    if let Some(b) = s.burst {
        l = l.with_burst(uint("burst", b)?)?;
    }
    if let Some(n) = &s.name {
        l = l.named(n)?;
    }
    Ok(l)
}

/// A decision as the numbers `index.js` decodes (`decoders[Kind.Verdict]`): allowed, remaining,
/// resetAfterMs, replayed, retryAfterMs, the names' number, the limit count, then per limit
/// remaining, resetAfterMs and retryAfterMs.
fn record(v: Verdict, names: f64) -> Result<Out, Error> {
    let mut n = Vec::with_capacity(7 + 3 * v.limits.len());
    let replayed = flag(v.replayed);
    match v.decision {
        Decision::Allowed {
            remaining,
            reset_after,
        } => n.extend([1.0, num(remaining), ms(reset_after), replayed, 0.0]),
        Decision::Limited {
            retry_after,
            reset_after,
        } => n.extend([0.0, 0.0, ms(reset_after), replayed, ms(retry_after)]),
        other => return Err(errors::unknown_outcome(&other)),
    }
    n.extend([names, v.limits.len() as f64]);
    for s in &v.limits {
        n.extend([num(s.remaining), ms(s.reset_after), ms(s.retry_after)]);
    }
    Ok(Out::Record(Kind::Verdict, n))
}
