//! The client every primitive runs on: connections, per-call timeout, retry classes, delivery.
//!
//! A [`Client`] is cheap to clone and shared by all primitives. It sends each script as
//! one request (`EVALSHA` or `FCALL`), so one decision is one round trip; it never wraps a script
//! in `MULTI` (measured: a `NOSCRIPT` inside `MULTI` does not abort the transaction, the other
//! commands still apply). What happens when something fails is decided in one place,
//! [`Client::call`]:
//!
//! * every call has a deadline ([`ClientConfig::timeout`]); hitting it is
//!   [`Error::OutcomeUnknown`], and an owned connection that timed out is replaced, not reused;
//! * `NOSCRIPT` (the script cache was flushed or the server restarted) → `SCRIPT LOAD` → retry,
//!   exactly once, because `NOSCRIPT` means the script did not run;
//! * errors that mean nothing ran ([`Error::NotSent`], transient [`Error::Rejected`]) are retried
//!   for every script; an unknown outcome only for scripts whose header says `retry: safe` (or
//!   a call the library itself makes retry-safe, e.g. a rate limit with a request id); all
//!   within [`RetryPolicy`]'s attempts and deadline, with full-jitter backoff, in the one retry
//!   loop;
//! * every operation, script or command, is observed the same way ([`crate::observe`]);
//! * decisions of batchable scripts that queue up for the same node leave together as one call
//!   ([`Batching`], on by default; see the `batch` module): still one reply, one error, one
//!   retry loop and one span per decision.
//!
//! Where it connects: one server (`redis://`, `rediss://` with [`TlsOptions`], `redis+unix://`),
//! the primary Sentinel names (`redis+sentinel://`, [`SentinelConfig`]; asked again after a
//! failover), or a Redis Cluster (redirects followed: `MOVED` by retrying through the refreshed
//! slot map, `ASK` with `ASKING` on the target node).

mod ask;
mod batch;
mod capabilities;
pub mod cluster_nodes;
mod dedicated;
mod durable;
mod invoke;
pub(crate) mod memory;
pub(crate) mod module;
pub(crate) mod native;
mod op;
pub(crate) mod retry;
mod sentinel;
mod source;
mod tls;
mod transport;

pub use batch::{BatchStats, Batching};
pub(crate) use capabilities::probe;
pub use capabilities::{Capabilities, NativeDelete};
pub use dedicated::DedicatedConnection;
pub use invoke::Arg;
pub use module::ModuleInfo;
pub use retry::RetryPolicy;
pub use sentinel::{SentinelConfig, DEFAULT_SENTINEL_PORT};
pub use tls::{Pem, TlsOptions};

use crate::script::Delivery;
use crate::Error;
use sentinel::Resolver;
use std::sync::Arc;
use std::time::Duration;
use transport::{Cluster, Pool, Shared, Transport};

/// A `redis` client for `url` with `tls` applied (CA, client certificate): for raw connections
/// next to a [`Client`] (tools, tests) that must reach the same TLS deployment.
///
/// A Sentinel URL names no single node: it is refused with [`Error::BadArgument`] saying so
/// (use [`Client::connect`], which resolves the primary, or the node's own URL).
pub fn redis_client(url: &str, tls: Option<&TlsOptions>) -> Result<redis::Client, Error> {
    if SentinelConfig::is_sentinel_url(url) {
        return Err(Error::BadArgument(
            "a Sentinel URL names no single node: give the node's redis:// or rediss:// URL \
             (the primary's, to write)"
                .into(),
        ));
    }
    tls::open(url, tls)
}

/// `template`'s settings (credentials, protocol, TLS) for the node at `host:port` — a cluster
/// node or a replica another node named. A non-TCP template (a Unix socket) gives a plain TCP
/// address. (Public for the CLI, which reaches every node of a deployment with it.)
pub fn node_info(template: &redis::ConnectionInfo, host: &str, port: u16) -> redis::ConnectionInfo {
    let addr = match template.addr() {
        redis::ConnectionAddr::TcpTls {
            insecure,
            tls_params,
            ..
        } => redis::ConnectionAddr::TcpTls {
            host: host.to_string(),
            port,
            insecure: *insecure,
            tls_params: tls_params.clone(),
        },
        _ => redis::ConnectionAddr::Tcp(host.to_string(), port),
    };
    template.clone().set_addr(addr)
}

