//! Faults a real deployment suffers, made on demand: stalls, killed connections, lost script
//! caches, restarts, full memory, busy scripts, promotions, slot migrations and primary deaths.
//!
//! Each helper does one thing to real processes with real commands and returns when the fault is
//! in place (or, for the cluster ones, when the cluster has settled again), so a test can assert
//! what the primitive did across it. Lost replies, latency, resets and refusals are made by the
//! [`crate::FaultProxy`] instead.

use crate::cluster::RedisCluster;
use crate::error::TestkitError;
use crate::server::RedisServer;
use std::time::{Duration, Instant};

fn conn(server: &RedisServer) -> Result<redis::Connection, TestkitError> {
    Ok(server
        .client()
        .get_connection_with_timeout(Duration::from_secs(2))?)
}

fn run<T: redis::FromRedisValue>(
    server: &RedisServer,
    cmd: &mut redis::Cmd,
) -> Result<T, TestkitError> {
    Ok(cmd.query(&mut conn(server)?)?)
}

/// The server does nothing for `duration` (SIGSTOP, then SIGCONT): requests queue in its socket
/// buffers, clocks keep running, so leases expire meanwhile. Blocks the calling thread.
pub fn stall(server: &RedisServer, duration: Duration) {
    server.pause();
    std::thread::sleep(duration);
    server.resume();
}

/// `CLIENT KILL TYPE normal` (every client but this one): in-flight requests lose their replies.
/// Returns how many connections were killed.
pub fn kill_clients(server: &RedisServer) -> Result<u64, TestkitError> {
    run(
        server,
        redis::cmd("CLIENT")
            .arg("KILL")
            .arg("TYPE")
            .arg("normal")
            .arg("SKIPME")
            .arg("yes"),
    )
}

/// `SCRIPT FLUSH` and `FUNCTION FLUSH`: what a restart or a failover to a fresh node does to the
/// script cache and (without persistence) to loaded Function libraries.
pub fn flush_scripts(server: &RedisServer) -> Result<(), TestkitError> {
    let _: () = run(server, redis::cmd("SCRIPT").arg("FLUSH"))?;
    let _: () = run(server, redis::cmd("FUNCTION").arg("FLUSH"))?;
    Ok(())
}

/// Sets `maxmemory` (policy `noeviction`) to what the server uses now plus `headroom` bytes, so
/// writes soon fail with `OOM`. Undo with [`unlimit_memory`].
pub fn fill_memory(server: &RedisServer, headroom: u64) -> Result<(), TestkitError> {
    let info: String = run(server, redis::cmd("INFO").arg("memory"))?;
    let used = info
        .lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse::<u64>().ok())
        .ok_or_else(|| TestkitError::Cluster("INFO memory has no used_memory".into()))?;
    config_set(server, "maxmemory-policy", "noeviction")?;
    config_set(server, "maxmemory", &(used + headroom).to_string())
}

/// `maxmemory 0`: no limit again.
pub fn unlimit_memory(server: &RedisServer) -> Result<(), TestkitError> {
    set_maxmemory(server, 0)
}

/// `maxmemory` to `bytes` (the policy stays as it is; 1 makes every write of a `noeviction`
/// server fail with `OOM` at once, 0 lifts the limit).
pub fn set_maxmemory(server: &RedisServer, bytes: u64) -> Result<(), TestkitError> {
    config_set(server, "maxmemory", &bytes.to_string())
}

fn config_set(server: &RedisServer, name: &str, value: &str) -> Result<(), TestkitError> {
    run(server, redis::cmd("CONFIG").arg("SET").arg(name).arg(value))
}

