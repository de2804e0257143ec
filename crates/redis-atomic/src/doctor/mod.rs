//! The deployment audit: does this server (every node of this cluster) keep what the primitives
//! assume? One [`Row`] per check with a [`Status`], what was found and the fix.
//!
//! Why a library module and not only a CLI command: the client itself checks the most dangerous
//! setting, `maxmemory-policy`, once when it connects (one `INFO memory`, which managed services
//! that forbid `CONFIG` still answer), logs a warning and counts
//! `redis_atomic_server_warnings_total{check}` ([`crate::observe`]); and an application can ask
//! for the whole report at startup ([`Client::server_report`]). The `redis-atomic doctor`
//! command prints the same rows for any deployment.
//!
//! The checks, each judged per node:
//!
//! | check | fails when | because |
//! |---|---|---|
//! | `maxmemory-policy` | `maxmemory` is set and the policy evicts | locks, fences, records, permits and jobs vanish when memory is full |
//! | `persistence` | no AOF (RDB snapshots only, or nothing) | a crash loses what was acknowledged since the last snapshot |
//! | `replication` | a replica's link is down | (warns: no replica, or no `min-replicas-to-write`: what a failover loses) |
//! | `busy-reply-threshold` | — (warns when 0: a runaway script blocks every client) | |
//! | `version` | older than Redis 7.0 | shebang flags and Functions need 7.0 |
//! | `capabilities` | Functions missing with `Delivery::Functions` | lists Functions, `SET NX GET`, and the native lock path the client takes on this node (`DELIFEQ` / `DELEX IFEQ` release, `SET IFEQ` extend, or Lua) |
//! | `module` | — (warns when a native's version differs from this client's script: that one runs as the script) | reports the server module (`ratomic`): loaded or not, its version, the natives the client uses |
//! | `function-library` | other code under this build's library name | `FCALL` would run it |
//! | `cluster-slots` | a slot is not served, or the cluster state is not ok | |
//! | `acl <primitive>` | the user may not run a command the primitive sends or its scripts call | the derivation of `scripts acl` ([`crate::script::acl_rules`]) |
//!
//! A check the connected user may not run (`CONFIG`, `ACL DRYRUN`, `FUNCTION LIST` refused) is
//! a warning that says so, never a failure. What each setting can lose, per primitive:
//! `docs/durability.md`.

mod acl;
mod checks;
mod facts;
mod module;
mod rules;

/// The verdict scale and the `maxmemory-policy` judgement are the client's
/// ([`crate::client::memory`]): it judges the policy itself when it connects, and this audit
/// builds on the client, never the other way round.
pub use crate::client::memory::{MemoryCheck, Status};
pub use facts::NodeFacts;

use crate::client::cluster_nodes;
use crate::{Client, Delivery, Error};
use redis::aio::MultiplexedConnection;

/// One finding: a check, on some nodes, with what was found and the fix.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Row {
    /// The check (`maxmemory-policy`, `persistence`, `acl lock`, ...).
    pub check: String,
    /// The nodes (`host:port`) this finding holds for.
    pub nodes: Vec<String>,
    /// How it came out.
    pub status: Status,
    /// What was found, and what it means for the primitives.
    pub found: String,
    /// What to do about it (empty when ok).
    pub fix: String,
}

impl Row {
    /// A finding of `check` (nodes are added by whoever knows them).
    pub fn new(check: &str, status: Status, found: String, fix: &str) -> Row {
        Row {
            check: check.to_string(),
            nodes: Vec::new(),
            status,
            found,
            fix: fix.to_string(),
        }
    }
}

/// Every finding on a deployment, rows of identical findings on several nodes merged.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Report {
    /// One row per check and finding, in check order.
    pub rows: Vec<Row>,
}

impl Report {
    /// No row failed (warnings do not count).
    pub fn ok(&self) -> bool {
        self.rows.iter().all(|r| r.status != Status::Fail)
    }

