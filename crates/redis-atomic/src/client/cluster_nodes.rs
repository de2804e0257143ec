//! `CLUSTER NODES`, read once for everyone who asks a cluster which nodes it has: the client's
//! capability probe of every node, the doctor's per-node audit, and the command line's library
//! deployment (`redis-atomic functions`), which needs roles, primaries and slot counts as well.
//!
//! One line per node: `<id> <ip:port@cport[,hostname]> <flags> <primary id or -> <ping-sent>
//! <pong-recv> <config-epoch> <link-state> <slot> <slot> ...`, where a slot is a number, a range
//! `a-b`, or a migration marker `[slot->-id]` / `[slot-<-id]` (owned by nobody yet). Lines with
//! fewer fields, or an address that is not `host:port`, are skipped: the reply is the server's,
//! and a node it cannot describe is a node nobody can reach.

use crate::{Client, Error};

/// One node as `CLUSTER NODES` lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClusterNode {
    /// The node id.
    pub id: String,
    /// The host (the announced IP; empty for a node whose address is not known yet).
    pub host: String,
    /// The client port.
    pub port: u16,
    /// The flags (`myself`, `master`, `slave`, `fail?`, `fail`, `handshake`, `noaddr`, ...).
    pub flags: Vec<String>,
    /// For a replica, the id of its primary.
    pub primary: Option<String>,
    /// The slots it serves, as listed (`0-5460`, `7`, `[93->-id]`).
    pub slots: Vec<String>,
}

impl ClusterNode {
    /// `host:port`.
    pub fn addr(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    /// Whether the node has `flag` (exactly: `fail` is not `fail?`).
    pub fn has_flag(&self, flag: &str) -> bool {
        self.flags.iter().any(|f| f == flag)
    }

    /// A replica (`slave`).
    pub fn is_replica(&self) -> bool {
        self.has_flag("slave")
    }

    /// Still joining the cluster (`handshake`) or with no known address (`noaddr`): not a node
    /// to connect to.
    pub fn is_joining(&self) -> bool {
        self.has_flag("handshake") || self.has_flag("noaddr")
    }

    /// Joined and not failed (`fail`; a suspected `fail?` still counts): a node to connect to.
    pub fn is_reachable(&self) -> bool {
        !self.is_joining() && !self.has_flag("fail")
    }

    /// How many hash slots it serves (`0-5460` counts 5461; a migration marker none).
    pub fn slot_count(&self) -> usize {
        self.slots.iter().map(|s| slot_count(s)).sum()
    }
}

/// Every node `text` (a `CLUSTER NODES` reply) describes, in its order.
pub fn parse(text: &str) -> Vec<ClusterNode> {
    text.lines().filter_map(node).collect()
}

/// The nodes of `client`'s cluster to connect to ([`ClusterNode::is_reachable`]), asked through
/// the client.
pub(crate) async fn reachable(client: &Client) -> Result<Vec<ClusterNode>, Error> {
    let reply = client.command(redis::cmd("CLUSTER").arg("NODES")).await?;
    let text: String = redis::from_redis_value(reply).map_err(|e| Error::BadReply {
        script: "CLUSTER NODES",
        detail: e.to_string(),
    })?;
    let mut nodes = parse(&text);
    nodes.retain(ClusterNode::is_reachable);
    Ok(nodes)
}

fn node(line: &str) -> Option<ClusterNode> {
    let f: Vec<&str> = line.split_whitespace().collect();
    if f.len() < 8 {
        return None;
    }
    let addr = f[1].split(['@', ',']).next()?;
    let (host, port) = addr.rsplit_once(':')?;
    Some(ClusterNode {
        id: f[0].to_string(),
        host: host.to_string(),
        port: port.parse().ok()?,
        flags: f[2].split(',').map(str::to_string).collect(),
        primary: Some(f[3]).filter(|p| *p != "-").map(str::to_string),
        slots: f[8..].iter().map(|s| s.to_string()).collect(),
    })
}

/// `0-5460` → 5461, `7` → 1, `[..]` (migrating or importing) → 0.
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

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "a 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460 [5461->-b]\n\
                        b 127.0.0.1:7001@17001,host master,fail - 0 0 2 connected 5461-10922\n\
                        c :0@0 handshake - 0 0 0 connected\n\
                        d 127.0.0.1:7003@17003 slave a 0 0 1 connected\n\
                        short line\n";

    /// Ids, addresses (bus port and hostname cut off), flags, primaries and slots; a line of too
    /// few fields is skipped.
    #[test]
    fn every_field() {
        let nodes = parse(TEXT);
        assert_eq!(nodes.len(), 4);
        assert_eq!(nodes[1].addr(), "127.0.0.1:7001");
        assert_eq!((nodes[2].host.as_str(), nodes[2].port), ("", 0));
        assert_eq!(nodes[3].primary.as_deref(), Some("a"));
        assert_eq!(nodes[0].primary, None);
        assert_eq!(nodes[0].slot_count(), 5461);
        assert!(nodes[3].is_replica() && !nodes[0].is_replica());
    }

    /// Failed and half-joined nodes are not reachable; joining is only handshake and noaddr.
    #[test]
    fn reachable_and_joining() {
        let nodes = parse(TEXT);
        let reachable: Vec<String> = nodes
            .iter()
            .filter(|n| n.is_reachable())
            .map(ClusterNode::addr)
            .collect();
        assert_eq!(reachable, ["127.0.0.1:7000", "127.0.0.1:7003"]);
        let joining: Vec<&str> = nodes
            .iter()
            .filter(|n| n.is_joining())
            .map(|n| n.id.as_str())
            .collect();
        assert_eq!(joining, ["c"]);
    }

    /// Slot ranges count inclusively; migrating/importing markers own nothing.
    #[test]
    fn slot_ranges() {
        assert_eq!(slot_count("0-5460"), 5461);
        assert_eq!(slot_count("16383"), 1);
        assert_eq!(slot_count("[5461->-abc]"), 0);
        assert_eq!(slot_count("9-3"), 0);
    }
}
