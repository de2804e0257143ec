//! Native commands in place of a script, on the one call path: detection of what the server
//! offers ([`super::capabilities`]) and a call that sends a primitive's native command when the
//! server has it and the script otherwise.
//!
//! Why on the same path: a native call is the same operation to everything around it — the
//! same span, metrics labels (`primitive`, `op`; the `script` label keeps the script's name, the
//! path taken shows in `INFO commandstats`), the same retry class (a primitive offers a native
//! command only where it decides exactly what the script decides, so what makes the script
//! retry-safe makes the command retry-safe), the same `WAIT` with
//! [`ClientConfig::replicas`](super::ClientConfig::replicas).

use super::capabilities::{self, Capabilities};
use super::retry::{no_conflict, Verdict};
use super::{Arg, Client};
use crate::observe::Op;
use crate::script::{FromReply, RetryClass, Script};
use crate::Error;
use redis::{Cmd, Value};

/// A native command that decides what a script decides, and how its reply maps to the
/// script's typed reply.
pub(crate) struct Native<R> {
    pub(crate) cmd: Cmd,
    pub(crate) decode: Box<dyn Fn(Value) -> Result<R, Error> + Send + Sync>,
}

impl Client {
    /// What the server (every node of a cluster) offers natively, and whether
    /// [`ClientConfig::force_lua`](super::ClientConfig::force_lua) keeps calls on the scripts.
    /// Detected once (one pipelined probe per node) and cached until something may have put
    /// another server behind this client.
    pub async fn capabilities(&self) -> Capabilities {
        self.capabilities_or(true).await
    }

    /// The cached capabilities, else a detection; when `wait` is false and another caller is
    /// detecting, none (the script) for this call.
    pub(super) async fn capabilities_or(&self, wait: bool) -> Capabilities {
        let mut caps = match self.caps.get() {
            Some(caps) => caps,
            None if !self.caps.begin_detect() && !wait => Capabilities::none(),
            None => {
                let found = self.detect().await;
                self.caps.end_detect();
                match found {
                    Some(caps) => {
                        self.caps.set(caps.clone());
                        caps
                    }
                    // The server could not be reached: nothing cached, asked again next time.
                    None => Capabilities::none(),
                }
            }
        };
        caps.forced_lua = self.config.force_lua;
        caps
    }

