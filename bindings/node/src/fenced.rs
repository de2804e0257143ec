//! `FencedWrites`: writes applied only for the newest fence — the library's `FencedWrites`.
//!
//! A write is a plain object naming its operation (`{ op: 'set', key, value }`), turned into the
//! library's typed [`Write`] here; the library checks the batch (count, keys under the
//! resource's `{tag}`) before anything is sent. A stale fence is a value
//! (`{ applied: false, highest }`), not an error.

use crate::call::{spawn, Call};
use crate::client::{Client, Gate};
use crate::convert::{bytes, duration, num, opt_duration, uint};
use crate::errors::{self, bad};
use crate::value::{Js, Promise, Resolve};
use napi::bindgen_prelude::{Buffer, Either};
use napi::Env;
use napi_derive::napi;
use redis_atomic::fenced::{Fenced, FencedWrites as Lib};
use redis_atomic::write::Write;
use redis_atomic::{Error, Fence, Keyspace};
use std::collections::HashMap;

/// Settings of `FencedWrites`.
#[napi(object)]
pub struct FencedWritesOptions {
    /// Every key starts with `namespace:`.
    pub namespace: String,
    /// Keep each fence record this long after its last write, ms (default 7 days).
    pub retention_ms: Option<f64>,
}

/// One write: `op` and the fields it uses — `set`: `value` (and `ttlMs`); `hset`: `fields`;
/// `hdel`: `names`; `sadd` / `srem`: `members`; `del`: nothing else; `expire`: `ttlMs`.
#[napi(object)]
pub struct FencedWrite {
    /// The operation.
    #[napi(ts_type = "'set' | 'hset' | 'hdel' | 'sadd' | 'srem' | 'del' | 'expire'")]
    pub op: String,
    /// The key: it must carry the resource's `{tag}` (see `key()`).
    pub key: String,
    /// `set`: the value.
    pub value: Option<Either<String, Buffer>>,
    /// `set` (optional) and `expire`: the TTL, ms.
    pub ttl_ms: Option<f64>,
    /// `hset`: field → value.
    pub fields: Option<HashMap<String, Either<String, Buffer>>>,
    /// `hdel`: the fields to delete.
    pub names: Option<Vec<String>>,
    /// `sadd` / `srem`: the members.
    pub members: Option<Vec<Either<String, Buffer>>>,
}

/// A fenced write that applied: `fence` is recorded.
#[napi(object)]
pub struct Written {
    /// Always `true`.
    #[napi(ts_type = "true")]
    pub applied: bool,
    /// The fence now recorded.
    pub fence: f64,
    /// Writes applied.
    pub writes: f64,
}

/// A fenced write refused: a larger fence has written; nothing applied.
#[napi(object)]
pub struct Stale {
    /// Always `false`.
    #[napi(ts_type = "false")]
    pub applied: bool,
    /// The highest fence that wrote.
    pub fence: f64,
    /// Always 0.
    #[napi(ts_type = "0")]
    pub writes: f64,
}

/// The keys of one resource's fenced writes.
#[napi(object)]
pub struct FencedKeys {
    /// The highest fence that wrote.
    pub fence: String,
}

/// Fenced writes under one namespace.
#[napi]
pub struct FencedWrites {
    inner: Lib,
    pub(crate) gate: Gate,
}

#[napi]
impl FencedWrites {
    /// Fenced writes whose fence records live under `options.namespace`.
    #[napi(constructor)]
    pub fn new(env: &Env, client: &Client, options: FencedWritesOptions) -> napi::Result<Self> {
        let (conn, gate) = Gate::open(client).map_err(|e| errors::sync(env, e))?;
        let build = || -> Result<Lib, Error> {
            let f = Lib::new(conn, Keyspace::new(options.namespace)?);
            match opt_duration("retentionMs", options.retention_ms)? {
                Some(r) => f.with_retention(r),
                None => Ok(f),
            }
        };
        Ok(FencedWrites {
            inner: build().map_err(|e| errors::sync(env, e))?,
            gate,
        })
    }

    /// Applies `writes` only if `fence` is at least the highest fence that wrote to `resource`,
    /// and records it; all or nothing. Retry-safe.
    #[napi]
    pub fn write(
        &self,
        env: &Env,
        resource: String,
        fence: f64,
        writes: Vec<FencedWrite>,
    ) -> napi::Result<Promise<Either<Written, Stale>>> {
        let f = self.inner.clone();
        let writes: Result<Vec<Write>, Error> = writes.iter().map(write).collect();
        let fut = move || async move {
            let fence = Fence(uint("fence", fence)?);
            Ok(match f.fenced_write(&resource, fence, &writes?).await? {
                Fenced::Applied { fence, writes } => Js(Written {
                    applied: true,
                    fence: num(fence.0),
                    writes: num(writes as u64),
                })
                .resolve(),
                Fenced::Stale { highest } => Js(Stale {
                    applied: false,
                    fence: num(highest.0),
                    writes: 0.0,
                })
                .resolve(),
                other => return Err(errors::unknown_outcome(&other)),
            })
        };
        spawn(env, Call::on(&self.gate), fut)
    }

    /// The highest fence that wrote to `resource` (0 if none is remembered).
    #[napi]
    pub fn highest(&self, env: &Env, resource: String) -> napi::Result<Promise<f64>> {
        let f = self.inner.clone();
        let fut = move || async move { Ok(num(f.highest(&resource).await?.0)) };
        spawn(env, Call::on(&self.gate), fut)
    }

    /// A data key under `resource`'s tag.
    #[napi]
    pub fn key(&self, env: &Env, resource: String, part: String) -> napi::Result<String> {
        self.inner
            .key(&resource, &part)
            .map_err(|e| errors::sync(env, e))
    }

    /// The keys of `resource`'s fenced writes.
    #[napi]
    pub fn keys(&self, env: &Env, resource: String) -> napi::Result<FencedKeys> {
        let k = self
            .inner
            .keys(&resource)
            .map_err(|e| errors::sync(env, e))?;
        Ok(FencedKeys { fence: k.fence })
    }
}

/// The library's write for one spec; a field the op needs and lacks is `BadArgumentError`.
fn write(w: &FencedWrite) -> Result<Write, Error> {
    let need = |what: &str| bad(format!("a `{}` write needs `{what}`", w.op));
    let key = w.key.clone();
    Ok(match w.op.as_str() {
        "set" => {
            let value = bytes(w.value.as_ref().ok_or_else(|| need("value"))?);
            match opt_duration("ttlMs", w.ttl_ms)? {
                Some(ttl) => Write::set_px(key, value, ttl),
                None => Write::set(key, value),
            }
        }
        "hset" => {
            let fields = w.fields.as_ref().ok_or_else(|| need("fields"))?;
            Write::hset(key, fields.iter().map(|(f, v)| (f.clone(), bytes(v))))
        }
        "hdel" => Write::hdel(key, w.names.clone().ok_or_else(|| need("names"))?),
        "sadd" => Write::sadd(key, members(w).ok_or_else(|| need("members"))?),
        "srem" => Write::srem(key, members(w).ok_or_else(|| need("members"))?),
        "del" => Write::del(key),
        "expire" => Write::expire(
            key,
            duration("ttlMs", w.ttl_ms.ok_or_else(|| need("ttlMs"))?)?,
        ),
        other => {
            return Err(bad(format!(
                "unknown write op {other:?} (set, hset, hdel, sadd, srem, del, expire)"
            )))
        }
    })
}

fn members(w: &FencedWrite) -> Option<Vec<Vec<u8>>> {
    w.members.as_ref().map(|m| m.iter().map(bytes).collect())
}
