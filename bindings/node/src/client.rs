//! `Client.connect(url, options)`: every URL form and every `ClientConfig` setting, by name.
//!
//! One URL connects to one server (`redis://`, `rediss://`, `redis+unix://`) or to the primary
//! Sentinel names (`redis+sentinel://`, `rediss+sentinel://`); an array of URLs, or
//! `cluster: true`, connects to a Redis Cluster through those seed nodes. The options are
//! [`redis_atomic::ClientConfig`]'s fields in camelCase, durations in milliseconds; a value the
//! library would refuse is refused here with `BadArgumentError` before anything connects.
//!
//! **Closing.** `close()` (and `await using`, through `Symbol.asyncDispose` in `index.js`) shuts
//! the client's [`Gate`]: every primitive and lease handle made from it holds the same gate, and
//! every later call through any of them rejects with `ClientError` at once, sending nothing.
//! Calls in flight finish. The gate is the library client's own closed flag (`Client::close`,
//! for every clone), which also lets go of the connections at once.

use crate::call::{spawn, Call};
use crate::convert::{duration, opt_duration, uint};
use crate::errors;
use crate::value::{Js, Promise};
use napi::bindgen_prelude::{Buffer, Either, Object};
use napi::Env;
use napi_derive::napi;
use redis_atomic::{Batching, ClientConfig, Delivery, Error, RetryPolicy, TlsOptions};

/// A retry policy: attempts in all (the first included), a deadline after which no retry
/// starts, and the full-jitter backoff's base and cap. Unset fields keep the default policy's.
#[napi(object)]
#[derive(Default)]
pub struct RetryOptions {
    /// Attempts in all, the first included (1 = never retry).
    pub max_attempts: Option<f64>,
    /// No retry starts after this many ms since the first attempt.
    pub deadline_ms: Option<f64>,
    /// Backoff base, ms.
    pub base_backoff_ms: Option<f64>,
    /// Backoff cap, ms.
    pub max_backoff_ms: Option<f64>,
}

/// Wait for this many replicas to acknowledge every write (`WAIT`), up to `timeoutMs`.
#[napi(object)]
pub struct ReplicaOptions {
    /// Replicas that must acknowledge.
    pub count: f64,
    /// How long the server waits for them, ms.
    pub timeout_ms: f64,
}

/// TLS for `rediss://` URLs: the CA to trust (default: the system's trust store) and a client
/// certificate for mutual TLS, each as a PEM file path or as PEM text / bytes.
#[napi(object)]
pub struct TlsConfig {
    /// A PEM file of CA certificates.
    pub ca_file: Option<String>,
    /// CA certificates as PEM.
    pub ca: Option<Either<String, Buffer>>,
    /// The client certificate (chain), a PEM file; with `keyFile`.
    pub cert_file: Option<String>,
    /// Its private key, a PEM file.
    pub key_file: Option<String>,
    /// The client certificate (chain) as PEM; with `key`.
    pub cert: Option<Either<String, Buffer>>,
    /// Its private key as PEM.
    pub key: Option<Either<String, Buffer>>,
}

/// How decisions of batchable scripts may leave together (the library's `Batching`); unset
/// fields keep the default's.
#[napi(object)]
#[derive(Default)]
pub struct BatchingOptions {
    /// Calls of one lane (a node, or a slot of a cluster) in flight before a decision waits.
    pub in_flight: Option<f64>,
    /// Most decisions in one batch.
    pub max_decisions: Option<f64>,
    /// Most bytes of keys and arguments in one batch.
    pub max_bytes: Option<f64>,
    /// Fewest waiting decisions that leave as one batch call.
    pub min_batch: Option<f64>,
}

/// What a client's batching did so far (the library's `BatchStats`; zeros with batching off).
#[napi(object)]
pub struct BatchStats {
    /// Decisions of batchable scripts, however they left.
    pub decisions: f64,
    /// Of those, decisions that found a call slot free and went out at once, alone.
    pub alone: f64,
    /// Batch calls sent.
    pub batches: f64,
    /// Decisions that left in those batch calls.
    pub batched: f64,
    /// Decisions that waited and left as separate calls (too few, or too large, to batch).
    pub separate: f64,
}

