//! `Idempotency`: each request's side effect once, however often it is sent — the library's
//! `Idempotency`, and its `Claim` (the class was `IdempotencyClaim`, still exported under that
//! name by `index.js`).
//!
//! `begin(scope, key, request)` resolves with one of four answers, told apart by `status`: a
//! `Claim` handle (`'claimed'`: run the request, then `complete(response)` or
//! `fail(response?)`), `'inProgress'` (another executor holds a live claim: `retryAfterMs`),
//! `'replay'` (the stored response of the finished request) or `'mismatch'` (the key was used
//! with a different request). `request` is what makes two requests "the same": its parts
//! (method, path, body…) are hashed into the library's fingerprint.

use crate::call::{spawn, spawn_failing, Call};
use crate::client::{Client, Gate};
use crate::convert::{bytes, duration, ms, opt_duration, uint};
use crate::errors::{self, bad};
use crate::lease::{self, Slot, WatchOptions};
use crate::response::{self, ResponseInit, StoredResponse};
use crate::value::{Js, Out, Promise, Resolve};
use napi::bindgen_prelude::{Buffer, Either, Either4, Object};
use napi::Env;
use napi_derive::napi;
use redis_atomic::idempotency::{
    Begin, Claim as LibClaim, Failure as LibFailure, Fingerprint, Idempotency as Lib,
    IdempotencyConfig, Outcome, Stored as LibStored,
};
use redis_atomic::{Error, Keyspace};
use std::sync::Arc;

/// Settings of `Idempotency`.
#[napi(object)]
pub struct IdempotencyOptions {
    /// Every key starts with `namespace:`.
    pub namespace: String,
    /// A claim's lease: how long it lives without an extend before a duplicate may take it
    /// over, ms (default 30 s, at most 1 day).
    pub ttl_ms: Option<f64>,
    /// How long a stored response is kept for replay, ms (default 24 h, at most 30 days).
    pub result_ttl_ms: Option<f64>,
    /// Largest encoded response stored, bytes (default 1 MiB); larger ones are refused.
    pub max_response_bytes: Option<f64>,
}

/// Options of one `begin`.
#[napi(object)]
pub struct BeginOptions<'a> {
    /// Your owner token (default: a fresh random one): `begin` again with it while its claim is
    /// live returns the same claim — how to recover a `begin` whose outcome is unknown.
    pub token: Option<String>,
    /// Abandons the call (a claim may still have been made; it runs out after the claim ttl).
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<Object<'a>>,
}

/// Another executor holds a live claim on this key.
#[napi(object)]
pub struct InProgress {
    /// Always `'inProgress'`.
    #[napi(ts_type = "'inProgress'")]
    pub status: String,
    /// Time left on the other executor's lease, ms: try again then.
    pub retry_after_ms: f64,
}

/// The request already finished: answer with this.
#[napi(object)]
pub struct Replay {
    /// Always `'replay'`.
    #[napi(ts_type = "'replay'")]
    pub status: String,
    /// `'completed'` (by `complete`) or `'failed'` (by `fail` with a response).
    #[napi(ts_type = "'completed' | 'failed'")]
    pub outcome: String,
    /// The stored response.
    pub response: StoredResponse,
}

/// The key was used with a different request (its fingerprint differs).
#[napi(object)]
pub struct Mismatch {
    /// Always `'mismatch'`.
    #[napi(ts_type = "'mismatch'")]
    pub status: String,
}

/// A claim's end that took: the response stored (or, for a retryable `fail()`, the key freed).
/// This claim superseded (taken over after its lease ran out, or ended already) is `Lost`
/// (`stored: false`): nothing was written.
#[napi(object)]
pub struct Stored {
    /// Always `true`.
    #[napi(ts_type = "true")]
    pub stored: bool,
}

/// The keys of one idempotency record.
#[napi(object)]
pub struct IdempotencyKeys {
    /// One string: state, fence, owner token, fingerprint, lease end and the stored response.
    pub record: String,
}