/// Settings of a [`Client`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ClientConfig {
    /// `EVALSHA` (default) or `FCALL`.
    pub delivery: Delivery,
    /// Deadline of one request; past it the outcome is unknown.
    pub timeout: Duration,
    /// Retries of requests that fail but may be retried (refusals, unknown outcomes of
    /// retry-safe calls).
    pub retry: RetryPolicy,
    /// Retries under contention: optimistic transactions that conflicted, waiting for a held
    /// lock ([`RetryPolicy::contention`] by default).
    pub contention: RetryPolicy,
    /// Connections in an owned pool ([`Client::connect`]); why four by default:
    /// docs/performance.md, "Connections".
    pub pool_size: usize,
    /// After every write — scripts that write, multi-key and CAS `EXEC`s, dedup first
    /// sightings — wait for this many replicas to acknowledge it (`WAIT`, pipelined with the
    /// write: still one round trip). None by default.
    pub replicas: Option<Replicas>,
    /// CA and client certificate for `rediss://` (and `rediss+sentinel://`) URLs. None: the
    /// system's trust store, no client certificate.
    pub tls: Option<TlsOptions>,
    /// Never use native commands (`DELIFEQ`, `SET … IFEQ`) even where the server has them: every
    /// operation runs its script ([`Client::capabilities`]). Off by default.
    pub force_lua: bool,
    /// Natural batching of decisions that queue up for the same node ([`Batching`]): on by
    /// default, [`Batching::off`] to send every decision as a call of its own.
    pub batching: Batching,
}

/// `WAIT`-based durability: how many replicas must acknowledge a write, within how long.
///
/// Replication is asynchronous, so a failover can lose a write the primary acknowledged. With
/// this set, a write counts as done only once `count` replicas have it; otherwise the call
/// returns [`Error::NotReplicated`] (the effect stands on the primary). It narrows the window,
/// it does not close it: the replicas that acknowledged can fail too (see `docs/failover.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replicas {
    /// Replicas that must acknowledge.
    pub count: u32,
    /// How long the server waits for them.
    pub timeout: Duration,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            delivery: Delivery::Eval,
            timeout: Duration::from_secs(1),
            retry: RetryPolicy::default(),
            contention: RetryPolicy::contention(),
            pool_size: 4,
            replicas: None,
            tls: None,
            force_lua: false,
            batching: Batching::default(),
        }
    }
}

impl ClientConfig {
    /// With this delivery.
    pub fn delivery(mut self, delivery: Delivery) -> Self {
        self.delivery = delivery;
        self
    }

    /// With this per-request timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// With this retry policy.
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// With this contention policy.
    pub fn contention(mut self, contention: RetryPolicy) -> Self {
        self.contention = contention;
        self
    }

    /// Every write waits for `count` replicas to acknowledge it, up to `timeout` (see
    /// [`Replicas`]).
    pub fn replicas(mut self, count: u32, timeout: Duration) -> Self {
        self.replicas = Some(Replicas { count, timeout });
        self
    }

    /// With these TLS settings (CA, client certificate).
    pub fn tls(mut self, tls: TlsOptions) -> Self {
        self.tls = Some(tls);
        self
    }

    /// Scripts only (`true`), or native commands where the server has them (`false`, default).
    pub fn force_lua(mut self, force: bool) -> Self {
        self.force_lua = force;
        self
    }

    /// With these batching settings ([`Batching::off`] to turn it off).
    pub fn batching(mut self, batching: Batching) -> Self {
        self.batching = batching;
        self
    }

    /// With this many pooled connections (at least 1; [`ClientConfig::check`] refuses more than
    /// [`ClientConfig::MAX_POOL_SIZE`]).
    pub fn pool_size(mut self, size: usize) -> Self {
        self.pool_size = size.max(1);
        self
    }

    /// The most pooled connections one client may open.
    pub const MAX_POOL_SIZE: usize = 1024;

