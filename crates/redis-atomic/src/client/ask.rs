//! Following `ASK` while a slot migrates between cluster nodes.
//!
//! During a migration (`CLUSTER SETSLOT ... MIGRATING/IMPORTING`, then `MIGRATE` of the keys in
//! batches) the source node still owns the slot: it serves keys it has and answers `-ASK <slot>
//! <host:port>` for keys already moved. The request must then go to the target node preceded by
//! `ASKING`, a flag that lasts for the next command only (or, sent before `MULTI`, for the whole
//! transaction), so the slot map is left as it is. The `redis` crate's cluster client follows
//! `ASK` only as part of its retries, which this client turns off (they would resend requests
//! that may have run); and it sends `ASKING` as a request of its own, so on a connection other
//! tasks share their command can take the flag. Here `ASKING` and the request go in one pipeline:
//! one write, nothing between them.
//!
//! Scripts and commands follow `ASK` in [`super::Client::command`] (and with `WAIT` in the
//! durable path). Dedicated `WATCH` connections follow it in
//! [`super::DedicatedConnection`]'s pipelines, but only from a clean state: when every keyed
//! command of a pipeline was answered `ASK`, nothing ran on the source, and the pipeline moves
//! to the target with `ASKING` before each command outside `MULTI`; once a connection watches a
//! key on the source, an `ASK` means that key moved, the watch is void, and the attempt fails
//! (a transient refusal, retried from the start).

use crate::Error;
use redis::{Cmd, Pipeline, Value};

/// `host:port` of an `ASK` reply's details (`<slot> <host:port>`).
fn parse(details: &str) -> Option<(String, u16)> {
    let addr = details.split_whitespace().nth(1)?;
    let (host, port) = addr.rsplit_once(':')?;
    Some((host.to_string(), port.parse().ok()?))
}

/// Where an `ASK` refusal sends the request.
pub(crate) fn target(err: &Error) -> Option<(String, u16)> {
    match err {
        Error::Rejected { code, message } if code == "ASK" => parse(message),
        _ => None,
    }
}

/// Where a `MOVED` refusal sends the request: nothing ran where it went, so it can go again to
/// the node that owns the slot now, whatever the command (the cluster connection refreshes its
/// slot map on its own).
pub(crate) fn moved(err: &Error) -> Option<(String, u16)> {
    match err {
        Error::Rejected { code, message } if code == "MOVED" => parse(message),
        _ => None,
    }
}

/// Where an `ASK` error reply (inside a pipeline's replies) sends its command.
pub(crate) fn target_of(value: &Value) -> Option<(String, u16)> {
    match value {
        Value::ServerError(e) if e.code() == "ASK" => parse(e.details().unwrap_or_default()),
        _ => None,
    }
}

/// Where a pipeline's first reply (or the error that replaced its replies) sends it by `ASK`.
pub(crate) fn target_of_reply(reply: &redis::RedisResult<Vec<Value>>) -> Option<(String, u16)> {
    match reply {
        Ok(values) => values.first().and_then(target_of),
        Err(e) if e.code() == Some("ASK") => parse(e.detail().unwrap_or_default()),
        Err(_) => None,
    }
}

fn name(cmd: &Cmd) -> Vec<u8> {
    match cmd.args_iter().next() {
        Some(redis::Arg::Simple(name)) => name.to_ascii_uppercase(),
        _ => Vec::new(),
    }
}

/// Commands that name no key: their replies say nothing about where keys are.
fn keyless(name: &[u8]) -> bool {
    matches!(
        name,
        b"MULTI" | b"EXEC" | b"DISCARD" | b"UNWATCH" | b"WAIT" | b"ASKING" | b"PING"
    )
}

/// The node every keyed command of `pipe` was sent to by `ASK` (all to the same one), if so:
/// then nothing ran on the node that answered, and the whole pipeline may go to that one.
pub(crate) fn redirect(pipe: &Pipeline, values: &[Value]) -> Option<(String, u16)> {
    let mut to = None;
    for (cmd, value) in pipe.cmd_iter().zip(values) {
        if keyless(&name(cmd)) {
            continue;
        }
        let here = target_of(value)?;
        if to.as_ref().is_some_and(|t| *t != here) {
            return None;
        }
        to = Some(here);
    }
    to
}

