//! Where dedicated connections come from: the standalone server or the primary Sentinel names
//! (the pool's [`Resolver`]), or, in a cluster, the node that serves a slot (`CLUSTER SLOTS`,
//! cached until a reply says it is stale), plus a small idle pool per node.

use super::sentinel::Resolver;
use super::Client;
use crate::Error;
use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, ConnectionAddr, ConnectionInfo, Value};
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
struct SlotRange {
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

    /// The cluster node at `host:port`, with the template's credentials and TLS.
    pub(crate) fn node_at(&self, host: &str, port: u16) -> Result<(String, redis::Client), Error> {
        let Kind::Cluster { template, .. } = &self.kind else {
            return Err(Error::Client(
                "a redirect on a standalone connection".into(),
            ));
        };
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
        let client =
            redis::Client::open(template.clone().set_addr(addr)).map_err(Error::Connection)?;
        Ok((format!("{host}:{port}"), client))
    }
}

/// `CLUSTER SLOTS` through the client's cluster connection.
async fn fetch_slots(client: &Client) -> Result<Vec<SlotRange>, Error> {
    let reply = client.command(redis::cmd("CLUSTER").arg("SLOTS")).await?;
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
