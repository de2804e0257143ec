//! `ScriptSet`: a folder of your own Lua scripts, checked against their headers and called by
//! name on the library's one call path (`EVALSHA` or `FCALL`, `NOSCRIPT` recovery, the header's
//! retry class, the slot check) — the library's `ScriptSet`.
//!
//! Arguments are strings, `Buffer`s or integers; the reply is `{ status, fields }`, the status
//! word the header declares and the items after it as JavaScript values (see
//! [`crate::convert::reply`]).

use crate::call::{spawn, Call};
use crate::client::Client;
use crate::convert::{int, reply, too_deep};
use crate::errors::{self, bad};
use crate::value::{self, Promise};
use napi::bindgen_prelude::{Buffer, Either3, Object, ToNapiValue, Unknown};
use napi::Env;
use napi_derive::napi;
use redis_atomic::client::Arg;
use redis_atomic::script::{DynScript, RawReply, RetryClass, ScriptSet as Lib};
use redis_atomic::Error;

/// A script's reply: its status word and the items after it.
#[napi(object)]
pub struct ScriptReply<'a> {
    /// The status word (one the header declares).
    pub status: String,
    /// The items after it.
    pub fields: Vec<Unknown<'a>>,
}

/// Options of one script call.
#[napi(object)]
pub struct ScriptCallOptions<'a> {
    /// The keys (all in one hash slot).
    pub keys: Option<Vec<String>>,
    /// The arguments: strings, `Buffer`s or integers.
    pub args: Option<Vec<Either3<String, Buffer, f64>>>,
    /// Abandons the wait (the script may still have run).
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<Object<'a>>,
}

/// A library's identity.
#[napi(object)]
pub struct LibraryInfo {
    /// `NAME_v<N>`.
    pub name: String,
    /// `N`, from the folder's `library.version`.
    pub version: f64,
}

/// The scripts of one folder, composed into one Function library.
#[napi]
pub struct ScriptSet {
    inner: Lib,
}

#[napi]
impl ScriptSet {
    /// Loads and checks every script of `dir` as library `library`. Throws `BadArgumentError`
    /// naming the file for a script whose header does not check. Load once, at start-up: the
    /// definitions live as long as the process.
    // Writable: index.js wraps it like every method (factories are read-only by default).
    #[napi(factory, writable = true, configurable = true)]
    pub fn load_dir(env: &Env, dir: String, library: String) -> napi::Result<Self> {
        let inner = Lib::load_dir(&dir, &library)
            .map_err(|e| errors::sync(env, bad(format!("script folder {dir}: {e}"))))?;
        Ok(ScriptSet { inner })
    }

    /// The scripts' names, sorted.
    #[napi(getter)]
    pub fn names(&self) -> Vec<String> {
        self.inner
            .scripts()
            .iter()
            .map(|s| s.name.to_string())
            .collect()
    }

    /// The Function library the scripts compose.
    #[napi(getter)]
    pub fn library(&self) -> LibraryInfo {
        let l = self.inner.library();
        LibraryInfo {
            name: l.name.to_string(),
            version: f64::from(l.version),
        }
    }

    /// Runs script `name` with `keys` and `args` through `client`. Rejects with
    /// `OutcomeUnknownError` whose `retrySafe` is the header's `retry: safe`.
    #[napi]
    pub fn call<'env>(
        &self,
        env: &'env Env,
        client: &Client,
        name: String,
        options: Option<ScriptCallOptions<'env>>,
    ) -> napi::Result<Promise<ScriptReply<'env>>> {
        let (keys, args, signal) = match options {
            Some(o) => (
                o.keys.unwrap_or_default(),
                o.args.unwrap_or_default(),
                o.signal,
            ),
            None => (Vec::new(), Vec::new(), None),
        };
        let script = self.inner.get(&name);
        let retry_safe = script.is_some_and(|s| s.retry == RetryClass::Safe);
        let args = args.iter().map(arg).collect::<Result<Vec<_>, _>>();
        let call = Call::abortable(&client.gate, signal.as_ref(), retry_safe);
        let client = client.inner.clone();
        let fut = move || async move {
            let script = script.ok_or_else(|| bad(format!("no script named {name:?}")))?;
            Ok(value::with(to_js, run(&client, script, keys, args?).await?))
        };
        spawn(env, call, fut)
    }

    /// Loads every script (and, with `delivery: 'functions'`, the library) on the server(s)
    /// now rather than on first use.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn preload(&self, env: &Env, client: &Client) -> napi::Result<Promise<()>> {
        let defs = self.inner.defs();
        let call = Call::on(&client.gate);
        let lib = client.inner.clone();
        let fut = move || async move { lib.load(&defs).await };
        spawn(env, call, fut)
    }
}

/// A reply as `{ status, fields }` (on the JavaScript thread).
fn to_js(env: &Env, raw: RawReply) -> napi::Result<Unknown<'_>> {
    let fields = raw
        .fields
        .into_iter()
        .map(|v| reply(env, v))
        .collect::<napi::Result<Vec<_>>>()?;
    let reply = ScriptReply {
        status: raw.status,
        fields,
    };
    reply.into_unknown(env)
}

/// One argument as bytes (integers in decimal).
enum Owned {
    Bytes(Vec<u8>),
    Int(i64),
}

fn arg(a: &Either3<String, Buffer, f64>) -> Result<Owned, Error> {
    Ok(match a {
        Either3::A(s) => Owned::Bytes(s.as_bytes().to_vec()),
        Either3::B(b) => Owned::Bytes(b.to_vec()),
        Either3::C(n) => Owned::Int(int("a numeric script argument", *n)?),
    })
}

async fn run(
    client: &redis_atomic::Client,
    script: &'static DynScript<RawReply>,
    keys: Vec<String>,
    args: Vec<Owned>,
) -> Result<RawReply, Error> {
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    let args: Vec<Arg<'_>> = args
        .iter()
        .map(|a| match a {
            Owned::Bytes(b) => Arg::Bytes(b),
            Owned::Int(n) => Arg::Int(*n),
        })
        .collect();
    let raw = client.call(script, &keys, &args).await?;
    if raw.fields.iter().any(too_deep) {
        return Err(Error::BadReply {
            script: script.def.name,
            detail: "a reply nested too deep to convert".into(),
        });
    }
    Ok(raw)
}
