//! Section `errors`: how failures are classified. A server's error reply (code and message) →
//! the error code and its facts (`nothing_ran`, `transient`, `retry_safe`, `timed_out`); and
//! events staged for real: a refused connect (a closed port) and a call whose request reached a
//! server stopped by `SIGSTOP` (retry-unsafe: one attempt; retry-safe: every attempt).

use super::operations;
use super::vectors::{cases, expected, text, uint, Check};
use redis_atomic::{Client, ClientConfig, Error, RetryPolicy};
use redis_atomic_testkit::{free_port, RedisServer, ServerOptions};
use serde_json::{json, Value};
use std::time::Duration;

/// Bounds the retries of a staged timeout by attempts, never by this deadline.
const DEADLINE: Duration = Duration::from_secs(60);

#[tokio::test]
async fn errors() {
    let mut check = Check::new("errors");
    for case in cases("errors") {
        let error = match case.get("reply") {
            Some(reply) => server_error(text(reply, "error")),
            None => staged(&case).await,
        };
        let want = expected(&case, &["reply", "event", "operation", "input", "client"]);
        check.compare(&case, &want, &facts(&error));
    }
    check.finish();
}

/// The facts every face reports, read from the library's error.
fn facts(e: &Error) -> Value {
    let mut out = json!({
        "error": e.code(),
        "nothing_ran": e.nothing_ran(),
        "transient": e.is_transient(),
        "retry_safe": e.retry_safe(),
        "timed_out": e.timed_out(),
    });
    if let Error::OutcomeUnknown { attempts, .. } = e {
        out["attempts"] = json!(attempts);
    }
    out
}

/// `CODE message`, as a server's error reply reads.
fn server_error(line: &str) -> Error {
    let (code, message) = line.split_once(' ').unwrap_or((line, ""));
    Error::from_server_error(code, message)
}

/// Stages the case's event for real and returns the error it ended in.
async fn staged(case: &Value) -> Error {
    match text(case, "event") {
        "connect_refused" => {
            // Nothing listens on a port the testkit just found free.
            let url = format!("redis://127.0.0.1:{}", free_port());
            Client::connect(&url, ClientConfig::default())
                .await
                .expect_err("a connect to a closed port fails")
        }
        "timeout_after_send" => timeout_after_send(case).await,
        other => panic!("unknown event {other:?}"),
    }
}

/// The case's operation, sent to a server that is stopped (`SIGSTOP`) once the client is
/// connected and the scripts loaded: every attempt's request waits in the socket until the
/// client's timeout; the server resumes only after the call returned.
async fn timeout_after_send(case: &Value) -> Error {
    let server = RedisServer::start(ServerOptions::default()).unwrap();
    let settings = &case["client"];
    let config = ClientConfig::default()
        .timeout(Duration::from_millis(uint(settings, "timeout_ms")))
        .retry(RetryPolicy::new(
            u32::try_from(uint(settings, "max_attempts")).expect("attempts"),
            DEADLINE,
        ));
    let patient = ClientConfig::default().timeout(Duration::from_secs(30));
    let client = Client::connect(&server.url(), patient).await.unwrap();
    let (operation, input) = (text(case, "operation"), &case["input"]);
    operations::run(&client, operation, input)
        .await
        .expect("the warm-up call (connections made, scripts loaded) succeeds");
    let impatient = client.with_config(config);
    server.pause();
    let result = operations::run(&impatient, operation, input).await;
    server.resume();
    result.expect_err("a call to a stopped server fails")
}
