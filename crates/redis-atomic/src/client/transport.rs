//! Where requests go: an owned pool of multiplexed connections, or the caller's own connection.
//!
//! Why a pool of several multiplexed connections: one multiplexed connection serialises all
//! traffic through one socket and one reader task; measured with 50 concurrent tasks it leaves
//! the Redis core about a third idle, while four connections saturate it.
//!
//! Why the pool replaces a connection after a timeout: a plain connection that timed out may
//! still deliver the late reply, which a careless reuse would read as the answer to the *next*
//! request. Multiplexed connections do match replies to requests, but a connection that timed
//! out is also the likeliest to be broken (half-open socket, stalled server), so the pool drops it
//! and reconnects on next use. Connections supplied by the caller are used as they are.

use futures::future::BoxFuture;
use redis::aio::{ConnectionLike, MultiplexedConnection};
use redis::{Cmd, RedisResult, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

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
}

/// The caller's own connection (multiplexed, connection manager, cluster): cloned per request.
pub(crate) struct Shared<C> {
    pub(crate) conn: C,
    pub(crate) cluster: bool,
}

impl<C> Transport for Shared<C>
where
    C: ConnectionLike + Clone + Send + Sync + 'static,
{
    fn checkout(&self) -> BoxFuture<'_, RedisResult<Lease>> {
        let conn = self.conn.clone();
        Box::pin(async move {
            Ok(Lease {
                conn: Box::new(conn),
                slot: 0,
            })
        })
    }

    fn discard(&self, _slot: usize) {}

    fn is_cluster(&self) -> bool {
        self.cluster
    }
}

/// An owned round-robin pool of multiplexed connections to one server.
pub(crate) struct Pool {
    client: redis::Client,
    config: redis::AsyncConnectionConfig,
    slots: Vec<Mutex<Option<MultiplexedConnection>>>,
    next: AtomicUsize,
}

impl Pool {
    pub(crate) async fn connect(
        client: redis::Client,
        size: usize,
        config: redis::AsyncConnectionConfig,
    ) -> RedisResult<Pool> {
        let mut slots = Vec::with_capacity(size.max(1));
        for _ in 0..size.max(1) {
            let conn = client
                .get_multiplexed_async_connection_with_config(&config)
                .await?;
            slots.push(Mutex::new(Some(conn)));
        }
        Ok(Pool {
            client,
            config,
            slots,
            next: AtomicUsize::new(0),
        })
    }

    fn cached(&self, slot: usize) -> Option<MultiplexedConnection> {
        // A std mutex: held only to clone or swap an Arc-like handle, never across an await.
        self.slots[slot]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl Transport for Pool {
    fn checkout(&self) -> BoxFuture<'_, RedisResult<Lease>> {
        Box::pin(async move {
            let slot = self.next.fetch_add(1, Ordering::Relaxed) % self.slots.len();
            let conn = match self.cached(slot) {
                Some(conn) => conn,
                None => {
                    let conn = self
                        .client
                        .get_multiplexed_async_connection_with_config(&self.config)
                        .await?;
                    *self.slots[slot].lock().unwrap_or_else(|p| p.into_inner()) =
                        Some(conn.clone());
                    conn
                }
            };
            Ok(Lease {
                conn: Box::new(conn),
                slot,
            })
        })
    }

    fn discard(&self, slot: usize) {
        if let Some(cell) = self.slots.get(slot) {
            *cell.lock().unwrap_or_else(|p| p.into_inner()) = None;
        }
    }

    fn is_cluster(&self) -> bool {
        false
    }
}