/// Idempotency records under one namespace, keyed per call by (scope, key).
#[napi]
pub struct Idempotency {
    inner: Lib,
    pub(crate) gate: Gate,
}

#[napi]
impl Idempotency {
    /// A store under `options.namespace`. Throws `BadArgumentError` for a ttl out of range.
    #[napi(constructor)]
    pub fn new(env: &Env, client: &Client, options: IdempotencyOptions) -> napi::Result<Self> {
        let (conn, gate) = Gate::open(client).map_err(|e| errors::sync(env, e))?;
        let build = || -> Result<Lib, Error> {
            let mut config = IdempotencyConfig::default();
            if let Some(ttl) = opt_duration("ttlMs", options.ttl_ms)? {
                config = config.ttl(ttl);
            }
            if let Some(ttl) = opt_duration("resultTtlMs", options.result_ttl_ms)? {
                config = config.result_ttl(ttl);
            }
            if let Some(n) = options.max_response_bytes {
                let n = usize::try_from(uint("maxResponseBytes", n)?)
                    .map_err(|_| bad("maxResponseBytes too large"))?;
                config = config.max_response_bytes(n);
            }
            let keyspace = Keyspace::new(options.namespace)?;
            Lib::new(conn, keyspace).with_config(config)
        };
        Ok(Idempotency {
            inner: build().map_err(|e| errors::sync(env, e))?,
            gate,
        })
    }

    /// Claims (`scope`, `key`) for `request` (its parts — method, path, body… — are hashed into
    /// the fingerprint): resolves with a claim handle or the answer for a duplicate.
    /// `OutcomeUnknownError.retrySafe` is true when you gave a `token`.
    #[napi]
    pub fn begin(
        &self,
        env: &Env,
        scope: String,
        key: Either<String, Buffer>,
        #[napi(ts_arg_type = "string | Buffer | Array<string | Buffer>")] request: Either<
            Either<String, Buffer>,
            Vec<Either<String, Buffer>>,
        >,
        options: Option<BeginOptions<'_>>,
    ) -> napi::Result<Promise<Either4<Claim, InProgress, Replay, Mismatch>>> {
        let (token, signal) = match options {
            Some(o) => (o.token, o.signal),
            None => (None, None),
        };
        let call = Call::abortable(&self.gate, signal.as_ref(), token.is_some());
        let parts: Vec<Vec<u8>> = match &request {
            Either::A(one) => vec![bytes(one)],
            Either::B(many) => many.iter().map(bytes).collect(),
        };
        let key = bytes(&key);
        let (store, gate) = (self.inner.clone(), self.gate.clone());
        let fut = move || async move {
            let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
            let fp = Fingerprint::of(&refs);
            let begun = match token {
                Some(t) => {
                    let token = lease::token(t)?;
                    store.begin_with_token(&scope, &key, fp, &token).await?
                }
                None => store.begin(&scope, &key, fp).await?,
            };
            begin_out(begun, scope, key, gate)
        };
        spawn(env, call, fut)
    }

    /// Sets the lease of the claim `token` holds on (`scope`, `key`) with `fence` to end `ttlMs`
    /// from the server's now: `extend()` by parts.
    #[napi]
    pub fn extend(
        &self,
        env: &Env,
        scope: String,
        key: Either<String, Buffer>,
        token: String,
        fence: f64,
        ttl_ms: f64,
    ) -> napi::Result<Promise<Either<lease::Extended, lease::Lost>>> {
        let (store, key) = (self.inner.clone(), bytes(&key));
        let fut = move || async move {
            let (token, fence) = (lease::token(token)?, lease::fence(fence)?);
            let ttl = duration("ttlMs", ttl_ms)?;
            lease::extended(store.extend(&scope, &key, &token, fence, ttl).await?)
        };
        spawn(env, Call::on(&self.gate), fut)
    }

