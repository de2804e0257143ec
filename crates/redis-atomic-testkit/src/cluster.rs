//! A Redis Cluster of real processes: N primaries with R replicas each.
//!
//! Built with plain commands (`CLUSTER SET-CONFIG-EPOCH`, `ADDSLOTSRANGE`, `MEET`, `REPLICATE`)
//! rather than `redis-cli --cluster create`, so only the server binary is needed. `start`
//! returns only when every node reports `cluster_state:ok`, knows every other node, and every
//! replica's link to its primary is up: tests never race the cluster's own convergence.

use crate::error::TestkitError;
use crate::server::{RedisServer, ServerOptions};
use crate::tls::ServerTls;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Shape of a cluster.
#[derive(Clone, Debug)]
pub struct ClusterOptions {
    /// Primaries (each owns an equal share of the 16384 slots).
    pub primaries: usize,
    /// Replicas per primary.
    pub replicas_per_primary: usize,
    /// `cluster-node-timeout` in ms (failure detection speed).
    pub node_timeout_ms: u64,
    /// Server binary override.
    pub binary: Option<PathBuf>,
    /// Every node serves TLS only, cluster bus and replication included (`tls-cluster yes`,
    /// `tls-replication yes`).
    pub tls: Option<ServerTls>,
    /// Extra `directive value` config lines for every node (e.g. `loadmodule <path>`).
    pub extra_config: Vec<String>,
}

impl Default for ClusterOptions {
    fn default() -> Self {
        ClusterOptions {
            primaries: 3,
            replicas_per_primary: 1,
            node_timeout_ms: 1000,
            binary: None,
            tls: None,
            extra_config: Vec::new(),
        }
    }
}

impl ClusterOptions {
    /// Three primaries and no replicas: the cluster a test of its own stalls, fills or
    /// reconfigures as a whole (no replica to fail over to while it is stalled, no link to wait
    /// for), and the one every such test starts (with a field or two changed).
    pub fn primaries_only() -> ClusterOptions {
        ClusterOptions {
            replicas_per_primary: 0,
            ..ClusterOptions::default()
        }
    }
}

/// A running cluster; drops (kills) every node.
#[derive(Debug)]
pub struct RedisCluster {
    nodes: Vec<RedisServer>,
    primaries: usize,
    /// Kept for nodes added later ([`RedisCluster::add_primary`]).
    opts: ClusterOptions,
}

type Conn = redis::Connection;

fn conn(server: &RedisServer) -> Result<Conn, TestkitError> {
    Ok(server
        .client()
        .get_connection_with_timeout(Duration::from_secs(2))?)
}

fn query<T: redis::FromRedisValue>(c: &mut Conn, args: &[&str]) -> Result<T, TestkitError> {
    let mut cmd = redis::cmd(args[0]);
    for a in &args[1..] {
        cmd.arg(*a);
    }
    Ok(cmd.query(c)?)
}

impl RedisCluster {
    /// Starts and joins the nodes, waiting (30 s deadline) until the cluster is fully formed.
    pub fn start(opts: ClusterOptions) -> Result<RedisCluster, TestkitError> {
        if opts.primaries == 0 || opts.primaries > 64 {
            return Err(TestkitError::Cluster(format!(
                "primaries must be 1..=64, got {}",
                opts.primaries
            )));
        }
        let total = opts.primaries * (1 + opts.replicas_per_primary);
        let mut nodes = Vec::with_capacity(total);
        for _ in 0..total {
            nodes.push(Self::start_node(&opts)?);
        }
        let cluster = RedisCluster {
            nodes,
            primaries: opts.primaries,
            opts: opts.clone(),
        };
        cluster.form(&opts)?;
        Ok(cluster)
    }

    fn start_node(opts: &ClusterOptions) -> Result<RedisServer, TestkitError> {
        RedisServer::start(ServerOptions {
            cluster: true,
            binary: opts.binary.clone(),
            tls: opts.tls.clone(),
            extra_config: [
                format!("cluster-node-timeout {}", opts.node_timeout_ms),
                // Diskless sync waits 5 s by default for more replicas to join; each primary
                // has its few replicas attached at once, so waiting only slows formation.
                "repl-diskless-sync-delay 0".into(),
            ]
            .into_iter()
            .chain(opts.extra_config.iter().cloned())
            .collect(),
            ..ServerOptions::default()
        })
    }