    /// Starts a detection on a task of its own unless one is under way (or there is no tokio
    /// runtime to run it): what it finds is cached for the calls after it.
    pub(super) fn detect_in_background(&self) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if self.is_closed() || !self.caps.sought() || !self.caps.begin_detect() {
            return;
        }
        let client = self.clone();
        runtime.spawn(async move {
            let found = client.detect().await;
            client.caps.end_detect();
            if let Some(caps) = found {
                client.caps.set(caps);
            }
        });
    }

    /// Probes every node; None when a node could not be reached at all.
    async fn detect(&self) -> Option<Capabilities> {
        let pipe = capabilities::probe();
        if !self.is_cluster() {
            // A broken connection (a restart, a failover) is discarded and the next one of the
            // pool tried, each at most once: the server itself may be back. A timeout ends it.
            for _ in 0..self.config.pool_size.max(1) {
                let mut lease = self.transport.checkout().await.ok()?;
                let sent = lease.conn.request_pipeline(&pipe);
                let replies = tokio::time::timeout(self.config.timeout, sent).await.ok()?;
                match replies {
                    // Nothing learned, nothing cached.
                    Err(e) if unreachable(&e) => self.transport.discard(lease.slot),
                    Ok(replies) if capabilities::inconclusive(&replies) => return None,
                    replies => return Some(Capabilities::parse(&replies.unwrap_or_default())),
                }
            }
            return None;
        }
        let mut nodes = Vec::new();
        for node in super::cluster_nodes::reachable(self).await.ok()? {
            let sent = self.probe_node(&node.host, node.port, &pipe);
            let replies = tokio::time::timeout(self.config.timeout, sent).await.ok()?;
            let learned_nothing = match &replies {
                Err(e) => unreachable(e),
                Ok(replies) => capabilities::inconclusive(replies),
            };
            if learned_nothing {
                return None;
            }
            nodes.push(Capabilities::parse(&replies.unwrap_or_default()));
        }
        Some(Capabilities::common(nodes))
    }

    /// One cluster node's replies to `pipe`: through the cluster connection, or, for a node it
    /// keeps no connection to (a replica), through a connection of its own to that node, made
    /// like the dedicated ones (credentials, TLS) and dropped after. Without the second way a
    /// replica answered nothing, counted as a node without any native command, and a cluster
    /// with replicas never used the module nor `DELIFEQ`.
    async fn probe_node(
        &self,
        host: &str,
        port: u16,
        pipe: &redis::Pipeline,
    ) -> redis::RedisResult<Vec<Value>> {
        let sent = self.transport.to_node(host, port, pipe).await;
        let source = match (&sent, &self.dedicated) {
            (Err(e), Some(source)) if e.kind() == redis::ErrorKind::ClusterConnectionNotFound => {
                source
            }
            _ => return sent,
        };
        let direct = async {
            use redis::aio::ConnectionLike as _;
            let (name, client) = source.node_at(host, port).ok()?;
            let mut conn = source.open(&name, &client).await.ok()?;
            Some(conn.req_packed_commands(pipe, 0, pipe.len()).await)
        };
        direct.await.unwrap_or(sent)
    }

    /// Forgets the detected capabilities (another server may be behind the client now).
    pub(super) fn redetect(&self) {
        self.caps.invalidate();
    }

    /// Runs `script`, or the native command `native` picks for the current capabilities (None:
    /// the script; no `native` at all: the script, without looking at capabilities, so a call
    /// that cannot go native never waits for a detection). A native command the server does not know or the user may not run (nothing
    /// ran) falls back to the script within the same attempt, and native commands are not
    /// tried again until the next re-detection.
    pub(crate) async fn call_or_native<const K: usize, const A: usize, R, N>(
        &self,
        script: &'static Script<K, A, R>,
        keys: [&str; K],
        args: [Arg<'_>; A],
        native: Option<N>,
    ) -> Result<R, Error>
    where
        R: FromReply,
        N: Fn(&Capabilities) -> Option<Native<R>> + Send + Sync,
    {
        let def = &script.def;
        self.checked(def, &keys, &args)?;
        let safe = script.retry == RetryClass::Safe;
        self.run_op(
            Op::script(def),
            keys.first().copied(),
            &|e| Verdict::of(e, safe),
            &no_conflict,
            &|r: &R| r.status(),
            || async {
                let chosen = match &native {
                    Some(pick) => pick(&self.capabilities_or(false).await),
                    None => None,
                };
                if let Some(n) = chosen {
                    match self.send_native(&n.cmd).await {
                        Err(e) if capabilities::unsupported(&e) => self.caps.refuse_native(),
                        sent => return (n.decode)(sent?),
                    }
                }
                let value = self.attempt(def, &keys, &args).await?;
                super::invoke::decode(def, value)
            },
        )
        .await
    }

    /// The command alone, or with `WAIT` when the client asks for replicas (a native command
    /// is offered only for writes).
    async fn send_native(&self, cmd: &Cmd) -> Result<Value, Error> {
        match self.config.replicas {
            Some(replicas) => self.command_then_wait(cmd, replicas).await,
            None => self.command(cmd).await,
        }
    }
}

/// Whether a probe's failure says the node was not reached (a broken or refused connection, a
/// timeout), as opposed to refused probes: a detection that learned nothing, not "no natives".
fn unreachable(e: &redis::RedisError) -> bool {
    e.is_io_error() || e.is_connection_dropped() || e.is_connection_refusal() || e.is_timeout()
}

/// The integer reply of a native command (`DELIFEQ`, `DELEX`), or a typed error naming
/// `script`, the operation it stands in for.
pub(crate) fn int_reply(script: &'static str, value: &Value) -> Result<i64, Error> {
    match value {
        Value::Int(n) => Ok(*n),
        other => Err(Error::BadReply {
            script,
            detail: format!("native command: expected an integer, got {other:?}"),
        }),
    }
}

/// `Some(true)` for `OK`, `Some(false)` for nil (a `SET` whose condition did not hold).
pub(crate) fn set_reply(script: &'static str, value: &Value) -> Result<bool, Error> {
    match value {
        Value::Okay => Ok(true),
        Value::SimpleString(s) if s == "OK" => Ok(true),
        Value::Nil => Ok(false),
        other => Err(Error::BadReply {
            script,
            detail: format!("native command: expected OK or nil, got {other:?}"),
        }),
    }
}
