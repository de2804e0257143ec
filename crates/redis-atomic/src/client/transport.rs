//! Where requests go: an owned pool of multiplexed connections, or the caller's own connection.
//!
//! Why a pool of several multiplexed connections: one multiplexed connection serialises all
//! traffic through one socket and one reader task, which leaves the Redis core partly idle under
//! many concurrent tasks, while a few connections saturate it (the measurement:
//! docs/performance.md, "Connections").
//!
//! Why the pool replaces a connection after a timeout: a plain connection that timed out may
//! still deliver the late reply, which a careless reuse would read as the answer to the *next*
//! request. Multiplexed connections do match replies to requests, but a connection that timed
//! out is also the likeliest to be broken (half-open socket, stalled server), so the pool drops it
//! and reconnects on next use. Connections supplied by the caller are used as they are.
//!
//! Where the pool connects is its [`Resolver`]'s answer: a fixed address, or the primary Sentinel
//! names (asked again once a connection to it failed; see [`super::sentinel`]).

use super::sentinel::Resolver;
use futures::future::BoxFuture;
use redis::aio::{ConnectionLike, MultiplexedConnection};
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::SingleNodeRoutingInfo;
use redis::{Cmd, Pipeline, RedisResult, Value};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A handle on one connection, checked out for one request.
pub(crate) struct Lease {
    pub(crate) conn: Box<dyn DynConnection>,
    pub(crate) slot: usize,
}

/// Object-safe subset of [`ConnectionLike`] we need.
pub(crate) trait DynConnection: Send {
    fn request<'a>(&'a mut self, cmd: &'a Cmd) -> BoxFuture<'a, RedisResult<Value>>;
    /// Sends the commands as one pipeline (one write, one round trip) on this connection.
    fn request_pipeline<'a>(
        &'a mut self,
        pipe: &'a redis::Pipeline,
    ) -> BoxFuture<'a, RedisResult<Vec<Value>>>;
}

impl<C: ConnectionLike + Send> DynConnection for C {
    fn request<'a>(&'a mut self, cmd: &'a Cmd) -> BoxFuture<'a, RedisResult<Value>> {
        self.req_packed_command(cmd)
    }

    fn request_pipeline<'a>(
        &'a mut self,
        pipe: &'a redis::Pipeline,
    ) -> BoxFuture<'a, RedisResult<Vec<Value>>> {
        self.req_packed_commands(pipe, 0, pipe.len())
    }
}

/// Source of connections for the client.
pub(crate) trait Transport: Send + Sync {
    /// A connection for one request.
    fn checkout(&self) -> BoxFuture<'_, RedisResult<Lease>>;
    /// The request on `slot` timed out or its connection broke: do not reuse it.
    fn discard(&self, slot: usize);
    /// Whether this is a cluster connection (commands fan out to every primary by themselves).
    fn is_cluster(&self) -> bool;
    /// Lets go of the connections this transport owns ([`super::Client::close`]); a checkout
    /// after it is refused as not sent. A caller's own connection is the caller's to close.
    fn close(&self) {}
    /// Sends `pipe` to the node at `host:port` rather than where the slot map says (cluster
    /// only): how an `ASK` redirect is followed (see [`super::ask`]).
    fn to_node<'a>(
        &'a self,
        host: &'a str,
        port: u16,
        pipe: &'a Pipeline,
    ) -> BoxFuture<'a, RedisResult<Vec<Value>>> {
        let _ = (host, port, pipe);
        Box::pin(async {
            Err(redis::RedisError::from((
                redis::ErrorKind::Client,
                "a redirect to another node needs a cluster connection",
            )))
        })
    }
}

/// A lease on a clone of a shared connection (every clone is the same multiplexed connection).
fn clone_of<C>(conn: &C) -> BoxFuture<'static, RedisResult<Lease>>
where
    C: ConnectionLike + Clone + Send + 'static,
{
    let conn = conn.clone();
    Box::pin(async move {
        Ok(Lease {
            conn: Box::new(conn),
            slot: 0,
        })
    })
}

/// The caller's own connection (multiplexed, connection manager): cloned per request.
pub(crate) struct Shared<C> {
    pub(crate) conn: C,
}

impl<C> Transport for Shared<C>
where
    C: ConnectionLike + Clone + Send + Sync + 'static,
{
    fn checkout(&self) -> BoxFuture<'_, RedisResult<Lease>> {
        clone_of(&self.conn)
    }

    fn discard(&self, _slot: usize) {}

    fn is_cluster(&self) -> bool {
        false
    }
}