/// `pipe` with `ASKING` before each command outside `MULTI` ... `EXEC`, and which of the new
/// pipeline's replies are `ASKING`'s.
pub(crate) fn asking(pipe: &Pipeline) -> (Pipeline, Vec<bool>) {
    let mut out = redis::pipe();
    let mut ours = Vec::new();
    let mut in_multi = false;
    for cmd in pipe.cmd_iter() {
        let name = name(cmd);
        if !in_multi {
            out.cmd("ASKING");
            ours.push(true);
        }
        out.add_command(cmd.clone());
        ours.push(false);
        match name.as_slice() {
            b"MULTI" => in_multi = true,
            b"EXEC" | b"DISCARD" => in_multi = false,
            _ => {}
        }
    }
    (out, ours)
}

/// The replies of an [`asking`] pipeline without `ASKING`'s; an error if `ASKING` was refused or
/// the count is off (the connection is then out of step).
pub(crate) fn strip(values: Vec<Value>, ours: &[bool]) -> Result<Vec<Value>, Error> {
    if values.len() != ours.len() {
        return Err(Error::OutcomeUnknown {
            reason: format!(
                "a pipeline of {} answered {} replies",
                ours.len(),
                values.len()
            ),
            attempts: 1,
            timed_out: false,
            retry_safe: false,
        });
    }
    let mut out = Vec::with_capacity(values.len());
    for (value, asking) in values.into_iter().zip(ours) {
        match (asking, value) {
            (true, Value::ServerError(e)) => {
                return Err(Error::from_code(
                    e.code().to_string(),
                    e.details().unwrap_or_default().to_string(),
                ))
            }
            (true, _) => {}
            (false, value) => out.push(value),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(to: &str) -> Value {
        let value = redis::parse_redis_value(format!("-ASK 42 {to}\r\n").as_bytes());
        assert!(matches!(value, Ok(Value::ServerError(_))), "{value:?}");
        value.unwrap_or(Value::Nil)
    }

    /// `ASK` details give the node; other errors give none.
    #[test]
    fn targets() {
        let e = Error::Rejected {
            code: "ASK".into(),
            message: "3999 127.0.0.1:30002".into(),
        };
        assert_eq!(target(&e), Some(("127.0.0.1".into(), 30002)));
        let moved = Error::Rejected {
            code: "MOVED".into(),
            message: "3999 127.0.0.1:30002".into(),
        };
        assert_eq!(target(&moved), None);
        assert_eq!(super::moved(&e), None);
        assert_eq!(super::moved(&moved), Some(("127.0.0.1".into(), 30002)));
        assert_eq!(parse("3999"), None);
        assert_eq!(parse("3999 host:port"), None);
    }

    /// A pipeline is redirected only when every keyed command was answered `ASK`, to one node.
    #[test]
    fn redirect_needs_every_keyed_reply() {
        let mut pipe = redis::pipe();
        pipe.cmd("MULTI").cmd("SET").arg("k").arg(1).cmd("EXEC");
        let ok = Value::Okay;
        let all = [ok.clone(), ask("h:1"), ask("h:1")];
        assert_eq!(redirect(&pipe, &all), Some(("h".into(), 1)));
        let mut watch = redis::pipe();
        watch.cmd("WATCH").arg("k").cmd("GET").arg("k");
        assert_eq!(redirect(&watch, &[ok.clone(), ask("h:1")]), None);
        assert_eq!(redirect(&watch, &[ask("h:1"), ask("h:2")]), None);
        assert_eq!(
            redirect(&watch, &[ask("h:1"), ask("h:1")]),
            Some(("h".into(), 1))
        );
    }

    /// `ASKING` goes before each command outside a transaction and before `MULTI`, never inside;
    /// its replies are stripped again.
    #[test]
    fn asking_prefixes_and_strips() {
        let mut pipe = redis::pipe();
        pipe.cmd("WATCH").arg("k").cmd("GET").arg("k");
        pipe.cmd("MULTI")
            .cmd("SET")
            .arg("k")
            .arg(1)
            .cmd("EXEC")
            .cmd("WAIT")
            .arg(1)
            .arg(5);
        let (out, ours) = asking(&pipe);
        let names: Vec<Vec<u8>> = out.cmd_iter().map(name).collect();
        let expect: Vec<&[u8]> = vec![
            b"ASKING", b"WATCH", b"ASKING", b"GET", b"ASKING", b"MULTI", b"SET", b"EXEC",
            b"ASKING", b"WAIT",
        ];
        assert_eq!(names, expect);
        let replies: Vec<Value> = ours
            .iter()
            .map(|&a| if a { Value::Okay } else { Value::Int(7) })
            .collect();
        assert_eq!(strip(replies, &ours).unwrap().len(), 6);
        assert!(strip(vec![Value::Okay], &ours).is_err());
    }
}
