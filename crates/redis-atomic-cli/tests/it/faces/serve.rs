//! `redis-atomic serve` proved with clients we did not write: Python's standard library and
//! Node's built-in `fetch` race the real binary over HTTP and count side effects (the scripts in
//! `foreign/serve_*`); plus the binary's own contract (bound address on stdout, refusal to
//! listen off loopback without auth, exit 0 on SIGTERM) and the `examples/http` clients.

use super::{bench_json, foreign};
use redis_atomic_testkit::{unique_prefix, RedisServer};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// A running `redis-atomic serve`; stopped with SIGTERM (and reaped) on drop.
struct Serve {
    child: Child,
    url: String,
    _config: tempfile::NamedTempFile,
}

const POLICY: &str = "burst";
const LIMIT: u32 = 25;

impl Serve {
    /// `serve --listen 127.0.0.1:0` on the shared server, a namespace of its own, and a
    /// fixed-window policy `burst` of LIMIT per minute.
    fn start(test: &str) -> Serve {
        Serve::start_with(test, &[])
    }

    /// [`Serve::start`] with more flags.
    fn start_with(test: &str, flags: &[&str]) -> Serve {
        let mut config = tempfile::NamedTempFile::new().unwrap();
        write!(
            config,
            "[serve]\nnamespace = \"{}\"\n[limits.{POLICY}]\nlimits = [ {{ algorithm = \"fixed-window\", limit = {LIMIT}, period_ms = 600000 }} ]\n",
            unique_prefix(test)
        )
        .unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_redis-atomic"))
            .args(["serve", "--listen", "127.0.0.1:0", "--redis"])
            .arg(RedisServer::shared().url())
            .arg("--config")
            .arg(config.path())
            .args(flags)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line.trim().to_string();
        assert!(url.starts_with("http://127.0.0.1:"), "first line: {line:?}");
        Serve {
            child,
            url,
            _config: config,
        }
    }

    /// SIGTERM, then the exit status (graceful shutdown exits 0).
    fn stop(&mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        self.child.wait().unwrap()
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            self.stop();
        }
    }
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `program script args…` and asserts it exits 0 (its stderr says what failed).
fn run(program: &str, script: &Path, args: &[&str]) {
    let out = Command::new(program)
        .arg(script)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{program} {}: {}\n{}",
        script.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// (a) Python threads racing acquire/release on a few resources never overlap inside the lock,
/// and fences strictly increase per resource.
#[test]
fn python_locks_never_overlap() {
    let mut s = Serve::start("foreign-locks");
    run("python3", &foreign("serve_locks.py"), &[&s.url, "12", "15"]);
    assert!(s.stop().success(), "serve exits 0 on SIGTERM");
}

/// (b) Node producers and workers: duplicate ids are not re-enqueued, every job acked exactly
/// once.
#[test]
fn node_queue_acks_every_job_once() {
    let s = Serve::start("foreign-queue");
    run("node", &foreign("serve_queue.mjs"), &[&s.url, "150", "6"]);
}

/// (c) Exactly `limit` of many concurrent Python consumes are admitted, the rest 429.
#[test]
fn python_limits_admit_exactly_limit() {
    let s = Serve::start("foreign-limits");
    let limit = LIMIT.to_string();
    run(
        "python3",
        &foreign("serve_limits.py"),
        &[&s.url, POLICY, &limit, "100"],
    );
}

/// The face's client batches decisions by default and `--no-batching` turns it off: the batch
/// size histogram on `/metrics` has samples after the same concurrent consumes only with it on.
#[test]
fn no_batching_turns_the_faces_batching_off() {
    for (flags, batching) in [(&[][..], true), (&["--no-batching"][..], false)] {
        let s = Serve::start_with(&format!("batching-{batching}"), flags);
        let limit = LIMIT.to_string();
        run(
            "python3",
            &foreign("serve_limits.py"),
            &[&s.url, POLICY, &limit, "100"],
        );
        let metrics = get(&s.url, "/metrics");
        assert!(metrics.starts_with("HTTP/1.1 200"), "{metrics}");
        assert_eq!(
            metrics.contains("redis_atomic_batch_size"),
            batching,
            "{flags:?}: {metrics}"
        );
    }
}

/// A GET over one connection (`Connection: close`): the whole response, head and body.
fn get(url: &str, path: &str) -> String {
    use std::io::Read;
    let addr = url.trim_start_matches("http://");
    let mut conn = std::net::TcpStream::connect(addr).unwrap();
    write!(
        conn,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    conn.read_to_string(&mut out).unwrap();
    out
}

/// The examples in `examples/http` run against a real `serve`.
#[test]
fn examples_run() {
    let s = Serve::start("foreign-examples");
    let dir = repo().join("examples/http");
    run("python3", &dir.join("serve_client.py"), &[&s.url]);
    run("node", &dir.join("serve_client.mjs"), &[&s.url]);
}

/// Off loopback without `[auth] tokens`, serve refuses to start: exit 2, one line.
#[test]
fn refuses_non_loopback_without_auth() {
    let out = Command::new(env!("CARGO_BIN_EXE_redis-atomic"))
        .args([
            "serve",
            "--listen",
            "0.0.0.0:0",
            "--redis",
            "redis://127.0.0.1:1",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("refusing to listen on 0.0.0.0:0 without auth"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(out.stdout.is_empty());
}

/// `bench --http` drives the in-process HTTP face and the library in one run and reports both
/// (figures are not asserted: timing belongs to the benchmark, not to a test).
#[test]
fn bench_http_reports_both_paths() {
    let report = bench_json("--http");
    for path in ["library", "http"] {
        assert!(report[path]["rate"].as_f64().unwrap() > 0.0, "{report}");
        assert!(report[path]["p50_us"].as_u64().unwrap() > 0, "{report}");
    }
    assert!(report["ratio"].as_f64().unwrap() > 0.0);
}
