//! The nodes a library must be on, and what each one has loaded.
//!
//! Discovery asks the server, not the user: in a cluster, `CLUSTER NODES` lists every primary,
//! including primaries that own no slots yet (a shard just added, which Redis does not copy
//! libraries to, redis/redis #11780); on a standalone server, `INFO replication` lists its
//! replicas. Connections reuse the seed URL's credentials and TLS settings with each node's
//! address, and are plain blocking connections: an ops command talks to a handful of nodes once.

use anyhow::{bail, Context as _};
use redis::{ConnectionAddr, ConnectionInfo, IntoConnectionInfo, Value};
use serde::Serialize;
use std::time::Duration;

/// Prefix of every redis-atomic library name (`redis_atomic_v<N>`).
pub const PREFIX: &str = "redis_atomic_v";
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
    /// Connection settings (seed credentials, this node's address).
    #[serde(skip)]
    pub info: ConnectionInfo,
}

/// One redis-atomic library loaded on a node.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Installed {
    /// `redis_atomic_v<N>`.
    pub name: String,
    /// N.
    pub version: u32,
    /// SHA1 of the library code, comparable with `registry::LIBRARY_SHA1`.
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

fn at_addr(seed: &ConnectionInfo, host: &str, port: u16) -> anyhow::Result<ConnectionInfo> {
    let addr = match seed.addr() {
        ConnectionAddr::Tcp(..) => ConnectionAddr::Tcp(host.to_string(), port),
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
        _ => bail!("a unix-socket URL reaches one node only; use redis:// or rediss:// for a cluster or replicas"),
    };
    Ok(seed.clone().set_addr(addr))
}

fn host_port(addr: &str) -> anyhow::Result<(String, u16)> {
    let (host, port) = addr
        .rsplit_once(':')
        .with_context(|| format!("bad node address `{addr}`"))?;
    Ok((host.to_string(), port.parse()?))
}

/// Every node reachable from `url`: the cluster's nodes (`cluster`), or the server and its
/// replicas.
pub fn discover(url: &str, cluster: bool) -> anyhow::Result<Vec<Node>> {
    let seed = url.into_connection_info().context("parsing --url")?;
    let mut conn = connect(&seed).context("connecting to --url")?;
    if cluster {
        let text: String = redis::cmd("CLUSTER").arg("NODES").query(&mut conn)?;
        cluster_nodes(&seed, &text)
    } else {
        standalone_nodes(&seed, &mut conn)
    }
}

fn cluster_nodes(seed: &ConnectionInfo, text: &str) -> anyhow::Result<Vec<Node>> {
    let rows: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split_whitespace().collect())
        .filter(|f: &Vec<&str>| f.len() >= 8)
        .filter(|f| !f[2].contains("handshake") && !f[2].contains("noaddr"))
        .collect();
    let addr_of = |f: &[&str]| f[1].split(['@', ',']).next().unwrap_or("").to_string();
    let mut nodes = Vec::new();
    for f in &rows {
        let addr = addr_of(f);
        let (host, port) = host_port(&addr)?;
        let replica = f[2].contains("slave");
        let primary = rows
            .iter()
            .find(|p| replica && p[0] == f[3])
            .map(|p| addr_of(p));
        let slots = f[8..].iter().map(|r| slot_count(r)).sum();
        nodes.push(Node {
            addr,
            role: if replica {
                Role::Replica
            } else {
                Role::Primary
            },
            primary,
            slots: Some(slots),
            info: at_addr(seed, &host, port)?,
        });
    }
    nodes.sort_by(|a, b| {
        (a.role == Role::Replica, &a.addr).cmp(&(b.role == Role::Replica, &b.addr))
    });
    Ok(nodes)
}

/// `0-5460` → 5461, `7` → 1, `[..]` (migrating) → 0.
fn slot_count(range: &str) -> usize {
    if range.starts_with('[') {
        return 0;
    }
    match range.split_once('-') {
        Some((a, b)) => match (a.parse::<usize>(), b.parse::<usize>()) {
            (Ok(a), Ok(b)) if b >= a => b - a + 1,
            _ => 0,
        },
        None => usize::from(range.parse::<usize>().is_ok()),
    }
}

fn standalone_nodes(
    seed: &ConnectionInfo,
    conn: &mut redis::Connection,
) -> anyhow::Result<Vec<Node>> {
    let info: String = redis::cmd("INFO").arg("replication").query(conn)?;
    if info.contains("role:slave") {
        bail!("--url points at a replica: point it at the primary");
    }
    let self_addr = match seed.addr() {
        ConnectionAddr::Tcp(h, p) => format!("{h}:{p}"),
        ConnectionAddr::TcpTls { host, port, .. } => format!("{host}:{port}"),
        other => format!("{other:?}"),
    };
    let mut nodes = vec![Node {
        addr: self_addr.clone(),
        role: Role::Primary,
        primary: None,
        slots: None,
        info: seed.clone(),
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
            info: at_addr(seed, &ip, port.parse()?)?,
        });
    }
    Ok(nodes)
}

/// The redis-atomic libraries loaded on one node, by version.
pub fn installed(conn: &mut redis::Connection) -> anyhow::Result<Vec<Installed>> {
    let reply: Value = redis::cmd("FUNCTION")
        .arg("LIST")
        .arg("LIBRARYNAME")
        .arg(format!("{PREFIX}*"))
        .arg("WITHCODE")
        .query(conn)?;
    let Value::Array(libs) = reply else {
        bail!("unexpected FUNCTION LIST reply: {reply:?}");
    };
    let mut out = Vec::new();
    for lib in &libs {
        let (Some(name), Some(code)) = (field(lib, "library_name"), field(lib, "library_code"))
        else {
            continue;
        };
        let Some(version) = name.strip_prefix(PREFIX).and_then(|v| v.parse().ok()) else {
            continue;
        };
        out.push(Installed {
            sha1: sha1_smol::Sha1::from(&code).digest().to_string(),
            name,
            version,
            code,
        });
    }
    out.sort_by_key(|l| l.version);
    Ok(out)
}

/// A string field of a RESP2 flat map (`[k, v, k, v]`) or a RESP3 map.
fn field(map: &Value, key: &str) -> Option<String> {
    let pairs: Vec<(&Value, &Value)> = match map {
        Value::Array(items) => items
            .chunks(2)
            .filter_map(|c| Some((c.first()?, c.get(1)?)))
            .collect(),
        Value::Map(items) => items.iter().map(|(k, v)| (k, v)).collect(),
        _ => return None,
    };
    pairs.into_iter().find_map(|(k, v)| {
        let k: String = redis::from_redis_value_ref(k).ok()?;
        (k == key)
            .then(|| redis::from_redis_value_ref(v).ok())
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Slot ranges count inclusively; migrating/importing markers own nothing.
    #[test]
    fn slot_ranges() {
        assert_eq!(slot_count("0-5460"), 5461);
        assert_eq!(slot_count("16383"), 1);
        assert_eq!(slot_count("[5461->-abc]"), 0);
    }
}
