//! The nodes a library must be on, and what each one has loaded.
//!
//! Discovery asks the server, not the user: in a cluster, `CLUSTER NODES` lists every primary,
//! including primaries that own no slots yet (a shard just added, which Redis does not copy
//! libraries to: <https://github.com/redis/redis/issues/11780>); on a standalone server,
//! `INFO replication` lists its replicas. Connections reuse the given URL's credentials and TLS
//! settings with each node's address, and are plain blocking connections: an ops command talks
//! to a handful of nodes once.

use super::spec::LibrarySpec;
use anyhow::{bail, Context as _};
use redis::{ConnectionAddr, ConnectionInfo, Value};
use serde::Serialize;
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(5);

/// A node's role.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Takes writes; `FUNCTION LOAD` goes here.
    Primary,
    /// Receives the library through replication.
    Replica,
}

/// One node.
#[derive(Clone, Debug, Serialize)]
pub struct Node {
    /// `host:port`.
    pub addr: String,
    /// Primary or replica.
    pub role: Role,
    /// For a replica, its primary's address.
    pub primary: Option<String>,
    /// Hash slots owned by a cluster primary (0 for a new, empty shard); `None` outside a cluster.
    pub slots: Option<usize>,
    /// Connection settings (the given URL's credentials, this node's address).
    #[serde(skip)]
    pub info: ConnectionInfo,
}

/// One library of the family acted on, loaded on a node.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Installed {
    /// `redis_atomic_v<N>` or `NAME_v<N>`.
    pub name: String,
    /// N.
    pub version: u32,
    /// SHA1 of the library code, comparable with the spec's.
    pub sha1: String,
    /// The code itself (for `diff`).
    #[serde(skip)]
    pub code: String,
}

/// A blocking connection to `node` with timeouts.
pub fn connect(info: &ConnectionInfo) -> anyhow::Result<redis::Connection> {
    let client = redis::Client::open(info.clone())?;
    let conn = client.get_connection_with_timeout(TIMEOUT)?;
    conn.set_read_timeout(Some(TIMEOUT))?;
    conn.set_write_timeout(Some(TIMEOUT))?;
    Ok(conn)
}

fn at_addr(given: &ConnectionInfo, host: &str, port: u16) -> anyhow::Result<ConnectionInfo> {
    match given.addr() {
        ConnectionAddr::Tcp(..) | ConnectionAddr::TcpTls { .. } => {
            Ok(redis_atomic::client::node_info(given, host, port))
        }
        _ => bail!("a unix-socket URL reaches one node only; use redis:// or rediss:// for a cluster or replicas"),
    }
}

/// Every node reachable from `url`: the cluster's nodes (`cluster`), or the server and its
/// replicas. `tls` (CA, client certificate) applies to every node of a `rediss://` URL.
pub fn discover(
    url: &str,
    cluster: bool,
    tls: Option<&redis_atomic::TlsOptions>,
) -> anyhow::Result<Vec<Node>> {
    let given = redis_atomic::client::redis_client(url, tls)
        .context("parsing --url")?
        .get_connection_info()
        .clone();
    let mut conn = connect(&given).context("connecting to --url")?;
    if cluster {
        let text: String = redis::cmd("CLUSTER").arg("NODES").query(&mut conn)?;
        cluster_nodes(&given, &text)
    } else {
        standalone_nodes(&given, &mut conn)
    }
}

/// The cluster's nodes but those still joining (a failed node is listed: reaching it fails
/// loudly), primaries first, each by address.
fn cluster_nodes(given: &ConnectionInfo, text: &str) -> anyhow::Result<Vec<Node>> {
    let listed = redis_atomic::client::cluster_nodes::parse(text);
    let mut nodes = Vec::new();
    for n in listed.iter().filter(|n| !n.is_joining()) {
        let primary = match &n.primary {
            Some(id) if n.is_replica() => listed.iter().find(|p| &p.id == id).map(|p| p.addr()),
            _ => None,
        };
        nodes.push(Node {
            addr: n.addr(),
            role: if n.is_replica() {
                Role::Replica
            } else {
                Role::Primary
            },
            primary,
            slots: Some(n.slot_count()),
            info: at_addr(given, &n.host, n.port)?,
        });
    }
    nodes.sort_by(|a, b| {
        (a.role == Role::Replica, &a.addr).cmp(&(b.role == Role::Replica, &b.addr))
    });
    Ok(nodes)
}

