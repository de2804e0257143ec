//! A Sentinel deployment of real processes: one primary, its replicas, and Sentinels watching
//! it — the most common self-hosted HA setup, for tests of clients that find the primary through
//! Sentinel and must follow it across a failover.
//!
//! `start` returns only when every Sentinel knows every other Sentinel and every replica (with
//! its link to the primary up), so a failover asked for right away can happen: the group is
//! built from `redis-server --sentinel` with a generated config (small `down-after-milliseconds`
//! and `failover-timeout`), and readiness is polled with a bound, never slept. [`SentinelGroup::
//! failover`] makes one happen, by `SENTINEL FAILOVER` (the old primary lives on as a replica)
//! or by killing the primary (a crash), and returns once every live Sentinel names the new
//! primary and it answers as one.

use crate::error::TestkitError;
use crate::faults::{replicate, wait};
use crate::server::{RedisServer, ServerOptions};
use crate::tls::ServerTls;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

/// Shape and timing of a Sentinel group.
#[derive(Clone, Debug)]
pub struct SentinelOptions {
    /// The name Sentinel monitors the primary under (`sentinel monitor <name> ...`).
    pub service: String,
    /// Replicas of the primary (at least 1 for a failover).
    pub replicas: usize,
    /// Sentinels (quorum: a majority of them).
    pub sentinels: usize,
    /// `down-after-milliseconds`: how long a silent primary takes to be considered down.
    pub down_after: Duration,
    /// `failover-timeout`.
    pub failover_timeout: Duration,
    /// Server binary override.
    pub binary: Option<PathBuf>,
    /// Every process (data nodes and Sentinels) serves TLS only, replication included.
    pub tls: Option<ServerTls>,
    /// The data nodes' password (`requirepass`, `masterauth`; the Sentinels are told it with
    /// `sentinel auth-pass`); [`SentinelGroup::url`] carries it.
    pub password: Option<String>,
    /// The Sentinels' own password (`requirepass` on each, `sentinel sentinel-pass` between
    /// them); a client gives it apart from the URL.
    pub sentinel_password: Option<String>,
}

impl Default for SentinelOptions {
    fn default() -> Self {
        SentinelOptions {
            service: "redis-atomic".into(),
            replicas: 1,
            sentinels: 3,
            down_after: Duration::from_millis(1000),
            failover_timeout: Duration::from_secs(5),
            binary: None,
            tls: None,
            password: None,
            sentinel_password: None,
        }
    }
}

/// How to make a failover happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Failover {
    /// `SENTINEL FAILOVER`: a replica is promoted, the old primary is turned into its replica
    /// (alive, answering `READONLY` to writes). Sentinel itself converts the old primary only
    /// some 8 s later (`+convert-to-slave`, after four publish periods); the helper does at once
    /// what Sentinel would (`REPLICAOF` the new primary) and returns once it is a replica.
    Command,
    /// SIGKILL of the primary: Sentinels notice after `down-after-milliseconds`, agree, elect a
    /// leader and promote a replica. Writes the primary acknowledged but had not replicated are
    /// lost: that is the fault.
    KillPrimary,
}

/// A running group; drops (kills) every process.
#[derive(Debug)]
pub struct SentinelGroup {
    /// Data nodes: the first primary, then its replicas (roles change with failovers).
    nodes: Vec<RedisServer>,
    sentinels: Vec<RedisServer>,
    opts: SentinelOptions,
}

/// Bound on every wait for the group to agree.
const LIMIT: Duration = Duration::from_secs(30);

fn query<T: redis::FromRedisValue>(
    server: &RedisServer,
    cmd: &mut redis::Cmd,
) -> Result<T, TestkitError> {
    let mut conn = server
        .client()
        .get_connection_with_timeout(Duration::from_secs(2))?;
    Ok(cmd.query(&mut conn)?)
}

impl SentinelGroup {
    /// Starts the primary, its replicas (caught up) and the Sentinels, and waits until the
    /// Sentinels know each other and every replica.
    pub fn start(opts: SentinelOptions) -> Result<SentinelGroup, TestkitError> {
        if opts.sentinels == 0 || opts.replicas == 0 {
            return Err(TestkitError::Sentinel(
                "a group needs at least one replica and one sentinel".into(),
            ));
        }
        let data = || {
            RedisServer::start(ServerOptions {
                binary: opts.binary.clone(),
                tls: opts.tls.clone(),
                password: opts.password.clone(),
                ..ServerOptions::default()
            })
        };
        let mut nodes = vec![data()?];
        for _ in 0..opts.replicas {
            let replica = data()?;
            replicate(&replica, &nodes[0])?;
            nodes.push(replica);
        }
        let port = nodes[0].port().unwrap_or(0);
        let mut sentinels = Vec::with_capacity(opts.sentinels);
        for _ in 0..opts.sentinels {
            sentinels.push(RedisServer::start(ServerOptions {
                binary: opts.binary.clone(),
                tls: opts.tls.clone(),
                sentinel: true,
                password: opts.sentinel_password.clone(),
                extra_config: sentinel_config(&opts, port),
                ..ServerOptions::default()
            })?);
        }
        let group = SentinelGroup {
            nodes,
            sentinels,
            opts,
        };
        group.wait_known()?;
        Ok(group)
    }

    /// `redis+sentinel://127.0.0.1:S1,127.0.0.1:S2,.../<service>` (`rediss+sentinel://` with
    /// TLS; `redis+sentinel://:PASSWORD@...` with [`SentinelOptions::password`]): what a client
    /// is given.
    pub fn url(&self) -> String {
        let scheme = if self.opts.tls.is_some() {
            "rediss+sentinel"
        } else {
            "redis+sentinel"
        };
        let hosts: Vec<String> = self
            .sentinels
            .iter()
            .map(|s| format!("127.0.0.1:{}", s.port().unwrap_or(0)))
            .collect();
        let auth = self
            .opts
            .password
            .as_ref()
            .map_or_else(String::new, |p| format!(":{p}@"));
        format!("{scheme}://{auth}{}/{}", hosts.join(","), self.opts.service)
    }

