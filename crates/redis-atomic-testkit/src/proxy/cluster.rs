//! A Redis Cluster whose every node is reached through a [`FaultProxy`] of its own, so a fault
//! ([`Fault::CorruptReplies`], [`Fault::DropReplies`], …) applies to cluster traffic as it does
//! to a standalone server's.
//!
//! Why the nodes announce the proxies: a cluster client learns where to send each slot from the
//! nodes (`CLUSTER SLOTS`, `MOVED`, `ASK`), so a proxy in front of a node is bypassed unless
//! the node names the proxy's port as its own. Each node gets `cluster-announce-port` set to its
//! proxy's (the cluster bus keeps its real port, so gossip and failover are untouched), and the
//! cluster is handed over only once every node names every proxy. Replicas then replicate
//! through their primary's proxy too (their stream is not RESP the proxy follows: it passes
//! untouched).
//!
//! The nodes' own indexes and ports ([`RedisCluster::nodes`]) stay the real ones; helpers that
//! find a node by the port the cluster announces ([`RedisCluster::owner_of`]) do not work on such
//! a cluster: [`ProxiedCluster::owner_of`] does.

use super::{Fault, FaultProxy, ProxyStats};
use crate::cluster::{ClusterOptions, RedisCluster};
use crate::error::TestkitError;
use crate::faults;
use std::time::Duration;

/// A running cluster behind one proxy per node; drops (stops) the proxies, then the nodes.
#[derive(Debug)]
pub struct ProxiedCluster {
    proxies: Vec<FaultProxy>,
    cluster: RedisCluster,
}

impl ProxiedCluster {
    /// Starts a cluster ([`RedisCluster::start`]; no TLS: the proxies speak plain TCP), a proxy
    /// per node, and waits (30 s) until every node announces the proxies' ports and every
    /// replica is linked again.
    pub fn start(opts: ClusterOptions) -> Result<ProxiedCluster, TestkitError> {
        if opts.tls.is_some() {
            return Err(TestkitError::Cluster(
                "a proxied cluster speaks plain TCP: no TLS".into(),
            ));
        }
        let cluster = RedisCluster::start(opts)?;
        let mut proxies = Vec::new();
        for node in cluster.nodes() {
            let addr = node
                .addr()
                .ok_or_else(|| TestkitError::Cluster("a cluster node has no TCP address".into()))?;
            let proxy =
                FaultProxy::start(addr).map_err(crate::error::io("starting a node's proxy"))?;
            proxies.push(proxy);
        }
        for (node, proxy) in cluster.nodes().iter().zip(&proxies) {
            let port = proxy.addr().port().to_string();
            let mut conn = node.client().get_connection()?;
            let () = redis::cmd("CONFIG")
                .arg("SET")
                .arg("cluster-announce-port")
                .arg(&port)
                .query(&mut conn)?;
        }
        let cluster = ProxiedCluster { proxies, cluster };
        cluster.wait_announced()?;
        Ok(cluster)
    }

    /// Until every node's `CLUSTER NODES` lists every proxy's port and no node's real one,
    /// the cluster is ok, and every replica's link to its primary is up.
    fn wait_announced(&self) -> Result<(), TestkitError> {
        let proxy_ports: Vec<String> = self
            .proxies
            .iter()
            .map(|p| format!("127.0.0.1:{}@", p.addr().port()))
            .collect();
        let real_ports: Vec<String> = self
            .cluster
            .nodes()
            .iter()
            .map(|n| format!("127.0.0.1:{}@", n.port().unwrap_or(0)))
            .collect();
        let settled = || {
            for node in self.cluster.nodes() {
                let mut conn = node
                    .client()
                    .get_connection_with_timeout(Duration::from_secs(2))?;
                let nodes: String = redis::cmd("CLUSTER").arg("NODES").query(&mut conn)?;
                let info: String = redis::cmd("CLUSTER").arg("INFO").query(&mut conn)?;
                let repl: String = redis::cmd("INFO").arg("replication").query(&mut conn)?;
                let linked = repl.contains("role:master") || repl.contains("master_link_status:up");
                if !(proxy_ports.iter().all(|p| nodes.contains(p.as_str()))
                    && !real_ports.iter().any(|p| nodes.contains(p.as_str()))
                    && info.contains("cluster_state:ok")
                    && linked)
                {
                    return Ok(false);
                }
            }
            Ok(true)
        };
        faults::wait(
            Duration::from_secs(30),
            "every node announces its proxy",
            settled,
        )
    }

    /// The proxies' URLs, one per node (what a cluster client starts from).
    pub fn urls(&self) -> Vec<String> {
        self.proxies.iter().map(FaultProxy::url).collect()
    }

    /// Applies `fault` on every node's proxy.
    pub fn set(&self, fault: Fault) {
        for proxy in &self.proxies {
            proxy.set(fault);
        }
    }

    /// What the proxies did so far, together.
    pub fn stats(&self) -> ProxyStats {
        self.proxies
            .iter()
            .map(FaultProxy::stats)
            .fold(ProxyStats::default(), |a, b| a + b)
    }

    /// The proxies, in the order of [`RedisCluster::nodes`].
    pub fn proxies(&self) -> &[FaultProxy] {
        &self.proxies
    }

    /// Index (into [`RedisCluster::nodes`] and [`ProxiedCluster::proxies`]) of the node that
    /// serves `slot` now, found by the proxy port the cluster announces for it.
    pub fn owner_of(&self, slot: u16) -> Result<usize, TestkitError> {
        let port = self.cluster.announced_owner(slot)?;
        self.proxies
            .iter()
            .position(|p| i64::from(p.addr().port()) == port)
            .ok_or_else(|| TestkitError::Cluster(format!("slot {slot}: proxy port {port}?")))
    }

    /// The cluster behind them.
    pub fn cluster(&self) -> &RedisCluster {
        &self.cluster
    }
}
