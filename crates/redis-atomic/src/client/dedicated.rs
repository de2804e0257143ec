//! Dedicated connections: used by one task at a time, for commands whose meaning depends on the
//! connection's state (`WATCH`, `MULTI`).
//!
//! Why not the shared multiplexed connections every script goes through: `WATCH` and `MULTI` are
//! per connection. On a connection that other tasks share, their commands land inside your
//! transaction and their `EXEC` clears your watch (redis-rs #565, fred #251; Spring's "same
//! connection" pitfall, seed 003). A [`DedicatedConnection`] is checked out exclusively, talks to
//! the node that serves the key's slot (in a cluster), and goes back to a small idle pool only
//! when its state is known clean: no `WATCH` or `MULTI` pending (an `EXEC`, `DISCARD` or `UNWATCH`
//! came last) and no request timed out or broke. Anything else is closed, which is an implicit
//! `UNWATCH`/`DISCARD` on the server.

use super::Client;
use crate::keys::slot;
use crate::Error;
use redis::aio::{ConnectionLike, MultiplexedConnection};
use redis::{AsyncConnectionConfig, Cmd, ConnectionAddr, ConnectionInfo, Pipeline, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Idle dedicated connections kept per node.
const MAX_IDLE_PER_NODE: usize = 64;

/// Where dedicated connections come from.
pub(crate) struct Source {
    kind: Kind,
    config: AsyncConnectionConfig,
    idle: Mutex<HashMap<String, Vec<MultiplexedConnection>>>,
}

enum Kind {
    Standalone(redis::Client),
    /// Node connections are built from this template (credentials, protocol, TLS) with the
    /// address that `CLUSTER SLOTS` gives for the slot.
    Cluster {
        template: ConnectionInfo,
        slots: Mutex<Option<Vec<SlotRange>>>,
    },
}

#[derive(Clone, Debug)]
pub(crate) struct SlotRange {
    start: u16,
    end: u16,
    host: String,
    port: u16,
}

impl Source {
    pub(crate) fn standalone(client: redis::Client, config: AsyncConnectionConfig) -> Source {
        Source::new(Kind::Standalone(client), config)
    }

    pub(crate) fn cluster(template: ConnectionInfo, config: AsyncConnectionConfig) -> Source {
        let slots = Mutex::new(None);
        Source::new(Kind::Cluster { template, slots }, config)
    }

    fn new(kind: Kind, config: AsyncConnectionConfig) -> Source {
        Source {
            kind,
            config,
            idle: Mutex::new(HashMap::new()),
        }
    }

    fn take_idle(&self, node: &str) -> Option<MultiplexedConnection> {
        // A std mutex: held to push or pop a handle, never across an await.
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        idle.get_mut(node).and_then(Vec::pop)
    }

    fn put_idle(&self, node: String, conn: MultiplexedConnection) {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        let list = idle.entry(node).or_default();
        if list.len() < MAX_IDLE_PER_NODE {
            list.push(conn);
        }
    }

    /// Forgets the slot map (after `MOVED`); the next checkout asks the cluster again.
    fn forget_slots(&self) {
        if let Kind::Cluster { slots, .. } = &self.kind {
            *slots.lock().unwrap_or_else(|p| p.into_inner()) = None;
        }
    }

    async fn node_for(&self, client: &Client, slot: u16) -> Result<(String, redis::Client), Error> {
        let (template, slots) = match &self.kind {
            Kind::Standalone(c) => return Ok(("standalone".into(), c.clone())),
            Kind::Cluster { template, slots } => (template, slots),
        };
        let known = slots.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let map = match known {
            Some(map) => map,
            None => {
                let map = fetch_slots(client).await?;
                *slots.lock().unwrap_or_else(|p| p.into_inner()) = Some(map.clone());
                map
            }
        };
        let range = map
            .iter()
            .find(|r| r.start <= slot && slot <= r.end)
            .ok_or_else(|| Error::Rejected {
                code: "CLUSTERDOWN".into(),
                message: format!("no node serves slot {slot}"),
            })?;
        let node = format!("{}:{}", range.host, range.port);
        Ok((node, client_at(template, &range.host, range.port)?))
    }
}

/// A client for the node at `host:port` with `template`'s credentials, protocol and TLS.
fn client_at(template: &ConnectionInfo, host: &str, port: u16) -> Result<redis::Client, Error> {
    let addr = match template.addr() {
        ConnectionAddr::TcpTls {
            insecure,
            tls_params,
            ..
        } => ConnectionAddr::TcpTls {
            host: host.to_string(),
            port,
            insecure: *insecure,
            tls_params: tls_params.clone(),
        },
        _ => ConnectionAddr::Tcp(host.to_string(), port),
    };
    redis::Client::open(template.clone().set_addr(addr)).map_err(Error::Connection)
}

/// `CLUSTER SLOTS` through the client's cluster connection.
async fn fetch_slots(client: &Client) -> Result<Vec<SlotRange>, Error> {
    parse_slots(client.command(redis::cmd("CLUSTER").arg("SLOTS")).await?)
}

/// `CLUSTER SLOTS`' reply: each range's slots and its primary's host and port. Anything else
/// is [`Error::BadReply`].
pub(crate) fn parse_slots(reply: Value) -> Result<Vec<SlotRange>, Error> {
    let bad = |detail: &str| Error::BadReply {
        script: "CLUSTER SLOTS",
        detail: detail.into(),
    };
    let Value::Array(ranges) = reply else {
        return Err(bad("not an array"));
    };
    let mut out = Vec::with_capacity(ranges.len());
    for range in ranges {
        let Value::Array(parts) = range else {
            return Err(bad("range not an array"));
        };
        let (Some(Value::Int(start)), Some(Value::Int(end)), Some(Value::Array(primary))) =
            (parts.first(), parts.get(1), parts.get(2))
        else {
            return Err(bad("range shape"));
        };
        let host = match primary.first() {
            Some(Value::BulkString(b)) => String::from_utf8_lossy(b).into_owned(),
            Some(Value::SimpleString(s)) => s.clone(),
            _ => return Err(bad("node host")),
        };
        let Some(Value::Int(port)) = primary.get(1) else {
            return Err(bad("node port"));
        };
        out.push(SlotRange {
            start: u16::try_from(*start).map_err(|_| bad("slot"))?,
            end: u16::try_from(*end).map_err(|_| bad("slot"))?,
            host,
            port: u16::try_from(*port).map_err(|_| bad("port"))?,
        });
    }
    Ok(out)
}

impl Client {
    /// A client for one node of this client's cluster (`host:port` as the cluster names it), with
    /// the seed's credentials and TLS settings; None for clients without a seed (built over a
    /// caller's connection) or not on a cluster.
    pub(crate) fn node_client(
        &self,
        host: &str,
        port: u16,
    ) -> Option<Result<redis::Client, Error>> {
        match &self.dedicated.as_ref()?.kind {
            Kind::Cluster { template, .. } => Some(client_at(template, host, port)),
            Kind::Standalone(_) => None,
        }
    }

    /// A connection of its own for the node that serves `key`'s slot (any key on a standalone
    /// server), for `WATCH`/`MULTI`/`EXEC`. Only clients built by [`Client::connect`] or
    /// [`Client::connect_cluster`] can open one; others answer [`Error::BadArgument`].
    pub async fn dedicated(&self, key: &str) -> Result<DedicatedConnection, Error> {
        let source = self.dedicated.clone().ok_or_else(|| {
            Error::BadArgument(
                "dedicated connections need a client built by Client::connect or connect_cluster"
                    .into(),
            )
        })?;
        let (node, client) = source.node_for(self, slot(key.as_bytes())).await?;
        let conn = match source.take_idle(&node) {
            Some(conn) => conn,
            None => client
                .get_multiplexed_async_connection_with_config(&source.config)
                .await
                .map_err(Error::NotSent)?,
        };
        Ok(DedicatedConnection {
            conn: Some(conn),
            node,
            source,
            timeout: self.config.timeout,
            dirty: false,
        })
    }
}

/// A connection used by one task only (see the module doc). Returned to the idle pool on drop
/// when clean, closed otherwise.
pub struct DedicatedConnection {
    conn: Option<MultiplexedConnection>,
    node: String,
    source: Arc<Source>,
    timeout: Duration,
    /// A `WATCH` or `MULTI` may be pending on the server.
    dirty: bool,
}

impl std::fmt::Debug for DedicatedConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DedicatedConnection")
            .field("node", &self.node)
            .field("dirty", &self.dirty)
            .finish()
    }
}