fn standalone_nodes(
    given: &ConnectionInfo,
    conn: &mut redis::Connection,
) -> anyhow::Result<Vec<Node>> {
    let info: String = redis::cmd("INFO").arg("replication").query(conn)?;
    if info.contains("role:slave") {
        bail!("--url points at a replica: point it at the primary");
    }
    let self_addr = match given.addr() {
        ConnectionAddr::Tcp(h, p) => format!("{h}:{p}"),
        ConnectionAddr::TcpTls { host, port, .. } => format!("{host}:{port}"),
        other => format!("{other:?}"),
    };
    let mut nodes = vec![Node {
        addr: self_addr.clone(),
        role: Role::Primary,
        primary: None,
        slots: None,
        info: given.clone(),
    }];
    for line in info.lines().filter(|l| l.starts_with("slave")) {
        let field = |k: &str| {
            line.split([':', ','])
                .find_map(|kv| kv.strip_prefix(k))
                .map(str::to_string)
        };
        let (Some(ip), Some(port)) = (field("ip="), field("port=")) else {
            continue;
        };
        nodes.push(Node {
            addr: format!("{ip}:{port}"),
            role: Role::Replica,
            primary: Some(self_addr.clone()),
            slots: None,
            info: at_addr(given, &ip, port.parse()?)?,
        });
    }
    Ok(nodes)
}

/// A function and the library that registers it.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Owned {
    /// The function's name (global on a server).
    pub function: String,
    /// The library registering it.
    pub library: String,
}

/// What one node has loaded.
#[derive(Clone, Debug, Default)]
pub struct Listing {
    /// The family's libraries, by version.
    pub versions: Vec<Installed>,
    /// Every function of every library, with its owner (collisions are found here).
    pub functions: Vec<Owned>,
}

/// Every library on one node (`FUNCTION LIST WITHCODE`): the versions of `spec`'s family, and
/// who owns which function name.
pub fn listing(conn: &mut redis::Connection, spec: &LibrarySpec) -> anyhow::Result<Listing> {
    let reply: Value = redis::cmd("FUNCTION")
        .arg("LIST")
        .arg("WITHCODE")
        .query(conn)?;
    parse_listing(reply, spec)
}

fn parse_listing(reply: Value, spec: &LibrarySpec) -> anyhow::Result<Listing> {
    let Value::Array(libs) = reply else {
        bail!("unexpected FUNCTION LIST reply: {reply:?}");
    };
    let mut out = Listing::default();
    for lib in &libs {
        let Some(name) = field(lib, "library_name").and_then(string) else {
            continue;
        };
        let functions = match field(lib, "functions") {
            Some(Value::Array(fs)) => fs.as_slice(),
            _ => &[],
        };
        out.functions.extend(
            functions
                .iter()
                .filter_map(|f| field(f, "name").and_then(string))
                .map(|function| Owned {
                    function,
                    library: name.clone(),
                }),
        );
        let (Some(version), Some(code)) = (
            spec.version_of(&name),
            field(lib, "library_code").and_then(string),
        ) else {
            continue;
        };
        out.versions.push(Installed {
            sha1: sha1_smol::Sha1::from(&code).digest().to_string(),
            name,
            version,
            code,
        });
    }
    out.versions.sort_by_key(|l| l.version);
    Ok(out)
}

/// The value of `key` in a RESP2 flat map (`[k, v, k, v]`) or a RESP3 map.
fn field<'a>(map: &'a Value, key: &str) -> Option<&'a Value> {
    let pairs: Vec<(&Value, &Value)> = match map {
        Value::Array(items) => items
            .chunks(2)
            .filter_map(|c| Some((c.first()?, c.get(1)?)))
            .collect(),
        Value::Map(items) => items.iter().map(|(k, v)| (k, v)).collect(),
        _ => return None,
    };
    pairs
        .into_iter()
        .find(|(k, _)| string(k).as_deref() == Some(key))
        .map(|(_, v)| v)
}

fn string(v: &Value) -> Option<String> {
    redis::from_redis_value_ref(v).ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn bulk(s: &str) -> Value {
        Value::BulkString(s.as_bytes().to_vec())
    }

    /// Libraries of the family are listed with their version and SHA1, and every function of
    /// every library with its owner, from RESP2 flat maps as from RESP3 maps.
    #[test]
    fn listing_finds_versions_and_owners() {
        let spec = LibrarySpec::builtin();
        let function = |name: &str| Value::Array(vec![bulk("name"), bulk(name)]);
        let ours = Value::Array(vec![
            bulk("library_name"),
            bulk(&spec.name_of(3)),
            bulk("functions"),
            Value::Array(vec![function("ra3_x")]),
            bulk("library_code"),
            bulk("code"),
        ]);
        let other = Value::Map(vec![
            (bulk("library_name"), bulk("other_v1")),
            (bulk("functions"), Value::Array(vec![function("ra9_y")])),
        ]);
        let got = parse_listing(Value::Array(vec![ours, other, Value::Nil]), &spec).unwrap();
        assert_eq!(got.versions.len(), 1);
        assert_eq!(
            (got.versions[0].version, got.versions[0].code.as_str()),
            (3, "code")
        );
        let owners: Vec<(&str, &str)> = got
            .functions
            .iter()
            .map(|o| (o.function.as_str(), o.library.as_str()))
            .collect();
        assert_eq!(
            owners,
            [("ra3_x", spec.name_of(3).as_str()), ("ra9_y", "other_v1")]
        );
        assert!(parse_listing(Value::Nil, &spec).is_err());
    }
}
