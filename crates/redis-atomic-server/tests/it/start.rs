//! The one start-up sequence ([`redis_atomic_server::start::run`]) for both faces: the bound
//! address is the first line, `http://HOST:PORT`, whatever the face; the face then answers on
//! it; the shutdown future stops it with `Ok`. Each step fails before the next one starts: a
//! bad config before the listen check, the listen check (for a face that authenticates) before
//! Redis, Redis before the port is bound.

use redis_atomic_server::faces::proxy::Upstream;
use redis_atomic_server::faces::{ProxyFace, ServeFace};
use redis_atomic_server::start::{run, Embedded, Face, FaceError, Start, StartError};
use redis_atomic_testkit::{RedisServer, ServerOptions};
use std::io::Write;
use std::net::SocketAddr;
use tokio::sync::{mpsc, oneshot};

/// A writer that hands each line to the test as it is written.
struct Lines(mpsc::UnboundedSender<String>, Vec<u8>);

impl Write for Lines {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.1.extend_from_slice(buf);
        while let Some(end) = self.1.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.1.drain(..=end).collect();
            let _ = self
                .0
                .send(String::from_utf8_lossy(&line).trim_end().to_string());
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn loopback() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

/// Starts `face` with `start`, waits for its first line, GETs `path` on it, stops it: the
/// line, the answer's status, and what `run` returned.
async fn first_line_then(
    face: &dyn Face,
    start: Start,
    path: &str,
) -> (String, u16, Result<(), StartError>) {
    let (lines, mut rx) = mpsc::unbounded_channel();
    let (stop, stopped) = oneshot::channel::<()>();
    let mut out = Lines(lines, Vec::new());
    let server = run(face, start, &mut out, async {
        let _ = stopped.await;
    });
    let client = async {
        let line = rx.recv().await.unwrap();
        let status = reqwest::get(format!("{line}{path}"))
            .await
            .unwrap()
            .status();
        let _ = stop.send(());
        (line, status.as_u16())
    };
    let (result, (line, status)) = tokio::join!(server, client);
    (line, status, result)
}

/// `serve` and `proxy` print the same first line, `http://127.0.0.1:PORT`, answer on it, and
/// stop with `Ok` when the shutdown future resolves: `serve` its health route on the shared
/// server, the proxy a path forwarded to an upstream that is down (502, after a claim-free GET).
#[tokio::test]
async fn every_face_prints_its_address_first_and_stops_on_shutdown() {
    let redis = Some(RedisServer::shared().url());
    let start = Start::new(loopback()).redis(redis.clone());
    let (line, status, result) = first_line_then(&ServeFace, start, "/healthz").await;
    result.unwrap();
    assert!(line.starts_with("http://127.0.0.1:"), "{line}");
    assert_ne!(line, "http://127.0.0.1:0");
    assert_eq!(status, 200);

    let upstream = Upstream::parse("http://127.0.0.1:9").unwrap();
    let start = Start::new(loopback()).redis(redis);
    let (line, status, result) = first_line_then(&ProxyFace::new(upstream), start, "/x").await;
    result.unwrap();
    assert!(line.starts_with("http://127.0.0.1:"), "{line}");
    assert_eq!(status, 502);
}

/// A redis-server started for the run (the caller's [`Embed`](redis_atomic_server::start::Embed);
/// the CLI passes verify's bootstrap).
fn embed(cluster: bool) -> Result<Embedded, FaceError> {
    assert!(!cluster);
    let server = RedisServer::start(ServerOptions::default())?;
    Ok(Embedded::new(vec![server.url()], server))
}

/// Without a Redis URL the face starts the embedded server it was given and is ready on it:
/// `/readyz` (a PING through the face's client) answers 200. Given none, it refuses to start.
#[tokio::test]
async fn without_a_url_a_face_embeds_redis() {
    let start = Start::new(loopback()).embed(embed);
    let (line, status, result) = first_line_then(&ServeFace, start, "/readyz").await;
    result.unwrap();
    assert!(line.starts_with("http://127.0.0.1:"), "{line}");
    assert_eq!(status, 200);

    let e = fails(&ServeFace, Start::new(loopback())).await;
    assert!(matches!(e, StartError::Redis(_)), "{e:?}");
}

/// `run` up to its first failure, with a Redis that refuses connections; nothing is printed.
async fn fails(face: &dyn Face, start: Start) -> StartError {
    let mut out = Vec::new();
    let e = run(face, start, &mut out, std::future::pending())
        .await
        .unwrap_err();
    assert!(out.is_empty(), "{}", String::from_utf8_lossy(&out));
    e
}

/// The order of the checks: config, then the listen check (only for a face that
/// authenticates), then Redis; each error is one line.
#[tokio::test]
async fn each_step_fails_before_the_next() {
    let closed = Some("redis://127.0.0.1:1".to_string());
    let lan: SocketAddr = "0.0.0.0:0".parse().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[sever]\nnamespace = \"x\"\n").unwrap();
    let e = fails(
        &ServeFace,
        Start::new(lan).redis(closed.clone()).config(Some(bad)),
    )
    .await;
    assert!(matches!(e, StartError::Config(_)), "{e:?}");

    let e = fails(&ServeFace, Start::new(lan).redis(closed.clone())).await;
    assert!(matches!(e, StartError::Listen(_)), "{e:?}");
    let text = e.to_string();
    assert!(
        text.contains("refusing to listen on 0.0.0.0:0 without auth") && !text.contains('\n'),
        "{text}"
    );

    // The proxy does not authenticate: no listen check, so Redis is the first failure.
    let upstream = Upstream::parse("http://127.0.0.1:9").unwrap();
    let e = fails(
        &ProxyFace::new(upstream),
        Start::new(lan).redis(closed.clone()),
    )
    .await;
    assert!(matches!(e, StartError::Redis(_)), "{e:?}");
    assert!(e.to_string().contains("Redis"), "{e}");

    let e = fails(&ServeFace, Start::new(loopback()).redis(closed)).await;
    assert!(matches!(e, StartError::Redis(_)), "{e:?}");
}