    /// Starts one more node and `CLUSTER MEET`s it: a primary that owns no slots, like a shard
    /// just added before resharding (Redis copies no Function libraries to it:
    /// <https://github.com/redis/redis/issues/11780>). Returns once every node knows every node. It
    /// is listed last in [`Self::nodes`].
    pub fn add_primary(&mut self) -> Result<&RedisServer, TestkitError> {
        let node = Self::start_node(&self.opts)?;
        let port = node.port().unwrap_or(0).to_string();
        let _: () = query(
            &mut conn(&self.nodes[0])?,
            &["CLUSTER", "MEET", "127.0.0.1", &port],
        )?;
        self.nodes.push(node);
        self.wait_until_all_known("every node knows the added primary")?;
        Ok(&self.nodes[self.nodes.len() - 1])
    }

    fn form(&self, opts: &ClusterOptions) -> Result<(), TestkitError> {
        let mut conns = self.nodes.iter().map(conn).collect::<Result<Vec<_>, _>>()?;
        for (i, c) in conns.iter_mut().enumerate() {
            let _: () = query(c, &["CLUSTER", "SET-CONFIG-EPOCH", &(i + 1).to_string()])?;
        }
        let per = 16384 / self.primaries;
        for (i, c) in conns.iter_mut().take(self.primaries).enumerate() {
            let end = if i + 1 == self.primaries {
                16383
            } else {
                (i + 1) * per - 1
            };
            let _: () = query(
                c,
                &[
                    "CLUSTER",
                    "ADDSLOTSRANGE",
                    &(i * per).to_string(),
                    &end.to_string(),
                ],
            )?;
        }
        for node in &self.nodes[1..] {
            let port = node.port().unwrap_or(0).to_string();
            let _: () = query(&mut conns[0], &["CLUSTER", "MEET", "127.0.0.1", &port])?;
        }
        self.wait_until_all_known("every node knows every node")?;
        let ids = conns[..self.primaries]
            .iter_mut()
            .map(|c| query::<String>(c, &["CLUSTER", "MYID"]))
            .collect::<Result<Vec<_>, _>>()?;
        for r in 0..opts.replicas_per_primary {
            for (p, id) in ids.iter().enumerate() {
                let replica = self.primaries + r * self.primaries + p;
                let _: () = query(&mut conns[replica], &["CLUSTER", "REPLICATE", id])?;
            }
        }
        let replicas = opts.replicas_per_primary;
        let primaries = self.primaries;
        let total = self.nodes.len();
        self.wait(
            "cluster_state:ok and replicas linked everywhere",
            move |c| {
                let info: String = query(c, &["CLUSTER", "INFO"])?;
                let repl: String = query(c, &["INFO", "replication"])?;
                let ok = info.contains("cluster_state:ok")
                    && info.contains("cluster_slots_ok:16384")
                    && info.contains(&format!("cluster_known_nodes:{total}"));
                let linked = if repl.contains("role:master") {
                    repl.contains(&format!("connected_slaves:{replicas}"))
                        && repl.matches("state=online").count() == replicas
                } else {
                    repl.contains("master_link_status:up")
                };
                let shards: redis::Value = query(c, &["CLUSTER", "SLOTS"])?;
                let ranges = match shards {
                    redis::Value::Array(v) => v.len(),
                    _ => 0,
                };
                Ok(ok && linked && ranges == primaries)
            },
        )
    }

    fn wait(
        &self,
        what: &str,
        check: impl Fn(&mut Conn) -> Result<bool, TestkitError>,
    ) -> Result<(), TestkitError> {
        self.wait_nudging(what, || Ok(()), check)
    }