    /// Refuses settings no client can run with, before connecting (every `connect` calls it, so
    /// every face gets the same bounds and words): a pool of `1..=`[`Self::MAX_POOL_SIZE`]
    /// connections, a non-zero timeout.
    pub fn check(&self) -> Result<(), Error> {
        let max = Self::MAX_POOL_SIZE;
        if !(1..=max).contains(&self.pool_size) {
            let n = self.pool_size;
            return Err(Error::BadArgument(format!(
                "pool_size must be in 1..={max}, got {n}"
            )));
        }
        if self.timeout.is_zero() {
            return Err(Error::BadArgument("timeout must be more than 0".into()));
        }
        Ok(())
    }
}

/// A handle on Redis for the primitives. Clone it freely.
#[derive(Clone)]
pub struct Client {
    transport: Arc<dyn Transport>,
    config: Arc<ClientConfig>,
    /// Where [`Client::dedicated`] connections come from (none for caller-supplied connections).
    dedicated: Option<Arc<source::Source>>,
    /// What [`Client::connect`] / [`Client::connect_cluster`] found about `maxmemory-policy`.
    memory: Arc<std::sync::OnceLock<memory::MemoryCheck>>,
    /// What the server offers natively, detected once ([`Client::capabilities`]).
    caps: Arc<capabilities::Cache>,
    /// Lanes and counters of natural batching (one per client configuration).
    batcher: Arc<batch::Batcher>,
    /// Set by [`Client::close`], for every clone.
    closed: Arc<std::sync::atomic::AtomicBool>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("cluster", &self.transport.is_cluster())
            .field("config", &self.config)
            .finish()
    }
}

impl Client {
    /// Connects a pool of [`ClientConfig::pool_size`] multiplexed connections to one server
    /// (`redis://`, `rediss://` with TLS, `redis+unix://`), or to the primary Sentinel names
    /// (`redis+sentinel://`, see [`Client::connect_sentinel`]). Credentials go in the URL; CA
    /// and client certificate in [`ClientConfig::tls`].
    pub async fn connect(url: &str, config: ClientConfig) -> Result<Client, Error> {
        config.check()?;
        if SentinelConfig::is_sentinel_url(url) {
            return Self::connect_sentinel(&SentinelConfig::parse(url)?, config).await;
        }
        let client = tls::open(url, config.tls.as_ref())?;
        let server = client.get_connection_info().addr().to_string();
        Self::connect_resolved(Resolver::Fixed(client), &server, config).await
    }

    /// Connects to the primary that Sentinel names for [`SentinelConfig::service`]. When a
    /// connection to it breaks or it answers `READONLY` (a failover demoted it), Sentinel is
    /// asked again, so the client follows the primary across failovers.
    pub async fn connect_sentinel(
        sentinel: &SentinelConfig,
        config: ClientConfig,
    ) -> Result<Client, Error> {
        config.check()?;
        let resolver = Resolver::sentinel(sentinel, config.tls.as_ref())?;
        Self::connect_resolved(resolver, &sentinel.label(), config).await
    }

    async fn connect_resolved(
        resolver: Resolver,
        server: &str,
        config: ClientConfig,
    ) -> Result<Client, Error> {
        let resolver = Arc::new(resolver);
        let conn_config = redis::AsyncConnectionConfig::new()
            .set_connection_timeout(Some(config.timeout))
            .set_response_timeout(None);
        let source = source::Source::standalone(resolver.clone(), conn_config.clone());
        let pool = Pool::connect(resolver, config.pool_size, conn_config)
            .await
            .map_err(|e| tls::connect_error(e, server, Error::Connection))?;
        Ok(Self::with_transport(Arc::new(pool), config)
            .with_dedicated(source)
            .check_server()
            .await)
    }

    /// Connects to a Redis Cluster through any of its nodes.
    ///
    /// The cluster connection is built with `retries(0)`: the `redis` crate would otherwise resend
    /// a request after its connection dropped, which could run a non-idempotent script twice.
    /// This client retries instead, by each script's retry class (redirects included: `MOVED`,
    /// `TRYAGAIN` and `CLUSTERDOWN` mean nothing ran).
    pub async fn connect_cluster(urls: &[String], config: ClientConfig) -> Result<Client, Error> {
        config.check()?;
        let first = urls.first().map_or("", String::as_str);
        // Dedicated connections are built from this (credentials, protocol, TLS) per node.
        let template = tls::open(first, config.tls.as_ref())?
            .get_connection_info()
            .clone();
        let mut builder = redis::cluster::ClusterClientBuilder::new(urls.to_vec())
            .retries(0)
            .connection_timeout(config.timeout);
        if let Some(tls) = &config.tls {
            builder = builder.certs(tls.certificates()?);
        }
        let client = builder.build().map_err(Error::Connection)?;
        let conn = client
            .get_async_connection()
            .await
            .map_err(|e| tls::connect_error(e, first, Error::Connection))?;
        let conn_config = redis::AsyncConnectionConfig::new()
            .set_connection_timeout(Some(config.timeout))
            .set_response_timeout(None);
        let source = source::Source::cluster(template, conn_config);
        Ok(Self::with_transport(Arc::new(Cluster::new(conn)), config)
            .with_dedicated(source)
            .check_server()
            .await)
    }