/// A foreign script keeps the server busy for `duration`: `EVAL` of a Lua loop on `TIME`, on a
/// connection of its own; returns when it ends. Meanwhile, once the script has run longer than
/// `busy-reply-threshold`, the server answers every other client `BUSY` (until then their
/// requests wait). Blocks the calling thread: run it on one of its own.
pub fn busy_script(server: &RedisServer, duration: Duration) -> Result<(), TestkitError> {
    const LOOP: &str = "local t = redis.call('TIME') \
        local stop = t[1] * 1000000 + t[2] + tonumber(ARGV[1]) \
        while true do \
          local n = redis.call('TIME') \
          if n[1] * 1000000 + n[2] >= stop then return 1 end \
        end";
    let mut conn = conn(server)?;
    conn.set_read_timeout(Some(duration + Duration::from_secs(10)))?;
    let micros = u64::try_from(duration.as_micros()).unwrap_or(u64::MAX);
    let _: i64 = redis::cmd("EVAL")
        .arg(LOOP)
        .arg(0)
        .arg(micros)
        .query(&mut conn)?;
    Ok(())
}

/// Makes `replica` replicate `primary` and waits (10 s) until its link is up and it has caught up.
pub fn replicate(replica: &RedisServer, primary: &RedisServer) -> Result<(), TestkitError> {
    let port = primary
        .port()
        .ok_or_else(|| TestkitError::Cluster("replication needs TCP".into()))?;
    // Diskless sync waits 5 s by default for more replicas to join; there is only this one.
    config_set(primary, "repl-diskless-sync-delay", "0")?;
    let _: () = run(replica, redis::cmd("REPLICAOF").arg("127.0.0.1").arg(port))?;
    wait(Duration::from_secs(10), "replica link up", || {
        let info: String = run(replica, redis::cmd("INFO").arg("replication"))?;
        Ok(info.contains("master_link_status:up"))
    })?;
    let _: i64 = run(primary, redis::cmd("WAIT").arg(1).arg(5000))?;
    Ok(())
}

/// `REPLICAOF NO ONE`: the replica becomes a primary with whatever it had received (async
/// replication: writes acknowledged by the old primary after the last replicated one are gone).
pub fn promote(replica: &RedisServer) -> Result<(), TestkitError> {
    run(replica, redis::cmd("REPLICAOF").arg("NO").arg("ONE"))
}