    /// Waits (30 s deadline) until `check` holds on every node, calling `nudge` every twice the
    /// node timeout while it does not. A node that does not answer in time, or a connection
    /// refused, is "not yet" (a loaded machine can be that slow), reported only if the deadline
    /// passes.
    fn wait_nudging(
        &self,
        what: &str,
        mut nudge: impl FnMut() -> Result<(), TestkitError>,
        check: impl Fn(&mut Conn) -> Result<bool, TestkitError>,
    ) -> Result<(), TestkitError> {
        let deadline = Instant::now() + Duration::from_secs(30);
        let every = Duration::from_millis(2 * self.opts.node_timeout_ms.max(100));
        let mut next_nudge = Instant::now() + every;
        let mut last_error = None;
        loop {
            match self.holds_everywhere(&check) {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(e) => last_error = Some(e),
            }
            if Instant::now() > deadline {
                let last = last_error.map_or(String::new(), |e| format!(" (last error: {e})"));
                return Err(TestkitError::Cluster(format!(
                    "not reached within 30 s: {what}{last}"
                )));
            }
            if Instant::now() > next_nudge {
                if let Err(e) = nudge() {
                    last_error = Some(e);
                }
                next_nudge = Instant::now() + every;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn holds_everywhere(
        &self,
        check: &impl Fn(&mut Conn) -> Result<bool, TestkitError>,
    ) -> Result<bool, TestkitError> {
        for node in &self.nodes {
            if !check(&mut conn(node)?)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Waits until every node lists every node, none of them still joining (`handshake`,
    /// `noaddr`), meeting again the nodes a dropped handshake left out ([`Self::meet_the_missing`]).
    fn wait_until_all_known(&self, what: &str) -> Result<(), TestkitError> {
        let total = self.nodes.len();
        let knows_all = |c: &mut Conn| {
            let nodes: String = query(c, &["CLUSTER", "NODES"])?;
            Ok(nodes.lines().count() == total
                && !nodes.contains("handshake")
                && !nodes.contains("noaddr"))
        };
        self.wait_nudging(what, || self.meet_the_missing(), knows_all)
    }

    /// `CLUSTER MEET`s, from the first node, every node it does not know yet. A handshake that
    /// does not complete within the node timeout is dropped by the server, and nobody meets that
    /// node again: on a loaded machine the cluster would never form.
    fn meet_the_missing(&self) -> Result<(), TestkitError> {
        let mut first = conn(&self.nodes[0])?;
        let known: String = query(&mut first, &["CLUSTER", "NODES"])?;
        for node in &self.nodes[1..] {
            let port = node.port().unwrap_or(0).to_string();
            let addr = format!(" 127.0.0.1:{port}@");
            let met = known
                .lines()
                .any(|l| l.contains(&addr) && !l.contains("handshake"));
            if !met {
                let _: () = query(&mut first, &["CLUSTER", "MEET", "127.0.0.1", &port])?;
            }
        }
        Ok(())
    }

    /// One default 3+3 cluster per test binary. Its nodes are spawned from a dedicated thread
    /// that lives as long as the process, so `PR_SET_PDEATHSIG` kills them when the binary exits.
    /// Panics with the reason when the cluster cannot start.
    pub fn shared() -> &'static RedisCluster {
        static SHARED: OnceLock<RedisCluster> = OnceLock::new();
        SHARED.get_or_init(|| {
            crate::server::on_lasting_thread("redis-atomic-testkit-cluster", || {
                RedisCluster::start(ClusterOptions::default())
            })
        })
    }

    /// Every node's URL.
    pub fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(RedisServer::url).collect()
    }

    /// The primaries' URLs (as built; after a failover the roles may differ).
    pub fn primary_urls(&self) -> Vec<String> {
        self.nodes[..self.primaries]
            .iter()
            .map(RedisServer::url)
            .collect()
    }

    /// The nodes: primaries first, then replicas, then primaries added by
    /// [`RedisCluster::add_primary`].
    pub fn nodes(&self) -> &[RedisServer] {
        &self.nodes
    }

    /// A cluster client over every node (with TLS: trusting the CA, presenting the client
    /// certificate).
    pub fn cluster_client(&self) -> redis::cluster::ClusterClient {
        let mut builder = redis::cluster::ClusterClientBuilder::new(self.urls());
        if let Some(tls) = &self.opts.tls {
            builder = builder.certs(tls.material.redis_certificates());
        }
        builder
            .build()
            .unwrap_or_else(|e| panic!("cluster client: {e}"))
    }
}