    /// Runs over the caller's own connection (`MultiplexedConnection`, `ConnectionManager`, ...),
    /// cloned per request. Such a connection is reused after a timeout: multiplexed connections
    /// match each reply to its request, so a late reply is dropped, not misread.
    pub fn from_connection<C>(conn: C, config: ClientConfig) -> Client
    where
        C: redis::aio::ConnectionLike + Clone + Send + Sync + 'static,
    {
        Self::with_transport(Arc::new(Shared { conn }), config)
    }

    /// Runs over the caller's own async cluster connection. Build it with
    /// `ClusterClientBuilder::retries(0)` for the reason given at [`Client::connect_cluster`].
    pub fn from_cluster_connection(
        conn: redis::cluster_async::ClusterConnection,
        config: ClientConfig,
    ) -> Client {
        Self::with_transport(Arc::new(Cluster::new(conn)), config)
    }

    fn with_transport(transport: Arc<dyn Transport>, config: ClientConfig) -> Client {
        Client {
            transport,
            batcher: Arc::new(batch::Batcher::new(config.batching)),
            config: Arc::new(config),
            dedicated: None,
            memory: Arc::default(),
            caps: Arc::default(),
            closed: Arc::default(),
        }
    }

    /// Closes the client, for every clone of it: later calls fail with [`Error::Client`] (`the
    /// client is closed`) without sending anything, and the connections it owns (its pool, its
    /// cluster connection, idle dedicated connections) are let go of at once; calls already in
    /// flight finish on the connection they hold. A connection the caller handed in
    /// ([`Client::from_connection`]) stays the caller's to close. Closing twice is a no-op.
    pub fn close(&self) {
        self.closed
            .store(true, std::sync::atomic::Ordering::Release);
        self.transport.close();
        if let Some(source) = &self.dedicated {
            source.close();
        }
    }

    /// Whether [`Client::close`] was called (on this client or a clone).
    pub fn is_closed(&self) -> bool {
        self.closed.load(std::sync::atomic::Ordering::Acquire)
    }

    /// [`Error::Client`] when the client is closed: the first check of every call.
    pub(crate) fn open_or_refuse(&self) -> Result<(), Error> {
        match self.is_closed() {
            true => Err(Error::Client("the client is closed".into())),
            false => Ok(()),
        }
    }

    /// Checks `maxmemory-policy` once ([`memory`]): one `INFO memory`; and detects
    /// the server's native commands ([`Client::capabilities`]).
    async fn check_server(self) -> Client {
        let check = memory::check(&self).await;
        let _ = self.memory.set(check);
        let _ = self.capabilities().await;
        self
    }

    /// What this client found about `maxmemory-policy` when it connected (None for clients
    /// built over a caller's connection): an evicting policy with a memory limit is
    /// [`Status::Fail`](memory::Status) and was logged and counted
    /// (`redis_atomic_server_warnings_total{check="maxmemory-policy"}`).
    pub fn memory_check(&self) -> Option<&memory::MemoryCheck> {
        self.memory.get()
    }

    fn with_dedicated(mut self, source: source::Source) -> Client {
        self.dedicated = Some(Arc::new(source));
        self
    }

    /// The same connections with other settings (e.g. another delivery).
    pub fn with_config(&self, config: ClientConfig) -> Client {
        Client {
            dedicated: self.dedicated.clone(),
            memory: self.memory.clone(),
            caps: self.caps.clone(),
            ..Self::with_transport(self.transport.clone(), config)
        }
    }

    /// The settings.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// Whether this client talks to a Redis Cluster.
    pub fn is_cluster(&self) -> bool {
        self.transport.is_cluster()
    }
}