    /// The name the primary is monitored under.
    pub fn service(&self) -> &str {
        &self.opts.service
    }

    /// The data nodes: the first primary, then its replicas (as started; roles change).
    pub fn nodes(&self) -> &[RedisServer] {
        &self.nodes
    }

    /// The Sentinels.
    pub fn sentinels(&self) -> &[RedisServer] {
        &self.sentinels
    }

    /// Index (into [`SentinelGroup::nodes`]) of the primary the first live Sentinel names.
    pub fn primary(&self) -> Result<usize, TestkitError> {
        let sentinel = self
            .sentinels
            .iter()
            .find(|s| s.pid() != 0)
            .ok_or_else(|| TestkitError::Sentinel("no live sentinel".into()))?;
        self.named_by(sentinel)
    }

    fn named_by(&self, sentinel: &RedisServer) -> Result<usize, TestkitError> {
        let (_host, port): (String, u16) = query(
            sentinel,
            redis::cmd("SENTINEL")
                .arg("GET-MASTER-ADDR-BY-NAME")
                .arg(&self.opts.service),
        )?;
        self.nodes
            .iter()
            .position(|n| n.port() == Some(port))
            .ok_or_else(|| TestkitError::Sentinel(format!("primary port {port} is no node")))
    }

    /// Makes a failover happen and returns the new primary's index once every live Sentinel
    /// names it and it answers as a primary (with [`Failover::Command`], once the old primary
    /// answers as a replica too).
    pub fn failover(&self, how: Failover) -> Result<usize, TestkitError> {
        let old = self.primary()?;
        match how {
            Failover::Command => {
                let _: () = query(
                    &self.sentinels[0],
                    redis::cmd("SENTINEL")
                        .arg("FAILOVER")
                        .arg(&self.opts.service),
                )?;
            }
            Failover::KillPrimary => self.nodes[old].crash(),
        }
        let mut new = old;
        wait(LIMIT, "every sentinel names a new, working primary", || {
            let mut named = None;
            for s in self.sentinels.iter().filter(|s| s.pid() != 0) {
                let i = self.named_by(s)?;
                if i == old || named.is_some_and(|n| n != i) {
                    return Ok(false);
                }
                named = Some(i);
            }
            let Some(i) = named else { return Ok(false) };
            new = i;
            Ok(role(&self.nodes[i])? == "master")
        })?;
        if how == Failover::Command {
            let port = self.nodes[new].port().unwrap_or(0);
            let _: () = query(
                &self.nodes[old],
                redis::cmd("REPLICAOF").arg("127.0.0.1").arg(port),
            )?;
            wait(LIMIT, "the old primary became a replica", || {
                Ok(role(&self.nodes[old])? == "slave")
            })?;
        }
        Ok(new)
    }

    /// Waits until every Sentinel sees the primary up, every replica linked, and every other
    /// Sentinel (they find each other through hello messages on the primary, every 2 s).
    fn wait_known(&self) -> Result<(), TestkitError> {
        let others = (self.sentinels.len() - 1).to_string();
        let replicas = self.opts.replicas.to_string();
        wait(LIMIT, "sentinels know each other and the replicas", || {
            for s in &self.sentinels {
                let master: HashMap<String, String> = query(
                    s,
                    redis::cmd("SENTINEL").arg("MASTER").arg(&self.opts.service),
                )?;
                let field = |k: &str| master.get(k).map(String::as_str);
                if field("flags") != Some("master")
                    || field("num-slaves") != Some(replicas.as_str())
                    || field("num-other-sentinels") != Some(others.as_str())
                {
                    return Ok(false);
                }
                let linked: Vec<HashMap<String, String>> = query(
                    s,
                    redis::cmd("SENTINEL")
                        .arg("REPLICAS")
                        .arg(&self.opts.service),
                )?;
                let ok = |r: &HashMap<String, String>| {
                    r.get("flags").map(String::as_str) == Some("slave")
                        && r.get("master-link-status").map(String::as_str) == Some("ok")
                };
                if !linked.iter().all(ok) {
                    return Ok(false);
                }
            }
            Ok(true)
        })
        .map_err(|e| TestkitError::Sentinel(e.to_string()))
    }
}

/// The `role:` line of `INFO replication`.
fn role(server: &RedisServer) -> Result<String, TestkitError> {
    let info: String = query(server, redis::cmd("INFO").arg("replication"))?;
    Ok(info
        .lines()
        .find_map(|l| l.strip_prefix("role:"))
        .unwrap_or("")
        .trim()
        .to_string())
}

fn sentinel_config(opts: &SentinelOptions, primary_port: u16) -> Vec<String> {
    let name = &opts.service;
    let quorum = opts.sentinels / 2 + 1;
    let mut lines = vec![
        format!("sentinel monitor {name} 127.0.0.1 {primary_port} {quorum}"),
        format!(
            "sentinel down-after-milliseconds {name} {}",
            opts.down_after.as_millis()
        ),
        format!(
            "sentinel failover-timeout {name} {}",
            opts.failover_timeout.as_millis()
        ),
        format!("sentinel parallel-syncs {name} 1"),
    ];
    if let Some(password) = &opts.password {
        lines.push(format!("sentinel auth-pass {name} {password}"));
    }
    if let Some(password) = &opts.sentinel_password {
        lines.push(format!("sentinel sentinel-pass {password}"));
    }
    lines
}
