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
        let timeout_ms = u64::try_from(replicas.timeout.as_millis()).unwrap_or(u64::MAX);
        let mut pipe = redis::pipe();
        pipe.add_command(cmd.clone())
            .cmd("WAIT")
            .arg(replicas.count)
            .arg(timeout_ms.max(1));
        let mut lease = self.transport.checkout().await.map_err(Error::NotSent)?;
        let waited = self.config.timeout + replicas.timeout;
        let reply = tokio::time::timeout(waited, lease.conn.request_pipeline(&pipe)).await;
        let (script, acked) = match reply {
            Ok(Ok(mut values)) if values.len() == 2 => {
                let acked = values.pop();
                (Ok(Ok(values.remove(0))), acked)
            }
            Ok(Ok(values)) => {
                return Err(Error::Server {
                    code: "CLIENT".into(),
                    message: format!("pipeline of 2 answered {} replies", values.len()),
                })
            }
            Ok(Err(e)) => (Ok(Err(e)), None),
            Err(_) => (Err(waited), None),
        };
        let value = self.settle(lease.slot, script)?;
        match acked {
            Some(Value::Int(n)) if n >= i64::from(replicas.count) => Ok(value),
            Some(Value::Int(n)) => Err(Error::NotReplicated {
                acked: u32::try_from(n).unwrap_or(0),
                wanted: replicas.count,
            }),
            other => Err(Error::Server {
                code: "CLIENT".into(),
                message: format!("WAIT answered {other:?}"),
            }),
        }
    }
}
