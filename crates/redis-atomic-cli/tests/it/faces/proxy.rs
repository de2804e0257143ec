//! `redis-atomic proxy` proved with software we did not write: a Python `http.server` upstream
//! that counts its own executions, and a Python `urllib` client racing duplicates through the
//! real binary (`foreign/`). The upstream's counts are the evidence: each key ran once.

use super::foreign;
use redis_atomic_testkit::{unique_prefix, RedisServer};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A child process killed when the test ends, however it ends.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Spawns `cmd` with stdout piped and returns it with its first stdout line.
fn spawn_reading_line(cmd: &mut Command) -> (Running, String) {
    let mut child = Running(cmd.stdout(Stdio::piped()).spawn().unwrap());
    let stdout = child.0.stdout.take().unwrap();
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    assert!(!line.is_empty(), "{cmd:?} printed nothing");
    (child, line.trim().to_string())
}

/// The routes of the Python client's scenario; its keys under a namespace of the test's own (the
/// server is this binary's shared one).
const CONFIG: &str = r#"
[limits.tight]
limits = [ { algorithm = "fixed-window", limit = 5, period_ms = 600000 } ]

[[proxy.routes]]
path = "/orders"
require_key = true

[[proxy.routes]]
path = "/limited"
limits = ["tight"]
"#;

/// Starts the proxy binary in front of `upstream`; returns it and its base URL.
fn start_proxy(upstream: &str, redis: &str, config: &std::path::Path) -> (Running, String) {
    let (proxy, line) =
        spawn_reading_line(Command::new(env!("CARGO_BIN_EXE_redis-atomic")).args([
            "proxy",
            "--upstream",
            upstream,
            "--listen",
            "127.0.0.1:0",
            "--url",
            redis,
            "--config",
            config.to_str().unwrap(),
        ]));
    // The first line is the bound address and nothing else, as for every face.
    let port = line.strip_prefix("http://127.0.0.1:").unwrap_or_default();
    assert!(port.parse::<u16>().is_ok_and(|p| p > 0), "{line}");
    (proxy, line)
}

/// Sends SIGTERM and waits (bounded) for the exit code.
fn terminate(mut child: Running) -> Option<i32> {
    let pid = child.0.id().to_string();
    Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if let Some(status) = child.0.try_wait().unwrap() {
            return status.code();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

fn show(o: &Output) -> String {
    format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A Python client racing duplicates through the proxy in front of a Python upstream: each key
/// executes once upstream, 2xx answers for a key are byte-identical and later ones say replayed,
/// in-flight duplicates get 409 + Retry-After, a reused key with another body 422, a 500 is not
/// stored, the generation reaches upstream, credentials are independent, and a limited route
/// admits exactly its limit; then SIGTERM stops the proxy with exit 0.
#[test]
fn python_client_and_upstream_see_exactly_once() {
    let server = RedisServer::shared();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("proxy.toml");
    let namespace = unique_prefix("proxy-python");
    std::fs::write(
        &config,
        format!("[proxy]\nnamespace = \"{namespace}\"\n{CONFIG}"),
    )
    .unwrap();
    let (upstream, port) = spawn_reading_line(
        Command::new("python3")
            .arg(foreign("proxy_upstream.py"))
            .stderr(Stdio::inherit()),
    );
    let upstream_url = format!("http://127.0.0.1:{port}");
    let (proxy, proxy_url) = start_proxy(&upstream_url, &server.url(), &config);
    let out = Command::new("python3")
        .arg(foreign("proxy_client.py"))
        .args([&proxy_url, &upstream_url])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));
    assert_eq!(
        terminate(proxy),
        Some(0),
        "the proxy drains and exits 0 on SIGTERM"
    );
    drop(upstream);
}

/// Usage and config mistakes: exit 2 with one line on stderr, before anything starts.
#[test]
fn mistakes_exit_2_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "[[proxy.routes]]\npath = \"/x\"\nlimits = [\"nope\"]\n",
    )
    .unwrap();
    let cases: [(&[&str], &str); 4] = [
        (&["--upstream", "https://h"], "only http"),
        (
            &[
                "--upstream",
                "http://127.0.0.1:9",
                "--config",
                bad.to_str().unwrap(),
            ],
            "no policy",
        ),
        (
            &["--upstream", "http://127.0.0.1:9", "--listen", "nonsense"],
            "--listen",
        ),
        (
            &[
                "--upstream",
                "http://127.0.0.1:9",
                "--listen",
                "127.0.0.1:0",
            ],
            "Redis",
        ),
    ];
    for (args, expected) in cases {
        let o = Command::new(env!("CARGO_BIN_EXE_redis-atomic"))
            .arg("proxy")
            .args(args)
            .args(["--redis", "redis://127.0.0.1:1"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", show(&o));
        assert!(err.contains(expected), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}
