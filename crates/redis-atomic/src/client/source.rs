//! Where dedicated connections come from: the standalone server or the primary Sentinel names
//! (the pool's [`Resolver`]), or, in a cluster, the node that serves a slot (`CLUSTER SLOTS`,
//! cached until a reply says it is stale), plus a small idle pool per node.

use super::sentinel::Resolver;
use super::Client;
use crate::Error;
use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, ConnectionInfo, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Idle dedicated connections kept per node.
const MAX_IDLE_PER_NODE: usize = 64;

/// Where dedicated connections come from.
pub(crate) struct Source {
    kind: Kind,
    config: AsyncConnectionConfig,
    idle: Mutex<HashMap<String, Vec<MultiplexedConnection>>>,
}

enum Kind {
    Standalone(Arc<Resolver>),
    /// Node connections are built from this template (credentials, protocol, TLS) with the
    /// address that `CLUSTER SLOTS` gives for the slot.
    Cluster {
        template: Box<ConnectionInfo>,
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
    pub(crate) fn standalone(resolver: Arc<Resolver>, config: AsyncConnectionConfig) -> Source {
        Source::new(Kind::Standalone(resolver), config)
    }

    pub(crate) fn cluster(template: ConnectionInfo, config: AsyncConnectionConfig) -> Source {
        let slots = Mutex::new(None);
        let template = Box::new(template);
        Source::new(Kind::Cluster { template, slots }, config)
    }

    fn new(kind: Kind, config: AsyncConnectionConfig) -> Source {
        Source {
            kind,
            config,
            idle: Mutex::new(HashMap::new()),
        }
    }

    pub(crate) fn take_idle(&self, node: &str) -> Option<MultiplexedConnection> {
        // A std mutex: held to push or pop a handle, never across an await.
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        idle.get_mut(node).and_then(Vec::pop)
    }

    pub(crate) fn put_idle(&self, node: String, conn: MultiplexedConnection) {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        let list = idle.entry(node).or_default();
        if list.len() < MAX_IDLE_PER_NODE {
            list.push(conn);
        }
    }

    /// Lets go of the idle connections ([`super::Client::close`]).
    pub(crate) fn close(&self) {
        self.idle.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// What is known about where to go may be stale (after `MOVED`, `READONLY`, `NOREPLICAS` or
    /// a broken connection): the next checkout asks the cluster (or Sentinel) again.
    pub(crate) fn stale(&self) {
        match &self.kind {
            Kind::Standalone(resolver) => {
                resolver.invalidate();
                // Idle connections to a primary that may have moved are of no use any more.
                self.idle.lock().unwrap_or_else(|p| p.into_inner()).clear();
            }
            Kind::Cluster { slots, .. } => {
                *slots.lock().unwrap_or_else(|p| p.into_inner()) = None;
            }
        }
    }

    /// A connection to `node` (idle, or new from `client`).
    pub(crate) async fn open(
        &self,
        node: &str,
        client: &redis::Client,
    ) -> Result<MultiplexedConnection, Error> {
        match self.take_idle(node) {
            Some(conn) => Ok(conn),
            None => client
                .get_multiplexed_async_connection_with_config(&self.config)
                .await
                .map_err(super::op::not_sent),
        }
    }

    pub(crate) async fn node_for(
        &self,
        client: &Client,
        slot: u16,
    ) -> Result<(String, redis::Client), Error> {
        let slots = match &self.kind {
            Kind::Standalone(resolver) => {
                let client = resolver.client().await.map_err(super::op::not_sent)?;
                let node = client.get_connection_info().addr().to_string();
                return Ok((node, client));
            }
            Kind::Cluster { slots, .. } => slots,
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
        self.node_at(&range.host, range.port)
    }

    /// Whether connections come from a cluster's slot map.
    pub(crate) fn is_cluster(&self) -> bool {
        matches!(self.kind, Kind::Cluster { .. })
    }

    /// The cluster node at `host:port`, with the template's credentials and TLS.
    pub(crate) fn node_at(&self, host: &str, port: u16) -> Result<(String, redis::Client), Error> {
        let Kind::Cluster { template, .. } = &self.kind else {
            return Err(Error::Client(
                "a redirect on a standalone connection".into(),
            ));
        };
        let client = redis::Client::open(super::node_info(template, host, port))
            .map_err(Error::Connection)?;
        Ok((format!("{host}:{port}"), client))
    }
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