    /// The failed rows.
    pub fn failures(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| r.status == Status::Fail)
    }

    /// The worst status of any row (Ok for an empty report).
    pub fn worst(&self) -> Status {
        self.rows
            .iter()
            .map(|r| r.status)
            .max()
            .unwrap_or(Status::Ok)
    }
}

/// What the audit assumes about the application.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct DoctorOptions {
    /// The application's keyspace namespace: ACL checks use a key under it.
    pub namespace: String,
    /// The user whose permissions are checked (default: the connected one, `ACL WHOAMI`).
    pub acl_user: Option<String>,
    /// How the application sends scripts (which delivery commands it needs, whether a missing
    /// Function library matters).
    pub delivery: Delivery,
    /// The application sets [`ClientConfig::force_lua`](crate::ClientConfig::force_lua): the
    /// `capabilities` row says the native commands go unused.
    pub force_lua: bool,
}

impl Default for DoctorOptions {
    fn default() -> Self {
        DoctorOptions {
            namespace: "app".to_string(),
            acl_user: None,
            delivery: Delivery::Eval,
            force_lua: false,
        }
    }
}

impl DoctorOptions {
    /// With this namespace.
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = namespace.into();
        self
    }

    /// Check this user's permissions instead of the connected user's.
    pub fn acl_user(mut self, user: impl Into<String>) -> Self {
        self.acl_user = Some(user.into());
        self
    }

    /// With this delivery.
    pub fn delivery(mut self, delivery: Delivery) -> Self {
        self.delivery = delivery;
        self
    }

    /// Whether the application forces the Lua path ([`DoctorOptions::force_lua`]).
    pub fn force_lua(mut self, force: bool) -> Self {
        self.force_lua = force;
        self
    }
}

/// Gathers one node's facts over `conn` (a connection to that node alone). Refused or failing
/// commands become unknown facts, never an error: the rows say what could not be checked.
pub async fn probe_node(
    conn: MultiplexedConnection,
    addr: &str,
    opts: &DoctorOptions,
) -> NodeFacts {
    facts::gather(facts::Conn::Node(conn), addr, opts).await
}

/// Judges the facts of every node of a deployment.
pub fn judge(nodes: &[NodeFacts], opts: &DoctorOptions) -> Report {
    rules::judge(nodes, opts)
}

impl Client {
    /// The audit of the server this client talks to — every node of a cluster — under `opts`
    /// (see the [module doc](crate::doctor)). About one round trip per check and node; meant for
    /// startup or a health endpoint, not for every request.
    ///
    /// A cluster client built by [`Client::connect_cluster`] audits every node listed by
    /// `CLUSTER NODES` (failed ones skipped); one built over a caller's connection, only the node
    /// its keyless commands reach.
    pub async fn server_report(&self, opts: &DoctorOptions) -> Result<Report, Error> {
        let mut facts = Vec::new();
        for (addr, conn) in self.node_connections().await? {
            let conn = match conn {
                Some(node) => facts::Conn::Node(node),
                None => facts::Conn::Client(self),
            };
            facts.push(facts::gather(conn, &addr, opts).await);
        }
        Ok(rules::judge(&facts, opts))
    }

    /// Each node to audit with a connection of its own, or None to go through this client.
    async fn node_connections(
        &self,
    ) -> Result<Vec<(String, Option<MultiplexedConnection>)>, Error> {
        if !self.is_cluster() {
            return Ok(vec![("server".into(), None)]);
        }
        let mut out = Vec::new();
        for node in cluster_nodes::reachable(self).await? {
            let Some(client) = self.node_client(&node.host, node.port) else {
                return Ok(vec![("cluster (one node)".into(), None)]);
            };
            let conn = client?
                .get_multiplexed_async_connection()
                .await
                .map_err(Error::Connection)?;
            out.push((node.addr(), Some(conn)));
        }
        Ok(out)
    }
}
