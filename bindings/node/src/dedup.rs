//! `Dedup`: the first sighting of an event id wins, for `ttlMs` — the library's `Dedup`.
//!
//! Every call carries a claim token (random unless given): resending with the same token gets the
//! same answer, so a sighting is retry-safe.

use crate::call::{spawn, Call};
use crate::client::{Client, Gate};
use crate::convert::duration;
use crate::errors;
use crate::value::{Js, Promise};
use napi::bindgen_prelude::Object;
use napi::Env;
use napi_derive::napi;
use redis_atomic::dedup::Dedup as Lib;
use redis_atomic::lease::OwnerToken;
use redis_atomic::{Error, Keyspace};

/// Settings of `Dedup`.
#[napi(object)]
pub struct DedupOptions {
    /// Every key starts with `namespace:`.
    pub namespace: String,
}

/// Options of one sighting.
#[napi(object)]
pub struct SightingOptions<'a> {
    /// The claim token (default: a fresh random one). Resend with the same token after an
    /// `OutcomeUnknownError` to get the same answer.
    pub token: Option<String>,
    /// Abandons the wait (the sighting may still have been recorded).
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<Object<'a>>,
}

/// The key of one event id.
#[napi(object)]
pub struct DedupKeys {
    /// Holds the first sighting's claim token, with the TTL.
    pub seen: String,
}

/// Event dedup under one namespace.
#[napi]
pub struct Dedup {
    inner: Lib,
    gate: Gate,
}

#[napi]
impl Dedup {
    /// Dedup whose keys live under `options.namespace`.
    #[napi(constructor)]
    pub fn new(env: &Env, client: &Client, options: DedupOptions) -> napi::Result<Self> {
        let (conn, gate) = Gate::open(client).map_err(|e| errors::sync(env, e))?;
        let keyspace = Keyspace::new(options.namespace).map_err(|e| errors::sync(env, e))?;
        Ok(Dedup {
            inner: Lib::new(conn, keyspace),
            gate,
        })
    }

    /// `true` exactly for the first sighting of `eventId` within `ttlMs` (up to 30 days).
    #[napi]
    pub fn first_seen<'env>(
        &self,
        env: &'env Env,
        event_id: String,
        ttl_ms: f64,
        options: Option<SightingOptions<'env>>,
    ) -> napi::Result<Promise<bool>> {
        let (token, signal) = split(options);
        let d = self.inner.clone();
        let fut = move || async move {
            let ttl = duration("ttlMs", ttl_ms)?;
            d.first_seen_as(&event_id, ttl, &token?).await
        };
        spawn(env, Call::abortable(&self.gate, signal.as_ref(), true), fut)
    }

    /// `firstSeen` for up to 1000 ids at once (one token; not atomic across ids): one answer per
    /// id, in order; an id repeated in the batch is `true` at most once.
    #[napi]
    pub fn first_seen_many<'env>(
        &self,
        env: &'env Env,
        event_ids: Vec<String>,
        ttl_ms: f64,
        options: Option<SightingOptions<'env>>,
    ) -> napi::Result<Promise<Vec<bool>>> {
        let (token, signal) = split(options);
        let d = self.inner.clone();
        let fut = move || async move {
            let ttl = duration("ttlMs", ttl_ms)?;
            let ids: Vec<&str> = event_ids.iter().map(String::as_str).collect();
            Ok(Js(d.first_seen_many_as(&ids, ttl, &token?).await?))
        };
        spawn(env, Call::abortable(&self.gate, signal.as_ref(), true), fut)
    }

    /// The key of `eventId`.
    #[napi]
    pub fn keys(&self, env: &Env, event_id: String) -> napi::Result<DedupKeys> {
        let k = self
            .inner
            .keys(&event_id)
            .map_err(|e| errors::sync(env, e))?;
        Ok(DedupKeys { seen: k.seen })
    }
}

fn split(options: Option<SightingOptions<'_>>) -> (Result<OwnerToken, Error>, Option<Object<'_>>) {
    match options {
        Some(o) => (
            o.token
                .map_or_else(|| Ok(OwnerToken::random()), OwnerToken::new),
            o.signal,
        ),
        None => (Ok(OwnerToken::random()), None),
    }
}
