//! What one node says about itself: `INFO`, `CONFIG GET`, `CLUSTER INFO`, the Function library,
//! native commands, and what the application's user may run. Gathered with a handful of
//! commands; each one refused or failing leaves its fact unknown (with the reason) instead of
//! failing the audit, since managed services forbid `CONFIG` and least-privilege users `ACL`.

use super::acl::{self, AclFacts};
use super::DoctorOptions;
use crate::client::memory::{fields, short};
use crate::client::Capabilities;
use crate::script::registry::{LIBRARY_NAME, LIBRARY_SHA1};
use crate::{Client, Error};
use redis::aio::{ConnectionLike, MultiplexedConnection};
use redis::{Cmd, Value};
use std::collections::HashMap;
use std::time::Duration;

/// Deadline of one probe command on a node connection.
const TIMEOUT: Duration = Duration::from_secs(5);

/// Settings read with `CONFIG GET` (one request).
const CONFIG: &[&str] = &[
    "maxmemory",
    "maxmemory-policy",
    "appendonly",
    "appendfsync",
    "save",
    "min-replicas-to-write",
    "min-replicas-max-lag",
    "busy-reply-threshold",
];

/// Where probe commands go: the client's own path (standalone), or one node's connection.
pub(crate) enum Conn<'a> {
    Client(&'a Client),
    Node(MultiplexedConnection),
}

impl Conn<'_> {
    pub(crate) async fn run(&mut self, cmd: &Cmd) -> Result<Value, Error> {
        let conn = match self {
            Conn::Client(client) => return client.command(cmd).await,
            Conn::Node(conn) => conn,
        };
        match tokio::time::timeout(TIMEOUT, conn.req_packed_command(cmd)).await {
            Err(_) => Err(Error::OutcomeUnknown {
                reason: format!("no reply within {TIMEOUT:?}"),
                attempts: 1,
                timed_out: true,
                retry_safe: false,
            }),
            Ok(Ok(Value::ServerError(e))) => Err(Error::from_code(
                e.code().to_string(),
                e.details().unwrap_or_default().to_string(),
            )),
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(Error::from_redis(e)),
        }
    }
}

/// The Function library as found on a node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Library {
    /// This build's `redis_atomic_v<N>`, same code.
    Current,
    /// Not loaded.
    Missing,
    /// Loaded under this build's name with other code.
    Differs,
    /// `FUNCTION LIST` failed (refused, or no Functions).
    Unknown(String),
}

/// Everything the rules judge about one node.
#[derive(Clone, Debug)]
pub struct NodeFacts {
    pub(crate) addr: String,
    /// `INFO` (default sections) as `field → value`, or why it failed.
    pub(crate) info: Result<HashMap<String, String>, String>,
    /// `CONFIG GET` of [`CONFIG`], or why it failed.
    pub(crate) config: Result<HashMap<String, String>, String>,
    /// `CLUSTER INFO`, on a cluster node.
    pub(crate) cluster: Option<Result<HashMap<String, String>, String>>,
    pub(crate) library: Library,
    /// The native commands the node offers (the client's own probe, [`crate::client::Capabilities`]).
    pub(crate) native: Capabilities,
    pub(crate) acl: AclFacts,
}

impl NodeFacts {
    /// The node (`host:port`, or `server` for a client's own connection).
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// An `INFO` field.
    pub(crate) fn info(&self, field: &str) -> Option<&str> {
        self.info.as_ref().ok()?.get(field).map(String::as_str)
    }

    /// A setting: from `CONFIG GET`, else (when `info_field` is given) from `INFO`.
    pub(crate) fn setting(&self, name: &str, info_field: Option<&str>) -> Option<&str> {
        let configured = self.config.as_ref().ok().and_then(|c| c.get(name));
        configured
            .map(String::as_str)
            .or_else(|| info_field.and_then(|f| self.info(f)))
    }