/// A cluster connection (ours or the caller's): cloned per request; routes by slot, and to a
/// given node for `ASK`. `None` once closed.
pub(crate) struct Cluster {
    conn: Mutex<Option<ClusterConnection>>,
}

impl Cluster {
    pub(crate) fn new(conn: ClusterConnection) -> Cluster {
        Cluster {
            conn: Mutex::new(Some(conn)),
        }
    }

    fn conn(&self) -> RedisResult<ClusterConnection> {
        // A std mutex: held only to clone the handle, never across an await.
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        conn.clone().ok_or_else(closed)
    }
}

/// What a transport answers once its client was closed: nothing was sent (a refused connection).
fn closed() -> redis::RedisError {
    redis::RedisError::from(std::io::Error::new(
        std::io::ErrorKind::ConnectionRefused,
        "the client is closed",
    ))
}

impl Transport for Cluster {
    fn checkout(&self) -> BoxFuture<'_, RedisResult<Lease>> {
        match self.conn() {
            Ok(conn) => clone_of(&conn),
            Err(e) => Box::pin(async { Err(e) }),
        }
    }

    fn close(&self) {
        *self.conn.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    fn discard(&self, _slot: usize) {}

    fn is_cluster(&self) -> bool {
        true
    }

    fn to_node<'a>(
        &'a self,
        host: &'a str,
        port: u16,
        pipe: &'a Pipeline,
    ) -> BoxFuture<'a, RedisResult<Vec<Value>>> {
        let route = SingleNodeRoutingInfo::ByAddress {
            host: host.to_string(),
            port,
        };
        let conn = self.conn();
        Box::pin(async move {
            conn?
                .route_pipeline(pipe.clone(), 0, pipe.len(), route)
                .await
        })
    }
}

/// A pooled connection and the [`Resolver`] generation it was made in.
type Slot = Option<(MultiplexedConnection, u64)>;

/// An owned round-robin pool of multiplexed connections to one server (the primary).
pub(crate) struct Pool {
    resolver: Arc<Resolver>,
    config: redis::AsyncConnectionConfig,
    slots: Vec<Mutex<Slot>>,
    next: AtomicUsize,
    closed: AtomicBool,
}

impl Pool {
    pub(crate) async fn connect(
        resolver: Arc<Resolver>,
        size: usize,
        config: redis::AsyncConnectionConfig,
    ) -> RedisResult<Pool> {
        let pool = Pool {
            resolver,
            config,
            slots: (0..size.max(1)).map(|_| Mutex::new(None)).collect(),
            next: AtomicUsize::new(0),
            closed: AtomicBool::new(false),
        };
        for slot in 0..pool.slots.len() {
            pool.connect_slot(slot).await?;
        }
        Ok(pool)
    }

    fn cell(&self, slot: usize) -> std::sync::MutexGuard<'_, Slot> {
        // A std mutex: held only to clone or swap an Arc-like handle, never across an await.
        self.slots[slot].lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The slot's connection, unless it predates the resolver's last invalidation.
    fn cached(&self, slot: usize) -> Option<MultiplexedConnection> {
        let generation = self.resolver.generation();
        match &*self.cell(slot) {
            Some((conn, made)) if *made == generation => Some(conn.clone()),
            _ => None,
        }
    }

    async fn connect_slot(&self, slot: usize) -> RedisResult<MultiplexedConnection> {
        let generation = self.resolver.generation();
        let connected = match self.resolver.client().await {
            Ok(client) => {
                client
                    .get_multiplexed_async_connection_with_config(&self.config)
                    .await
            }
            Err(e) => Err(e),
        };
        let conn = connected.inspect_err(|_| self.resolver.invalidate())?;
        *self.cell(slot) = Some((conn.clone(), generation));
        Ok(conn)
    }
}

impl Transport for Pool {
    fn checkout(&self) -> BoxFuture<'_, RedisResult<Lease>> {
        Box::pin(async move {
            if self.closed.load(Ordering::Acquire) {
                return Err(closed());
            }
            let slot = self.next.fetch_add(1, Ordering::Relaxed) % self.slots.len();
            let conn = match self.cached(slot) {
                Some(conn) => conn,
                None => self.connect_slot(slot).await?,
            };
            Ok(Lease {
                conn: Box::new(conn),
                slot,
            })
        })
    }

    fn discard(&self, slot: usize) {
        if slot < self.slots.len() {
            *self.cell(slot) = None;
        }
        self.resolver.invalidate();
    }

    fn is_cluster(&self) -> bool {
        false
    }

    fn close(&self) {
        self.closed.store(true, Ordering::Release);
        for slot in 0..self.slots.len() {
            *self.cell(slot) = None;
        }
    }
}
