//! `rls`: envoyproxy/ratelimit's YAML read as it is ([`config`]), and the gRPC face end to end
//! against real Redis ([`grpc`]: all or nothing, check only, deadline, reload; [`cluster`]: one
//! slot with a hash tag, per-slot decisions without). `verify`'s `rls` row is the CLI's, tested
//! there.

mod cluster;
mod config;
mod grpc;

use redis_atomic_server::faces::rls::pb::ratelimit::{
    Entry, RateLimitDescriptor, RateLimitRequest, RateLimitServiceClient,
};
use redis_atomic_server::faces::rls::{RlsFace, RlsSettings};
use redis_atomic_server::start::{run, Start};
use std::net::SocketAddr;
use std::path::PathBuf;
use tokio::sync::{mpsc, oneshot};

/// The fixtures folder: the reference README's examples and `gateway.yaml`.
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/rls-config")
}

/// A descriptor of `(key, value)` entries.
pub fn desc(entries: &[(&str, &str)]) -> RateLimitDescriptor {
    RateLimitDescriptor {
        entries: entries
            .iter()
            .map(|(k, v)| Entry {
                key: k.to_string(),
                value: v.to_string(),
            })
            .collect(),
        limit: None,
        hits_addend: None,
    }
}

/// A request of `domain` with `descriptors`.
pub fn request(domain: &str, descriptors: Vec<RateLimitDescriptor>) -> RateLimitRequest {
    RateLimitRequest {
        domain: domain.into(),
        descriptors,
        hits_addend: 0,
    }
}

/// A running `rls` face; stops when dropped.
pub struct Running {
    pub url: String,
    pub client: RateLimitServiceClient<tonic::transport::Channel>,
    _stop: oneshot::Sender<()>,
    _thread: std::thread::JoinHandle<()>,
}

struct Lines(mpsc::UnboundedSender<String>, Vec<u8>);

impl std::io::Write for Lines {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.1.extend_from_slice(buf);
        while let Some(end) = self.1.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.1.drain(..=end).collect();
            let _ = self
                .0
                .send(String::from_utf8_lossy(&line).trim_end().into());
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Starts `rls` through the faces' start-up on Redis `url` (a cluster node with `cluster`)
/// with `settings`, and connects a gRPC client to the first line's address.
pub async fn start(url: String, cluster: bool, settings: RlsSettings) -> Running {
    let face = RlsFace::new(settings).unwrap();
    let listen: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let start = Start::new(listen).redis(Some(url)).cluster(cluster);
    let (lines, mut rx) = mpsc::unbounded_channel();
    let (stop, stopped) = oneshot::channel::<()>();
    // The start-up holds a `&dyn Face` (not Send): its own thread and runtime, as in the CLI.
    let thread = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let mut out = Lines(lines, Vec::new());
        rt.block_on(run(&face, start, &mut out, async {
            let _ = stopped.await;
        }))
        .unwrap();
    });
    let url = rx.recv().await.expect("the first line");
    let client = RateLimitServiceClient::connect(url.clone()).await.unwrap();
    Running {
        url,
        client,
        _stop: stop,
        _thread: thread,
    }
}

/// Settings with `config`, a deadline no test machine misses, and the other defaults.
pub fn settings(config: PathBuf, namespace: &str) -> RlsSettings {
    let mut s = RlsSettings::default();
    s.config = Some(config);
    s.namespace = namespace.into();
    // Not the production deadline: a decision on a loaded test machine may take longer than it
    // (one took over 10 ms while builds ran beside it), and the tests judge decisions, not time.
    // The deadline test sets its own.
    s.deadline = std::time::Duration::from_secs(10);
    s
}