    /// Stores `response` as the result of the claim `token` holds with `fence`: `complete()` by
    /// parts. Repeating it is safe (a repeat answers `{ stored: true }` again).
    #[napi]
    pub fn complete(
        &self,
        env: &Env,
        scope: String,
        key: Either<String, Buffer>,
        token: String,
        fence: f64,
        response: ResponseInit,
    ) -> napi::Result<Promise<Either<Stored, lease::Lost>>> {
        let (store, key) = (self.inner.clone(), bytes(&key));
        let response = response::build(response);
        let fut = move || async move {
            let (token, fence) = (lease::token(token)?, lease::fence(fence)?);
            let r = response?;
            stored(store.complete(&scope, &key, &token, fence, &r).await?)
        };
        spawn(env, Call::on(&self.gate), fut)
    }

    /// Ends the claim `token` holds with `fence` with a failure: `fail()` by parts. Without a
    /// response the key is freed (the next attempt runs the request again); with one, it is
    /// stored for replay.
    #[napi]
    pub fn fail(
        &self,
        env: &Env,
        scope: String,
        key: Either<String, Buffer>,
        token: String,
        fence: f64,
        response: Option<ResponseInit>,
    ) -> napi::Result<Promise<Either<Stored, lease::Lost>>> {
        let (store, key) = (self.inner.clone(), bytes(&key));
        let failure = failure(response);
        let fut = move || async move {
            let (token, fence) = (lease::token(token)?, lease::fence(fence)?);
            let f = failure?;
            stored(store.fail(&scope, &key, &token, fence, &f).await?)
        };
        spawn(env, Call::on(&self.gate), fut)
    }

    /// The keys of (`scope`, `key`).
    #[napi]
    pub fn keys(
        &self,
        env: &Env,
        scope: String,
        key: Either<String, Buffer>,
    ) -> napi::Result<IdempotencyKeys> {
        let k = self
            .inner
            .keys(&scope, &bytes(&key))
            .map_err(|e| errors::sync(env, e))?;
        Ok(IdempotencyKeys { record: k.record })
    }
}

fn failure(response: Option<ResponseInit>) -> Result<LibFailure, Error> {
    Ok(match response {
        None => LibFailure::Retryable,
        Some(r) => LibFailure::Final(response::build(r)?),
    })
}

fn stored(o: Outcome) -> Result<Out, Error> {
    Ok(match o {
        Outcome::Stored => Js(Stored { stored: true }).resolve(),
        Outcome::Lost => Js(lease::Lost::store()).resolve(),
        other => return Err(errors::unknown_outcome(&other)),
    })
}

fn begin_out(b: Begin, scope: String, key: Vec<u8>, gate: Gate) -> Result<Out, Error> {
    Ok(match b {
        Begin::Claimed(claim) => Js(Claim::new(claim, scope, key, gate)).resolve(),
        Begin::InProgress { retry_after } => Js(InProgress {
            status: "inProgress".into(),
            retry_after_ms: ms(retry_after),
        })
        .resolve(),
        Begin::Replay(stored) => {
            let (outcome, r) = match stored {
                LibStored::Completed(r) => ("completed", r),
                LibStored::Failed(r) => ("failed", r),
                other => return Err(errors::unknown_outcome(&other)),
            };
            Js(Replay {
                status: "replay".into(),
                outcome: outcome.into(),
                response: response::stored(r),
            })
            .resolve()
        }
        Begin::Mismatch => Js(Mismatch {
            status: "mismatch".into(),
        })
        .resolve(),
        other => return Err(errors::unknown_outcome(&other)),
    })
}

/// A live claim: run the request, then `complete(response)` or `fail(response?)` (both consume
/// the handle). Pass `fence` to the side effect's own store. Dropping it does nothing: the lease
/// runs out and the next duplicate takes the key over.
#[napi]
pub struct Claim {
    slot: Arc<Slot<LibClaim>>,
    takeover: bool,
    scope: String,
    key: Vec<u8>,
}