impl DedicatedConnection {
    /// Sends one command (with the client's per-request timeout); a server error reply is an
    /// `Err`, classified like every other.
    pub async fn command(&mut self, cmd: &Cmd) -> Result<Value, Error> {
        let mut pipe = redis::pipe();
        pipe.add_command(cmd.clone());
        let mut replies = self.pipeline(&pipe).await?;
        match replies.pop() {
            Some(Value::ServerError(e)) => Err(self.server_error(e)),
            Some(value) => Ok(value),
            None => Err(Error::BadReply {
                script: "dedicated",
                detail: "no reply".into(),
            }),
        }
    }

    /// Sends the commands of `pipe` in one write and returns every reply, server errors included
    /// as [`Value::ServerError`] (build `MULTI` ... `EXEC` as plain commands in it). A timeout or
    /// broken connection is [`Error::OutcomeUnknown`] and the connection is closed.
    pub async fn pipeline(&mut self, pipe: &Pipeline) -> Result<Vec<Value>, Error> {
        self.pipeline_within(pipe, self.timeout).await
    }

    /// [`DedicatedConnection::pipeline`] with its own timeout (a pipeline ending in `WAIT` may
    /// take the client's timeout plus the `WAIT`'s).
    pub(crate) async fn pipeline_within(
        &mut self,
        pipe: &Pipeline,
        timeout: Duration,
    ) -> Result<Vec<Value>, Error> {
        let conn = self.conn.as_mut().ok_or_else(|| Error::OutcomeUnknown {
            reason: "dedicated connection closed after an earlier failure".into(),
            attempts: 1,
            timed_out: false,
        })?;
        let effect = pipe.cmd_iter().filter_map(state_effect).last();
        let request = conn.req_packed_commands(pipe, 0, pipe.len());
        let err = match tokio::time::timeout(timeout, request).await {
            Ok(Ok(values)) => {
                if let Some(dirty) = effect {
                    self.dirty = dirty;
                }
                for v in &values {
                    if let Value::ServerError(e) = v {
                        if e.code() == "MOVED" {
                            self.source.forget_slots();
                        }
                    }
                }
                return Ok(values);
            }
            Ok(Err(e)) => Error::from_redis(e),
            Err(_) => Error::OutcomeUnknown {
                reason: format!("no reply within {timeout:?}"),
                attempts: 1,
                timed_out: true,
            },
        };
        if matches!(&err, Error::Rejected { code, .. } if code == "MOVED") {
            self.source.forget_slots();
        }
        self.conn = None; // timed out, broken or out of sync: never reused
        Err(err)
    }

