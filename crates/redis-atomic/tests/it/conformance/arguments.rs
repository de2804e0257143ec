//! Section `arguments`: an operation's inputs → the script (or command), `KEYS` and `ARGV` exactly
//! as they reach the server, and the outcome's word. Checked on the wire: every case runs through
//! the public API against a server of its own (flushed before each case, so outcomes are fixed)
//! while `MONITOR` records what arrived, once per delivery (`EVALSHA` and `FCALL` carry the same
//! keys and arguments).

use super::monitor::{Line, Monitor};
use super::operations;
use super::vectors::{bytes_json, cases, error_json, expected, id, text, Check};
use redis_atomic::script::{registry, ScriptDef};
use redis_atomic::{Batching, Client, ClientConfig, Delivery};
use redis_atomic_testkit::{RedisServer, ServerOptions};
use serde_json::{json, Value};

/// Commands a client sends besides its operations (loading scripts, probing the server).
const NOT_OPERATIONS: &[&str] = &[
    "SCRIPT", "FUNCTION", "PING", "INFO", "COMMAND", "CLIENT", "HELLO", "SELECT",
];

#[tokio::test]
async fn arguments() {
    let server = RedisServer::start(ServerOptions::default()).unwrap();
    let mut monitor = Monitor::start(&server);
    let mut check = Check::new("arguments");
    for delivery in [Delivery::Eval, Delivery::Functions] {
        // One decision per call (no batch entry point) and the scripts, not a native command.
        let config = ClientConfig::default()
            .delivery(delivery)
            .force_lua(true)
            .batching(Batching::off());
        let client = Client::connect(&server.url(), config).await.unwrap();
        for case in cases("arguments") {
            let actual = run(&client, &mut monitor, &case).await;
            let want = expected(&case, &["operation", "input", "setup"]);
            let label = format!("{} (delivery {})", id(&case), delivery.name());
            check.compare_as(&label, &want, &actual);
        }
    }
    check.finish();
}

/// One case: its setup, then the operation framed on the `MONITOR` feed.
async fn run(client: &Client, monitor: &mut Monitor, case: &Value) -> Value {
    monitor.command(&redis::cmd("FLUSHALL"));
    for step in case["setup"].as_array().into_iter().flatten() {
        operations::run(client, text(step, "operation"), &step["input"])
            .await
            .unwrap_or_else(|e| panic!("{}: setup failed: {e}", case["id"]));
    }
    let op = operations::run(client, text(case, "operation"), &case["input"]);
    let (outcome, lines) = monitor.frame(op).await;
    let mut actual = json!({ "sent": sent(&lines) });
    match outcome {
        Ok(Some(word)) => actual["outcome"] = json!(word),
        Ok(None) => {}
        Err(e) => actual["outcome"] = error_json(&e),
    }
    actual
}

/// The operation's request as the server saw it: one script call (repeated identically after a
/// `NOSCRIPT` or a missing Function, which counts once) or one command.
fn sent(lines: &[Line]) -> Value {
    let mut calls: Vec<Value> = Vec::new();
    for line in lines.iter().filter(|l| l.source != "lua") {
        let command = String::from_utf8_lossy(&line.args[0]).to_ascii_uppercase();
        if NOT_OPERATIONS.contains(&command.as_str()) {
            continue;
        }
        let call = decode(&command, &line.args[1..]);
        if !calls.contains(&call) {
            calls.push(call);
        }
    }
    match calls.len() {
        1 => calls.remove(0),
        _ => json!({ "several": calls }),
    }
}

/// `EVALSHA sha n keys.. args..` / `FCALL function n keys.. args..` (and their `_RO` twins) →
/// the script's name, keys and arguments; any other command → its name and arguments.
fn decode(command: &str, args: &[Vec<u8>]) -> Value {
    let all = || args.iter().map(|a| bytes_json(a)).collect::<Vec<_>>();
    let script: Option<&ScriptDef> = match command {
        "EVALSHA" | "EVALSHA_RO" => registry::ALL
            .iter()
            .copied()
            .find(|d| d.sha1.as_bytes() == args[0].as_slice()),
        "FCALL" | "FCALL_RO" => registry::ALL
            .iter()
            .copied()
            .find(|d| d.function.as_bytes() == args[0].as_slice()),
        _ => return json!({ "command": command, "args": all() }),
    };
    let Some(def) = script else {
        return json!({ "unknown_script": command, "args": all() });
    };
    // A script declaring `no-writes` goes by the read-only command, on either delivery.
    let read_only = command.ends_with("_RO");
    let n: usize = String::from_utf8_lossy(&args[1]).parse().expect("numkeys");
    let rest = &args[2..];
    let mut call = json!({
        "script": def.name,
        "keys": rest[..n].iter().map(|a| bytes_json(a)).collect::<Vec<_>>(),
        "args": rest[n..].iter().map(|a| bytes_json(a)).collect::<Vec<_>>(),
    });
    if read_only != def.read_only() {
        call["read_only_mismatch"] = json!(command);
    }
    call
}