impl Claim {
    fn new(claim: LibClaim, scope: String, key: Vec<u8>, gate: Gate) -> Self {
        let takeover = claim.is_takeover();
        Claim {
            slot: Slot::new(claim, gate, "Claim", "complete() or fail()"),
            takeover,
            scope,
            key,
        }
    }
}

#[napi]
impl Claim {
    /// Always `'claimed'`.
    #[napi(getter, ts_return_type = "'claimed'")]
    pub fn status(&self) -> String {
        "claimed".into()
    }

    /// The scope of the claimed key.
    #[napi(getter)]
    pub fn scope(&self) -> String {
        self.scope.clone()
    }

    /// The claimed idempotency key.
    #[napi(getter)]
    pub fn key(&self) -> Buffer {
        Buffer::from(self.key.clone())
    }

    /// The claim's fence (its generation): strictly increasing per key.
    #[napi(getter)]
    pub fn fence(&self) -> f64 {
        self.slot.fence()
    }

    /// The owner token (`begin` with it again after an unknown outcome).
    #[napi(getter)]
    pub fn token(&self) -> String {
        self.slot.token()
    }

    /// Whether this claim took over an earlier executor's expired lease.
    #[napi(getter)]
    pub fn takeover(&self) -> bool {
        self.takeover
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

    /// Whether `complete()` or `fail()` was called.
    #[napi(getter)]
    pub fn ended(&self) -> bool {
        self.slot.ended()
    }

    /// Sets the lease to end `ttlMs` from the server's now.
    #[napi]
    pub fn extend(
        &self,
        env: &Env,
        ttl_ms: f64,
    ) -> napi::Result<Promise<Either<lease::Extended, lease::Lost>>> {
        lease::extend(env, &self.slot, ttl_ms)
    }

    /// Stores `response` for replay; consumes the handle. After an unknown outcome,
    /// `Idempotency.complete` by parts.
    #[napi]
    pub fn complete(
        &self,
        env: &Env,
        response: ResponseInit,
    ) -> napi::Result<Promise<Either<Stored, lease::Lost>>> {
        let slot = self.slot.clone();
        // A response that does not build leaves the handle usable.
        let response = response::build(response);
        let ended = response.as_ref().map_or(Ok(()), |_| slot.end());
        let fut = move || async move {
            let response = response?;
            ended?;
            let claim = slot.take().await?;
            Ok(stored(claim.complete(&response).await?)?)
        };
        spawn_failing(env, Call::on(&self.slot.gate), fut)
    }

    /// Ends the claim with a failure; consumes the handle. Without a response the key is freed
    /// (the next attempt runs the request again); with one, duplicates replay it.
    #[napi]
    pub fn fail(
        &self,
        env: &Env,
        response: Option<ResponseInit>,
    ) -> napi::Result<Promise<Either<Stored, lease::Lost>>> {
        let slot = self.slot.clone();
        let failure = failure(response);
        let ended = failure.as_ref().map_or(Ok(()), |_| slot.end());
        let fut = move || async move {
            let failure = failure?;
            ended?;
            let claim = slot.take().await?;
            Ok(stored(claim.fail(&failure).await?)?)
        };
        spawn_failing(env, Call::on(&self.slot.gate), fut)
    }

    /// Renews the lease in the background until `complete()`, `fail()` or `unwatch()`; returns
    /// the `AbortSignal` that fires (with a `LeaseLostError`) if the claim is lost.
    #[napi(ts_return_type = "AbortSignal")]
    pub fn watch<'e>(
        &self,
        env: &'e Env,
        options: Option<WatchOptions>,
    ) -> napi::Result<Object<'e>> {
        lease::watch(env, &self.slot, options)
    }

    /// Stops the renewals; the claim is held (unwatched) again.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn unwatch(&self, env: &Env) -> napi::Result<Promise<()>> {
        lease::unwatch(env, &self.slot)
    }
}