/// Polls `check` every 20 ms until it holds or `limit` passes.
pub fn wait(
    limit: Duration,
    what: &str,
    mut check: impl FnMut() -> Result<bool, TestkitError>,
) -> Result<(), TestkitError> {
    let deadline = Instant::now() + limit;
    loop {
        // A node that is restarting or failing over refuses connections for a moment: that is
        // "not yet", not an error.
        if let Ok(true) = check() {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(TestkitError::Cluster(format!(
                "not reached within {limit:?}: {what}"
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

impl RedisCluster {
    /// Index (into [`RedisCluster::nodes`]) of the node that serves `slot` now.
    pub fn owner_of(&self, slot: u16) -> Result<usize, TestkitError> {
        let port = self.announced_owner(slot)?;
        self.nodes()
            .iter()
            .position(|n| n.port().map(i64::from) == Some(port))
            .ok_or_else(|| TestkitError::Cluster(format!("slot {slot}: port {port}?")))
    }

    /// The port the cluster announces (`CLUSTER SLOTS`) for the node serving `slot`: the node's
    /// own, or its proxy's on a [`crate::proxy::ProxiedCluster`].
    pub(crate) fn announced_owner(&self, slot: u16) -> Result<i64, TestkitError> {
        let any = self
            .nodes()
            .iter()
            .find(|n| n.pid() != 0)
            .ok_or_else(|| TestkitError::Cluster("no live node".into()))?;
        let shards: Vec<redis::Value> = run(any, redis::cmd("CLUSTER").arg("SLOTS"))?;
        for shard in shards {
            let redis::Value::Array(items) = shard else {
                continue;
            };
            let num = |i: usize| match items.get(i) {
                Some(redis::Value::Int(n)) => Some(*n),
                _ => None,
            };
            let (Some(lo), Some(hi)) = (num(0), num(1)) else {
                continue;
            };
            if (lo..=hi).contains(&i64::from(slot)) {
                return match items.get(2) {
                    Some(redis::Value::Array(node)) => match node.get(1) {
                        Some(redis::Value::Int(p)) => Ok(*p),
                        _ => Err(TestkitError::Cluster(format!("slot {slot}: no port"))),
                    },
                    _ => Err(TestkitError::Cluster(format!("slot {slot}: no node"))),
                };
            }
        }
        Err(TestkitError::Cluster(format!("slot {slot} is not served")))
    }

    /// `CLUSTER MYID` of node `i`.
    pub fn node_id(&self, i: usize) -> Result<String, TestkitError> {
        run(&self.nodes()[i], redis::cmd("CLUSTER").arg("MYID"))
    }

    /// Indexes of the replicas of node `primary` (as they are now).
    pub fn replicas_of(&self, primary: usize) -> Result<Vec<usize>, TestkitError> {
        let id = self.node_id(primary)?;
        let mut out = Vec::new();
        for (i, node) in self.nodes().iter().enumerate() {
            if i == primary || node.pid() == 0 {
                continue;
            }
            let info: String = run(node, redis::cmd("CLUSTER").arg("NODES"))?;
            let me = info.lines().find(|l| l.contains("myself"));
            if me.is_some_and(|l| l.split(' ').nth(3) == Some(id.as_str())) {
                out.push(i);
            }
        }
        Ok(out)
    }

    /// `CLUSTER FAILOVER` on `replica` (a coordinated handover: no acknowledged write is lost);
    /// returns when it serves its slots and every live node agrees the cluster is ok.
    pub fn manual_failover(&self, replica: usize) -> Result<(), TestkitError> {
        let node = &self.nodes()[replica];
        let _: () = run(node, redis::cmd("CLUSTER").arg("FAILOVER"))?;
        wait(Duration::from_secs(15), "replica became primary", || {
            let info: String = run(node, redis::cmd("INFO").arg("replication"))?;
            Ok(info.contains("role:master"))
        })?;
        self.wait_seen_as_primary(replica)?;
        self.wait_ok(Duration::from_secs(15))
    }

    /// Waits (15 s) until every live node's `CLUSTER NODES` flags node `i` as a primary.
    fn wait_seen_as_primary(&self, i: usize) -> Result<(), TestkitError> {
        let id = self.node_id(i)?;
        wait(
            Duration::from_secs(15),
            "every node sees the new primary",
            || {
                for node in self.nodes().iter().filter(|n| n.pid() != 0) {
                    let nodes: String = run(node, redis::cmd("CLUSTER").arg("NODES"))?;
                    let line = nodes.lines().find(|l| l.starts_with(id.as_str()));
                    let flags = line.and_then(|l| l.split(' ').nth(2)).unwrap_or("");
                    if !flags.split(',').any(|f| f == "master") {
                        return Ok(false);
                    }
                }
                Ok(true)
            },
        )
    }

    /// SIGKILL of node `i` (a primary, usually): its replica is elected after
    /// `cluster-node-timeout`; returns when slot `probe` is served by another live node and the
    /// live nodes agree the cluster is ok. Writes the dead primary acknowledged but had not
    /// replicated are lost: that is the fault.
    pub fn kill_primary(&self, i: usize, probe: u16) -> Result<(), TestkitError> {
        self.nodes()[i].crash();
        wait(Duration::from_secs(30), "a replica took over", || {
            Ok(self.owner_of(probe).is_ok_and(|o| o != i))
        })?;
        self.wait_ok(Duration::from_secs(30))
    }

    /// Waits until every live node reports `cluster_state:ok`.
    pub fn wait_ok(&self, limit: Duration) -> Result<(), TestkitError> {
        wait(limit, "cluster_state:ok on every live node", || {
            for node in self.nodes().iter().filter(|n| n.pid() != 0) {
                let info: String = run(node, redis::cmd("CLUSTER").arg("INFO"))?;
                if !info.contains("cluster_state:ok") {
                    return Ok(false);
                }
            }
            Ok(true)
        })
    }

    /// Moves `slot` from its owner to node `to` the way `redis-cli --cluster reshard` does:
    /// IMPORTING/MIGRATING, `MIGRATE` of its keys in batches of `batch` (clients meanwhile get
    /// `ASK` redirects), then `SETSLOT NODE` everywhere. Safe to run under load, and to finish a
    /// [`RedisCluster::begin_migration`].
    pub fn migrate_slot(&self, slot: u16, to: usize, batch: usize) -> Result<(), TestkitError> {
        let from = self.owner_of(slot)?;
        if from == to {
            return Ok(());
        }
        self.start_migration(slot, from, to, &[] as &[&str])?;
        let src = &self.nodes()[from];
        // Bounded: keys created meanwhile land on `to` (ASK), so the source only drains.
        for _ in 0..100_000 {
            let keys: Vec<String> = run(
                src,
                redis::cmd("CLUSTER")
                    .arg("GETKEYSINSLOT")
                    .arg(slot)
                    .arg(batch.max(1)),
            )?;
            if keys.is_empty() {
                return self.assign_slot(slot, to, &self.node_id(to)?);
            }
            self.move_keys(from, to, &keys)?;
        }
        Err(TestkitError::Cluster(format!(
            "slot {slot} did not drain from node {from}"
        )))
    }

    /// Half a migration of `slot` to node `to`, held still: IMPORTING on `to`, MIGRATING on its
    /// owner, and `keys` (of that slot) moved at once. Calls for those keys get `ASK`, the others
    /// are served where they are; [`RedisCluster::migrate_slot`] finishes it.
    pub fn begin_migration(&self, slot: u16, to: usize, keys: &[&str]) -> Result<(), TestkitError> {
        self.start_migration(slot, self.owner_of(slot)?, to, keys)
    }

    fn start_migration<K: redis::ToRedisArgs>(
        &self,
        slot: u16,
        from: usize,
        to: usize,
        keys: &[K],
    ) -> Result<(), TestkitError> {
        let setslot = |node: usize, state: &str, id: String| -> Result<(), TestkitError> {
            run(
                &self.nodes()[node],
                redis::cmd("CLUSTER")
                    .arg("SETSLOT")
                    .arg(slot)
                    .arg(state)
                    .arg(id),
            )
        };
        setslot(to, "IMPORTING", self.node_id(from)?)?;
        setslot(from, "MIGRATING", self.node_id(to)?)?;
        self.move_keys(from, to, keys)
    }

    /// `MIGRATE`s `keys` (none: nothing to send) from node `from` to node `to`.
    fn move_keys<K: redis::ToRedisArgs>(
        &self,
        from: usize,
        to: usize,
        keys: &[K],
    ) -> Result<(), TestkitError> {
        if keys.is_empty() {
            return Ok(());
        }
        let port = self.nodes()[to].port().unwrap_or(0);
        let _: redis::Value = run(
            &self.nodes()[from],
            redis::cmd("MIGRATE")
                .arg("127.0.0.1")
                .arg(port)
                .arg("")
                .arg(0)
                .arg(5000)
                .arg("KEYS")
                .arg(keys),
        )?;
        Ok(())
    }

    fn assign_slot(&self, slot: u16, to: usize, id: &str) -> Result<(), TestkitError> {
        // Only primaries take SETSLOT; replicas learn the new owner by gossip.
        for node in self.nodes().iter().filter(|n| n.pid() != 0) {
            let role: String = run(node, redis::cmd("INFO").arg("replication"))?;
            if !role.contains("role:master") {
                continue;
            }
            let _: () = run(
                node,
                redis::cmd("CLUSTER")
                    .arg("SETSLOT")
                    .arg(slot)
                    .arg("NODE")
                    .arg(id),
            )?;
        }
        wait(
            Duration::from_secs(10),
            "every node agrees on the slot",
            || Ok(self.owner_of(slot)? == to),
        )
    }
}