/// Settings of a client; every one optional.
#[napi(object)]
pub struct ClientOptions<'a> {
    /// Deadline of one request, ms (default 1000); past it the outcome is unknown.
    pub timeout_ms: Option<f64>,
    /// Retries of failed requests that may be retried (default: 4 attempts within 3 s).
    pub retry: Option<RetryOptions>,
    /// Retries under contention (default: 16 attempts within 2 s).
    pub contention: Option<RetryOptions>,
    /// `'eval'` (EVALSHA, default) or `'functions'` (FCALL of the library's Functions); the
    /// library also takes `'evalsha'` for `'eval'` and `'fcall'` for `'functions'`.
    #[napi(ts_type = "'eval' | 'functions' | 'evalsha' | 'fcall'")]
    pub delivery: Option<String>,
    /// Wait for replicas after every write (default: none).
    pub replicas: Option<ReplicaOptions>,
    /// CA and client certificate for `rediss://`.
    pub tls: Option<TlsConfig>,
    /// Never use native commands (`DELIFEQ`, `SET … IFEQ`), always the scripts (default false).
    pub force_lua: Option<bool>,
    /// Pooled connections, 1..=1024 (default 4; one server or the Sentinel-named primary).
    pub pool_size: Option<f64>,
    /// Connect to a Redis Cluster through this URL (implied by an array of URLs).
    pub cluster: Option<bool>,
    /// Let decisions of batchable scripts leave together (default `true`); `false` sends each
    /// as a call of its own, an object tunes it.
    pub batching: Option<Either<bool, BatchingOptions>>,
    /// Abandons connecting (the promise rejects with `AbortedError`).
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<Object<'a>>,
}

/// Whether a client was closed, shared by everything made from it (see the module docs): the
/// library client's own flag (`Client::close` sets it for every clone), read before a call so a
/// closed client neither sends nor ends a handle.
#[derive(Clone)]
pub(crate) struct Gate(redis_atomic::Client);

impl Gate {
    pub(crate) fn is_closed(&self) -> bool {
        self.0.is_closed()
    }

    /// Closes the library's client, every clone: its connections go now.
    fn close(&self) {
        self.0.close();
    }

    /// What a call through a closed client fails with: nothing was sent.
    pub(crate) fn closed_error() -> Error {
        Error::Client("the client is closed (close() was called): nothing was sent".into())
    }

    /// The library's client behind `client`, and its gate, for a primitive being made: a
    /// closed client makes none (`ClientError`).
    pub(crate) fn open(client: &Client) -> Result<(redis_atomic::Client, Gate), Error> {
        match client.gate.is_closed() {
            true => Err(Self::closed_error()),
            false => Ok((client.inner.clone(), client.gate.clone())),
        }
    }
}

/// A connection pool to Redis (one server, a Sentinel-named primary, or a Redis Cluster) that
/// the primitives share. Made by `Client.connect`; cheap to share; `close()` it when done.
#[napi]
pub struct Client {
    pub(crate) inner: redis_atomic::Client,
    pub(crate) gate: Gate,
}

#[napi]
impl Client {
    /// Connects: one URL (`redis://`, `rediss://`, `redis+unix://`, `redis+sentinel://`), or the
    /// seed URLs of a Redis Cluster as an array. Rejects with `ConnectionError`, `TlsError` or
    /// `BadArgumentError`.
    // Writable: index.js wraps it like every method (static methods are read-only by default).
    #[napi(writable = true, configurable = true)]
    pub fn connect<'env>(
        env: &'env Env,
        url: Either<String, Vec<String>>,
        options: Option<ClientOptions<'env>>,
    ) -> napi::Result<Promise<Client>> {
        let options = options.unwrap_or_else(empty);
        let (urls, cluster) = match url {
            Either::A(url) => (vec![url], options.cluster.unwrap_or(false)),
            Either::B(urls) => (urls, true),
        };
        let config = config(&options);
        let fut = move || async move {
            let config = config?;
            if urls.is_empty() {
                return Err(errors::bad("connect needs at least one URL"));
            }
            let inner = if cluster {
                redis_atomic::Client::connect_cluster(&urls, config).await?
            } else {
                redis_atomic::Client::connect(&urls[0], config).await?
            };
            Ok(Js(Client {
                gate: Gate(inner.clone()),
                inner,
            }))
        };
        spawn(env, Call::connect(options.signal.as_ref()), fut)
    }

    /// Closes the client: every later call through it, its primitives or their handles rejects
    /// with `ClientError` and sends nothing (calls in flight finish). Closing twice is fine.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close(&self, env: &Env) -> napi::Result<Promise<()>> {
        self.gate.close();
        spawn(env, Call::connect(None), || async { Ok(()) })
    }

    /// Whether `close()` was called.
    #[napi(getter)]
    pub fn closed(&self) -> bool {
        self.gate.is_closed()
    }

    /// What this client's batching did so far (zeros with `batching: false`).
    #[napi]
    pub fn batch_stats(&self) -> BatchStats {
        let s = self.inner.batch_stats();
        BatchStats {
            decisions: s.decisions as f64,
            alone: s.alone as f64,
            batches: s.batches as f64,
            batched: s.batched as f64,
            separate: s.separate as f64,
        }
    }

    /// Whether this client talks to a Redis Cluster.
    #[napi(getter)]
    pub fn is_cluster(&self) -> bool {
        self.inner.is_cluster()
    }

    /// The per-request timeout, ms.
    #[napi(getter)]
    pub fn timeout_ms(&self) -> f64 {
        crate::convert::ms(self.inner.config().timeout)
    }
}

