//! Optional `WAIT`-based durability: a write script and `WAIT numreplicas timeout`, pipelined.
//!
//! Why a pipeline: `WAIT` counts the replicas that acknowledged everything *this connection*
//! wrote, so it must follow the script on the same connection; pipelined, the pair is still one
//! round trip (the server answers the `WAIT` once the replicas have acknowledged or the timeout
//! passed). In a cluster the pair goes to the node of the script's key (a keyless `WAIT` follows
//! the keyed command in a pipeline). While the `WAIT` blocks, so does every other request
//! multiplexed on that connection: keep the timeout small.

use super::{Client, Replicas};
use crate::Error;
use redis::{Cmd, Value};

impl Client {
    /// Sends `cmd` then `WAIT`; [`Error::NotReplicated`] when fewer replicas acknowledged.
    pub(super) async fn command_then_wait(
        &self,
        cmd: &Cmd,
        replicas: Replicas,
    ) -> Result<Value, Error> {
        let (value, acked) = self.command_and_wait(cmd, replicas).await?;
        replicas.check(acked)?;
        Ok(value)
    }

    /// Sends `cmd` then `WAIT` and returns both replies, for callers whose reply decides whether
    /// anything was written (a write that did nothing needs no replica).
    pub(crate) async fn command_and_wait(
        &self,
        cmd: &Cmd,
        replicas: Replicas,
    ) -> Result<(Value, Option<Value>), Error> {
        let mut pipe = redis::pipe();
        pipe.add_command(cmd.clone())
            .add_command(replicas.wait_cmd());
        let mut lease = self
            .transport
            .checkout()
            .await
            .map_err(super::op::not_sent)?;
        let waited = self.config.timeout + replicas.timeout;
        let mut reply = tokio::time::timeout(waited, lease.conn.request_pipeline(&pipe)).await;
        // The slot is migrating and the key has moved: the pair goes to the target node (the
        // `WAIT` then counts the replicas of that node's connection, where the write ran).
        let moved = match &reply {
            Ok(r) if self.transport.is_cluster() => super::ask::target_of_reply(r),
            _ => None,
        };
        if let Some(node) = moved {
            reply = Ok(Ok(self.ask(node, &pipe, waited).await?));
        }
        let (script, acked) = match reply {
            Ok(Ok(mut values)) if values.len() == 2 => {
                let acked = values.pop();
                (Ok(Ok(values.remove(0))), acked)
            }
            Ok(Ok(values)) => {
                // The protocol is out of step: the write may have run, and the connection is
                // not to be trusted again.
                self.transport.discard(lease.slot);
                return Err(Error::OutcomeUnknown {
                    reason: format!("a pipeline of 2 answered {} replies", values.len()),
                    attempts: 1,
                    timed_out: false,
                    retry_safe: false,
                });
            }
            Ok(Err(e)) => (Ok(Err(e)), None),
            Err(_) => (Err(waited), None),
        };
        let value = self.settle(lease.slot, script)?;
        Ok((value, acked))
    }
}

impl Replicas {
    /// `WAIT count timeout-ms` (at least 1 ms: 0 would block forever).
    pub(crate) fn wait_cmd(&self) -> Cmd {
        let timeout_ms = u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX);
        let mut cmd = redis::cmd("WAIT");
        cmd.arg(self.count).arg(timeout_ms.max(1));
        cmd
    }

    /// Whether `WAIT`'s reply counts enough replicas; [`Error::NotReplicated`] otherwise.
    pub(crate) fn check(&self, acked: Option<Value>) -> Result<(), Error> {
        match acked {
            Some(Value::Int(n)) if n >= i64::from(self.count) => Ok(()),
            Some(Value::Int(n)) => Err(Error::NotReplicated {
                acked: u32::try_from(n).unwrap_or(0),
                wanted: self.count,
            }),
            other => Err(crate::script::reply::unexpected("WAIT", other.as_ref())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use redis_atomic_testkit::arb;
    use std::time::Duration;

    proptest! {
        /// Any reply to `WAIT` (or none) is enough replicas, too few, or `BadReply`.
        #[test]
        fn wait_reply_answers_any_value(reply in proptest::option::of(arb::reply()), count in 0u32..4) {
            let replicas = Replicas { count, timeout: Duration::from_millis(1) };
            match replicas.check(reply) {
                Ok(()) | Err(Error::NotReplicated { .. }) => {}
                Err(Error::BadReply { script: "WAIT", .. }) => {}
                Err(other) => prop_assert!(false, "{other:?}"),
            }
        }
    }
}