    /// The per-request timeout (the client's).
    pub(crate) fn timeout(&self) -> Duration {
        self.timeout
    }

    fn server_error(&self, e: redis::ServerError) -> Error {
        Error::from_code(
            e.code().to_string(),
            e.details().unwrap_or_default().to_string(),
        )
    }
}

/// Whether a command leaves connection state pending (`Some(true)`) or clears it (`Some(false)`).
/// `EXEC` clears watches even when it aborts (`EXECABORT` discards the transaction too).
fn state_effect(cmd: &Cmd) -> Option<bool> {
    let redis::Arg::Simple(name) = cmd.args_iter().next()? else {
        return None;
    };
    match name.to_ascii_uppercase().as_slice() {
        b"WATCH" | b"MULTI" => Some(true),
        b"EXEC" | b"DISCARD" | b"UNWATCH" => Some(false),
        _ => None,
    }
}

impl Drop for DedicatedConnection {
    fn drop(&mut self) {
        if self.dirty {
            return; // closing the connection is the UNWATCH / DISCARD
        }
        if let Some(conn) = self.conn.take() {
            self.source.put_idle(std::mem::take(&mut self.node), conn);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use redis_atomic_testkit::arb;

    proptest! {
        /// Any reply to `CLUSTER SLOTS` is ranges or `BadReply`, never a panic.
        #[test]
        fn slots_parser_answers_any_value(reply in arb::reply()) {
            match parse_slots(reply) {
                Ok(_) | Err(Error::BadReply { script: "CLUSTER SLOTS", .. }) => {}
                Err(other) => prop_assert!(false, "{other:?}"),
            }
        }
    }

    /// A real reply's shape parses; a slot or port out of range is a bad reply.
    #[test]
    fn slots_shape() {
        let range = |start: i64, port: i64| {
            Value::Array(vec![
                Value::Int(start),
                Value::Int(16383),
                Value::Array(vec![
                    Value::BulkString(b"127.0.0.1".to_vec()),
                    Value::Int(port),
                ]),
            ])
        };
        let ok = parse_slots(Value::Array(vec![range(0, 7000)])).unwrap();
        assert_eq!((ok[0].start, ok[0].end, ok[0].port), (0, 16383, 7000));
        assert!(parse_slots(Value::Array(vec![range(-1, 7000)])).is_err());
        assert!(parse_slots(Value::Array(vec![range(0, 1 << 62)])).is_err());
    }
}