fn empty<'a>() -> ClientOptions<'a> {
    ClientOptions {
        timeout_ms: None,
        retry: None,
        contention: None,
        delivery: None,
        replicas: None,
        tls: None,
        force_lua: None,
        pool_size: None,
        cluster: None,
        batching: None,
        signal: None,
    }
}

/// The library's configuration for `o`.
fn config(o: &ClientOptions) -> Result<ClientConfig, Error> {
    let mut c = ClientConfig::default();
    if let Some(t) = o.timeout_ms {
        c = c.timeout(duration("timeoutMs", t)?);
    }
    if let Some(r) = &o.retry {
        c = c.retry(policy("retry", RetryPolicy::default(), r)?);
    }
    if let Some(r) = &o.contention {
        c = c.contention(policy("contention", RetryPolicy::contention(), r)?);
    }
    if let Some(d) = &o.delivery {
        c = c.delivery(d.parse::<Delivery>()?);
    }
    if let Some(b) = &o.batching {
        c = c.batching(batching(b)?);
    }
    if let Some(r) = &o.replicas {
        let count = u32::try_from(uint("replicas.count", r.count)?)
            .map_err(|_| errors::bad("replicas.count too large"))?;
        c = c.replicas(count, duration("replicas.timeoutMs", r.timeout_ms)?);
    }
    if let Some(t) = &o.tls {
        c = c.tls(tls(t)?);
    }
    if let Some(f) = o.force_lua {
        c = c.force_lua(f);
    }
    if let Some(n) = o.pool_size {
        let n = uint("poolSize", n)?;
        if !(1..=1024).contains(&n) {
            return Err(errors::bad(format!(
                "poolSize must be in 1..=1024, got {n}"
            )));
        }
        c = c.pool_size(n as usize);
    }
    Ok(c)
}

fn policy(what: &str, base: RetryPolicy, o: &RetryOptions) -> Result<RetryPolicy, Error> {
    let mut p = base;
    if let Some(n) = o.max_attempts {
        let n = uint(&format!("{what}.maxAttempts"), n)?;
        match u32::try_from(n) {
            Ok(n) if n >= 1 => p = p.max_attempts(n),
            _ => {
                return Err(errors::bad(format!(
                    "{what}.maxAttempts must be at least 1 (and below 2^32), got {n}"
                )))
            }
        }
    }
    if let Some(d) = opt_duration(&format!("{what}.deadlineMs"), o.deadline_ms)? {
        p = p.deadline(d);
    }
    let base_backoff = opt_duration(&format!("{what}.baseBackoffMs"), o.base_backoff_ms)?;
    let max_backoff = opt_duration(&format!("{what}.maxBackoffMs"), o.max_backoff_ms)?;
    if base_backoff.is_some() || max_backoff.is_some() {
        let (base, cap) = (p.base_backoff, p.max_backoff);
        p = p.backoff(base_backoff.unwrap_or(base), max_backoff.unwrap_or(cap));
    }
    Ok(p)
}

fn batching(b: &Either<bool, BatchingOptions>) -> Result<Batching, Error> {
    let o = match b {
        Either::A(true) => return Ok(Batching::default()),
        Either::A(false) => return Ok(Batching::off()),
        Either::B(o) => o,
    };
    let count = |what: &str, n: Option<f64>| -> Result<Option<usize>, Error> {
        n.map(|n| {
            usize::try_from(uint(what, n)?).map_err(|_| errors::bad(format!("{what} too large")))
        })
        .transpose()
    };
    let d = Batching::default();
    let mut b = d;
    if let Some(n) = count("batching.inFlight", o.in_flight)? {
        b = b.in_flight(n);
    }
    let decisions = count("batching.maxDecisions", o.max_decisions)?;
    let bytes = count("batching.maxBytes", o.max_bytes)?;
    if decisions.is_some() || bytes.is_some() {
        b = b.max(
            decisions.unwrap_or(d.max_decisions),
            bytes.unwrap_or(d.max_bytes),
        );
    }
    if let Some(n) = count("batching.minBatch", o.min_batch)? {
        b = b.min_batch(n);
    }
    Ok(b)
}

fn tls(t: &TlsConfig) -> Result<TlsOptions, Error> {
    let mut o = TlsOptions::new();
    match (&t.ca_file, &t.ca) {
        (Some(_), Some(_)) => return Err(errors::bad("tls: give caFile or ca, not both")),
        (Some(f), None) => o = o.ca_file(f),
        (None, Some(pem)) => o = o.ca_pem(crate::convert::bytes(pem)),
        (None, None) => {}
    }
    match (&t.cert_file, &t.key_file, &t.cert, &t.key) {
        (Some(c), Some(k), None, None) => o = o.client_cert_files(c, k),
        (None, None, Some(c), Some(k)) => {
            o = o.client_cert_pem(crate::convert::bytes(c), crate::convert::bytes(k))
        }
        (None, None, None, None) => {}
        _ => {
            return Err(errors::bad(
                "tls: a client certificate is certFile + keyFile, or cert + key",
            ))
        }
    }
    Ok(o)
}
