//! Dedicated connections: used by one task at a time, for commands whose meaning depends on the
//! connection's state (`WATCH`, `MULTI`).
//!
//! Why not the shared multiplexed connections every script goes through: `WATCH` and `MULTI` are
//! per connection. On a connection that other tasks share, their commands land inside your
//! transaction and their `EXEC` clears your watch (redis-rs #565, fred #251; Spring's "same
//! connection" pitfall). A [`DedicatedConnection`] is checked out exclusively, talks to
//! the node that serves the key's slot (in a cluster), and goes back to a small idle pool only
//! when its state is known clean: no `WATCH` or `MULTI` pending (an `EXEC`, `DISCARD` or `UNWATCH`
//! came last) and no request timed out or broke. Anything else is closed, which is an implicit
//! `UNWATCH`/`DISCARD` on the server.
//!
//! Where a dedicated connection goes is looked up per checkout: the standalone server or the
//! primary Sentinel names (the pool's resolver), or the node that serves the key's slot. A
//! reply that says the lookup is stale (`MOVED`, `READONLY`, `NOREPLICAS`, a broken connection)
//! makes the next checkout look again; an `ASK` during a slot migration is followed on the spot
//! (see [`super::ask`]).

use super::source::Source;
use super::{ask, Client};
use crate::keys::slot;
use crate::Error;
use redis::aio::{ConnectionLike, MultiplexedConnection};
use redis::{Cmd, Pipeline, Value};
use std::sync::Arc;
use std::time::Duration;

impl Client {
    /// A client for one node of this client's cluster (`host:port` as the cluster names it), with
    /// the template's credentials and TLS settings; None for clients without a template (built
    /// over a caller's connection) or not on a cluster.
    pub(crate) fn node_client(
        &self,
        host: &str,
        port: u16,
    ) -> Option<Result<redis::Client, Error>> {
        let source = self.dedicated.as_ref()?;
        source
            .is_cluster()
            .then(|| source.node_at(host, port).map(|(_, client)| client))
    }

    /// A connection of its own for the node that serves `key`'s slot (any key on a standalone
    /// server), for `WATCH`/`MULTI`/`EXEC`. Only clients built by [`Client::connect`] or
    /// [`Client::connect_cluster`] can open one; others answer [`Error::BadArgument`].
    pub async fn dedicated(&self, key: &str) -> Result<DedicatedConnection, Error> {
        self.open_or_refuse()?;
        let source = self.dedicated.clone().ok_or_else(|| {
            Error::BadArgument(
                "dedicated connections need a client built by Client::connect or connect_cluster"
                    .into(),
            )
        })?;
        let (node, client) = source.node_for(self, slot(key.as_bytes())).await?;
        let conn = source
            .open(&node, &client)
            .await
            .inspect_err(|_| source.stale())?;
        Ok(DedicatedConnection {
            conn: Some(conn),
            node,
            source,
            timeout: self.config.timeout,
            dirty: false,
            asking: false,
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
    /// Moved to a slot's importing node by `ASK`: every command outside `MULTI` goes after
    /// `ASKING`.
    asking: bool,
}

impl std::fmt::Debug for DedicatedConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DedicatedConnection")
            .field("node", &self.node)
            .field("dirty", &self.dirty)
            .field("asking", &self.asking)
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
        let clean = !self.dirty;
        let values = self.send(pipe, timeout).await?;
        match ask::redirect(pipe, &values) {
            // Nothing ran here (every keyed command was refused) and nothing is pending: the
            // pipeline goes to the importing node. Once a watch is set here, an ASK means a
            // watched key moved: the caller's attempt fails and starts over.
            Some(node) if clean && !self.asking => {
                self.move_to(node).await?;
                self.send(pipe, timeout).await
            }
            _ => Ok(values),
        }
    }

    /// One round trip of `pipe` (after `ASKING`s when asking); tracks the connection's state.
    async fn send(&mut self, pipe: &Pipeline, timeout: Duration) -> Result<Vec<Value>, Error> {
        let conn = self.conn.as_mut().ok_or_else(|| Error::OutcomeUnknown {
            reason: "dedicated connection closed after an earlier failure".into(),
            attempts: 1,
            timed_out: false,
            retry_safe: false,
        })?;
        let effect = pipe.cmd_iter().filter_map(state_effect).last();
        let asking = self.asking.then(|| ask::asking(pipe));
        let request = match &asking {
            Some((sent, _)) => conn.req_packed_commands(sent, 0, sent.len()),
            None => conn.req_packed_commands(pipe, 0, pipe.len()),
        };
        let err = match tokio::time::timeout(timeout, request).await {
            Ok(Ok(values)) => {
                let values = match &asking {
                    Some((_, ours)) => ask::strip(values, ours),
                    None => Ok(values),
                };
                match values {
                    Ok(values) => {
                        if let Some(dirty) = effect {
                            self.dirty = dirty;
                        }
                        if values.iter().any(stale_reply) {
                            self.source.stale();
                        }
                        return Ok(values);
                    }
                    Err(e) => e,
                }
            }
            Ok(Err(e)) => Error::from_redis(e),
            Err(_) => Error::OutcomeUnknown {
                reason: format!("no reply within {timeout:?}"),
                attempts: 1,
                timed_out: true,
                retry_safe: false,
            },
        };
        if err.is_outcome_unknown()
            || matches!(&err, Error::Rejected { code, .. } if stale_code(code))
        {
            self.source.stale();
        }
        self.conn = None; // timed out, broken or out of sync: never reused
        Err(err)
    }

    /// Continues on the node an `ASK` named, in asking mode. The connection left behind is
    /// closed (nothing is pending on it, but it was sent a `WATCH` or `MULTI` that failed).
    async fn move_to(&mut self, (host, port): (String, u16)) -> Result<(), Error> {
        let (node, client) = self.source.node_at(&host, port)?;
        self.conn = None;
        self.conn = Some(self.source.open(&node, &client).await?);
        self.node = node;
        self.asking = true;
        Ok(())
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

/// A reply that says the node is not where the key lives (any more): `MOVED`, or a refusal that
/// says it may not be the primary ([`super::sentinel::stale_primary`]).
fn stale_reply(value: &Value) -> bool {
    matches!(value, Value::ServerError(e) if stale_code(e.code()))
}

fn stale_code(code: &str) -> bool {
    code == "MOVED" || super::sentinel::stale_primary(code)
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
