//! What a run leaves behind on a server it does not own ([`crate::Cleanup::Sweep`], what `verify
//! --url` does): nothing.
//!
//! Every key a run writes lives under its own `<namespace>-<run>-<check>` namespaces. Three layers
//! keep them from outliving the run:
//! * keys verify writes itself are written with a TTL ([`CheckCtx::key_ttl`]);
//! * keys a primitive keeps without one on purpose (a queue's state, a counter created by
//!   `INCRBY`) get it from a [`Keeper`] that re-applies `PEXPIRE ... NX` every 200 ms while the
//!   check runs, so even a killed run leaves only keys that expire;
//! * when the run ends (all checks passed or not), the sweep deletes the run's namespaces on every
//!   primary: `SCAN MATCH <namespace>-<run>-*` a page of 500 at a time (on each primary of a
//!   cluster: a cursor belongs to one node), each key of a page unlinked on its own, 32 in flight
//!   (cluster-safe: no multi-key command crosses slots).
//!
//! The commands used here are in verify's ACL ([`crate::acl`]).

use crate::check::{CheckError, CheckResult};
use crate::ctx::CheckCtx;
use futures::StreamExt as _;
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::{MultipleNodeRoutingInfo, RoutingInfo, SingleNodeRoutingInfo};
use redis::Value;
use redis_atomic::Client;
use std::time::Duration;
use tokio::task::JoinHandle;

/// Keys per `SCAN` page.
const PAGE: usize = 500;

/// How often a [`Keeper`] re-applies TTLs.
const KEEP_EVERY: Duration = Duration::from_millis(200);

impl CheckCtx {
    /// The TTL of every key the check creates: long enough to outlive the check and its
    /// judgement, short enough that a killed run cleans up after itself.
    pub fn key_ttl(&self) -> Duration {
        self.duration * 2 + Duration::from_secs(600)
    }

    /// Gives `keys` the check's TTL whenever they exist without one, until the keeper is stopped.
    pub fn keep_expiring(&self, keys: Vec<String>) -> Keeper {
        let (ctx, watched) = (self.clone(), keys.clone());
        let task = tokio::spawn(async move {
            loop {
                expire(&ctx, &watched).await;
                tokio::time::sleep(KEEP_EVERY).await;
            }
        });
        Keeper {
            ctx: self.clone(),
            keys,
            task,
        }
    }
}

/// `PEXPIRE key ttl NX` on each key: best effort (under faults a call may fail; the next pass
/// repeats it, and the sweep deletes the keys anyway).
async fn expire(ctx: &CheckCtx, keys: &[String]) {
    let ttl = u64::try_from(ctx.key_ttl().as_millis()).unwrap_or(u64::MAX);
    for key in keys {
        let cmd = redis::cmd("PEXPIRE").arg(key).arg(ttl).arg("NX").clone();
        let _ = ctx.client.command(&cmd).await;
    }
}

/// Re-applies TTLs in the background (see [`CheckCtx::keep_expiring`]); aborted on drop.
pub struct Keeper {
    ctx: CheckCtx,
    keys: Vec<String>,
    task: JoinHandle<()>,
}

impl Keeper {
    /// Stops after one last pass (for keys created since the previous one).
    pub async fn stop(self) {
        self.task.abort();
        expire(&self.ctx, &self.keys).await;
    }
}

impl Drop for Keeper {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Deletes every key matching `pattern` from the server `client` is connected to (every
/// primary of a cluster, found through `url`); returns how many were unlinked.
pub(crate) async fn sweep(
    client: &Client,
    url: &str,
    cluster: bool,
    pattern: &str,
) -> CheckResult<u64> {
    let mut nodes = if cluster {
        primaries(url).await?
    } else {
        vec![Node::Standalone]
    };
    let mut unlinked = 0;
    for node in &mut nodes {
        let mut cursor = 0u64;
        loop {
            let mut scan = redis::cmd("SCAN");
            scan.arg(cursor)
                .arg("MATCH")
                .arg(pattern)
                .arg("COUNT")
                .arg(PAGE);
            let (next, keys): (u64, Vec<Vec<u8>>) =
                redis::from_redis_value(node.send(client, scan).await?)?;
            unlinked += unlink(client, keys).await?;
            cursor = next;
            if cursor == 0 {
                break;
            }
        }
    }
    Ok(unlinked)
}

/// Where a `SCAN` goes: the one server, or one primary of a cluster (a cursor belongs to a node).
enum Node {
    Standalone,
    Primary {
        conn: ClusterConnection,
        host: String,
        port: u16,
    },
}

impl Node {
    async fn send(&mut self, client: &Client, cmd: redis::Cmd) -> CheckResult<Value> {
        Ok(match self {
            Node::Standalone => client.command(&cmd).await?,
            Node::Primary { conn, host, port } => {
                let to = SingleNodeRoutingInfo::ByAddress {
                    host: host.clone(),
                    port: *port,
                };
                conn.route_command(cmd, RoutingInfo::SingleNode(to)).await?
            }
        })
    }
}

/// Every primary of the cluster `url` belongs to: a `PING` sent to all primaries answers with
/// each one's address.
async fn primaries(url: &str) -> CheckResult<Vec<Node>> {
    let conn = redis::cluster::ClusterClient::new(vec![url])?
        .get_async_connection()
        .await
        .map_err(|e| err!("connecting to the cluster for the clean-up: {e}"))?;
    let all = RoutingInfo::MultiNode((MultipleNodeRoutingInfo::AllMasters, None));
    let Value::Map(replies) = conn.clone().route_command(redis::cmd("PING"), all).await? else {
        bail!("PING to every primary did not answer per node");
    };
    let mut nodes = Vec::new();
    for (addr, _) in replies {
        let addr: String = redis::from_redis_value(addr)?;
        let (host, port) = addr
            .rsplit_once(':')
            .ok_or_else(|| err!("node address `{addr}`"))?;
        nodes.push(Node::Primary {
            conn: conn.clone(),
            host: host.to_string(),
            port: port.parse()?,
        });
    }
    Ok(nodes)
}

/// `UNLINK`s each key on its own (a multi-key `UNLINK` would cross slots in a cluster), 32 at a
/// time; returns how many existed.
async fn unlink(client: &Client, keys: Vec<Vec<u8>>) -> CheckResult<u64> {
    let mut sends = futures::stream::iter(keys)
        .map(|key| async move {
            let gone = client.command(redis::cmd("UNLINK").arg(key)).await?;
            Ok::<_, CheckError>(redis::from_redis_value::<u64>(gone)?)
        })
        .buffer_unordered(32);
    let mut unlinked = 0;
    while let Some(gone) = sends.next().await {
        unlinked += gone?;
    }
    Ok(unlinked)
}
