//! Sending a group of waiting decisions: one call of the batch entry point, or, below
//! [`Batching::min_batch`](super::Batching::min_batch) (or for a decision too large to batch),
//! each decision's own call, all at once on the multiplexed connections (pipelined, one round
//! trip).
//!
//! The batch call is encoded as the entry point expects (see
//! `redis_atomic_scripts::codegen::batch`): every decision's keys in order, then runs of
//! `<script> <count>` and the decisions' arguments, with `<keys> <args>` counts before each
//! decision of a variadic script. Its delivery follows the client's like any script: `EVALSHA`
//! of the entry point's own script or `FCALL` of its library function, `_RO` for a `no-writes`
//! group, reloaded once after `NOSCRIPT` or a missing function, followed by `WAIT` when the
//! client asks for replicas. The reply must be an array of one element per decision; each element
//! is that decision's reply, or its error reply, classified by code exactly as a call of its own
//! would be. Anything that fails the call as a whole (a refusal, a lost reply, a reply of the
//! wrong shape) is every decision's outcome.

use super::lane::{Entry, Outcome};
use crate::client::Client;
use crate::script::ScriptDef;
use crate::{Arg, Error};
use redis::{Cmd, Value};

/// Sends `group`, delivering each decision's outcome.
pub(super) async fn group(client: &Client, batch: &'static ScriptDef, group: Vec<Entry>) {
    let config = client.batcher.config;
    if group.len() < config.min_batch || group.iter().any(|e| e.solo) {
        client.batcher.sent_separately(group.len());
        let each = group.into_iter().map(|entry| async move {
            let keys: Vec<&str> = entry.keys().collect();
            let args: Vec<Arg<'_>> = entry.args().map(Arg::Bytes).collect();
            let outcome = client.attempt_alone(entry.def, &keys, &args).await;
            entry.deliver(outcome);
        });
        futures::future::join_all(each).await;
        return;
    }
    client.batcher.sent_batch(group.len());
    let span = tracing::debug_span!(
        "redis_atomic_batch",
        batch = batch.name,
        decisions = group.len()
    );
    let outcomes = tracing::Instrument::instrument(run(client, batch, &group), span).await;
    match outcomes {
        Ok(outcomes) => {
            for (entry, outcome) in group.into_iter().zip(outcomes) {
                entry.deliver(outcome);
            }
        }
        Err(err) => {
            for entry in group {
                entry.deliver(Err(err.clone()));
            }
        }
    }
}

/// One call of `batch` carrying `group`: each decision's outcome, or the call's error.
async fn run(
    client: &Client,
    batch: &'static ScriptDef,
    group: &[Entry],
) -> Result<Vec<Outcome>, Error> {
    let cmd = encode(client.call_cmd(batch), group);
    let replicas = client.config.replicas.filter(|_| !batch.read_only());
    let (reply, acked) = client
        .reloading(batch, || async {
            match replicas {
                Some(replicas) => client.command_and_wait(&cmd, replicas).await,
                None => Ok((client.command(&cmd).await?, None)),
            }
        })
        .await?;
    let replies = match reply {
        Value::Array(replies) if replies.len() == group.len() => replies,
        other => {
            return Err(Error::OutcomeUnknown {
                reason: format!(
                    "a batch of {} decisions answered {}",
                    group.len(),
                    shape(&other)
                ),
                attempts: 1,
                timed_out: false,
                retry_safe: false,
            })
        }
    };
    Ok(replies
        .into_iter()
        .map(|value| match value {
            Value::ServerError(e) => Err(crate::client::op::server_error(&e)),
            value => match replicas {
                Some(replicas) => replicas.check(acked.clone()).map(|()| value),
                None => Ok(value),
            },
        })
        .collect())
}

/// What a reply of the wrong shape was, for the error (never its content).
fn shape(value: &Value) -> String {
    match value {
        Value::Array(items) => format!("{} replies", items.len()),
        Value::ServerError(e) => format!("an error ({})", e.code()),
        other => format!("a non-array ({})", kind(other)),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Nil => "nil",
        Value::Int(_) => "integer",
        Value::BulkString(_) | Value::SimpleString(_) | Value::Okay => "string",
        _ => "other",
    }
}

/// The batch call: `head` (the entry point's `EVALSHA`/`FCALL` and name), the key count, every
/// key, then runs of one script's decisions.
fn encode(mut cmd: Cmd, group: &[Entry]) -> Cmd {
    cmd.arg(group.iter().map(Entry::nkeys).sum::<usize>());
    for entry in group {
        for key in entry.keys() {
            cmd.arg(key);
        }
    }
    let mut rest = group;
    while let Some(first) = rest.first() {
        let run = rest
            .iter()
            .take_while(|e| std::ptr::eq(e.def, first.def))
            .count();
        cmd.arg(first.def.name).arg(run);
        let variadic = first.def.variadic();
        for entry in &rest[..run] {
            if variadic {
                cmd.arg(entry.nkeys()).arg(entry.nargs());
            }
            for arg in entry.args() {
                cmd.arg(arg);
            }
        }
        rest = &rest[run..];
    }
    cmd
}