    /// Whether the node is a replica.
    pub(crate) fn is_replica(&self) -> bool {
        self.info("role") == Some("slave")
    }
}

pub(crate) async fn gather(mut conn: Conn<'_>, addr: &str, opts: &DoctorOptions) -> NodeFacts {
    let info = text(&mut conn, &redis::cmd("INFO"))
        .await
        .map(|t| fields(&t));
    let mut config = redis::cmd("CONFIG");
    config.arg("GET").arg(CONFIG);
    let config = conn.run(&config).await.map(pairs).map_err(short);
    let cluster_enabled =
        matches!(&info, Ok(i) if i.get("cluster_enabled").map(String::as_str) == Some("1"));
    let cluster = match cluster_enabled {
        true => Some(
            text(&mut conn, redis::cmd("CLUSTER").arg("INFO"))
                .await
                .map(|t| fields(&t)),
        ),
        false => None,
    };
    let library = library(&mut conn).await;
    let mut probes = Vec::new();
    for cmd in crate::client::probe().cmd_iter() {
        probes.push(conn.run(cmd).await.unwrap_or(Value::Nil));
    }
    let native = Capabilities::parse(&probes);
    let acl = acl::gather(&mut conn, opts).await;
    NodeFacts {
        addr: addr.to_string(),
        info,
        config,
        cluster,
        library,
        native,
        acl,
    }
}

async fn text(conn: &mut Conn<'_>, cmd: &Cmd) -> Result<String, String> {
    let value = conn.run(cmd).await.map_err(short)?;
    redis::from_redis_value(value).map_err(|e| e.to_string())
}

/// A flat `[k, v, ...]` array (RESP2) or a map (RESP3) of strings.
fn pairs(value: Value) -> HashMap<String, String> {
    let items: Vec<(Value, Value)> = match value {
        Value::Map(m) => m,
        Value::Array(a) => {
            let mut it = a.into_iter();
            std::iter::from_fn(|| Some((it.next()?, it.next()?))).collect()
        }
        _ => Vec::new(),
    };
    items
        .into_iter()
        .filter_map(|(k, v)| {
            Some((
                redis::from_redis_value::<String>(k).ok()?,
                redis::from_redis_value::<String>(v).ok()?,
            ))
        })
        .collect()
}

async fn library(conn: &mut Conn<'_>) -> Library {
    let mut list = redis::cmd("FUNCTION");
    list.arg("LIST")
        .arg("LIBRARYNAME")
        .arg(LIBRARY_NAME)
        .arg("WITHCODE");
    let libs = match conn.run(&list).await {
        Ok(Value::Array(libs)) => libs,
        Ok(other) => return Library::Unknown(format!("unexpected reply {other:?}")),
        Err(e) => return Library::Unknown(short(e)),
    };
    let mut found = Library::Missing;
    for lib in libs {
        let lib = pairs(lib); // string entries only (`functions` is an array)
                              // LIBRARYNAME is a pattern: only the exact name counts.
        if lib.get("library_name").map(String::as_str) != Some(LIBRARY_NAME) {
            continue;
        }
        let code = lib.get("library_code").cloned().unwrap_or_default();
        found = match sha1_smol::Sha1::from(&code).digest().to_string() == LIBRARY_SHA1 {
            true => Library::Current,
            false => Library::Differs,
        };
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both map shapes read alike; non-string values are skipped, not a panic.
    #[test]
    fn pairs_of_both_protocols() {
        let s = |x: &str| Value::BulkString(x.as_bytes().to_vec());
        let flat = Value::Array(vec![s("a"), s("1"), s("b"), Value::Array(vec![]), s("c")]);
        assert_eq!(pairs(flat).get("a").map(String::as_str), Some("1"));
        let map = Value::Map(vec![(s("x"), s("y"))]);
        assert_eq!(pairs(map).get("x").map(String::as_str), Some("y"));
    }
}
