//! `redis-atomic bench --http`: what the HTTP face (`serve`) costs over the library path.
//!
//! One decision, a rate-limit `consume` (GCRA, one key per task, never limited), made two ways
//! on the same server in the same run: through [`RateLimiter::consume`] directly, and as
//! `POST /v1/limits/bench/consume` to a `serve` router started in-process on a loopback port,
//! each task on its own keep-alive HTTP/1.1 connection. The paths alternate in ABBA rounds (as the
//! other entries do, [`super::phase`]) so machine drift hits both; the report is decisions/s
//! of each, their ratio, p50/p99 of each and the p50 added by HTTP.
//!
//! The HTTP client is a minimal keep-alive writer/reader over a `TcpStream` (known request,
//! `Content-Length` replies), so the figure is the server side's cost, not a client library's.
//!
//! A decision that fails (an error of the library, an HTTP status other than 200, a broken
//! connection, which is then opened again) is counted as an error of its path, and the run goes
//! on ([`super::errors`]).

use super::errors::{self, Errors};
use super::stats::quantile;
use super::BenchArgs;
use anyhow::Context as _;
use redis_atomic::ratelimit::{Limit, RateLimiter};
use redis_atomic::{Client, Keyspace};
use redis_atomic_server::config::Config;
use redis_atomic_server::faces::serve::{router, ServeState};
use std::io::Write;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// One path's figures over all its rounds.
#[derive(Debug, serde::Serialize)]
pub struct HttpPath {
    /// Decisions per second.
    pub rate: f64,
    /// Median latency, µs.
    pub p50_us: u32,
    /// 99th percentile latency, µs.
    pub p99_us: u32,
    /// Decisions that failed (not in the figures above).
    pub errors: u64,
    /// The first error, on one line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The report of `bench --http`.
#[derive(Debug, serde::Serialize)]
pub struct HttpReport {
    /// Concurrent tasks.
    pub tasks: usize,
    /// The library path.
    pub library: HttpPath,
    /// The HTTP path.
    pub http: HttpPath,
    /// HTTP decisions/s over the library's.
    pub ratio: f64,
    /// HTTP p50 minus library p50, µs.
    pub added_p50_us: i64,
}

/// `bench --http`: connects (or starts the embedded server) and runs the comparison.
pub async fn connect_and_run(args: &BenchArgs) -> anyhow::Result<HttpReport> {
    let (_url, _server, client) = super::connect(args).await?;
    run(args, &client).await
}

/// Runs the comparison on `client`'s server with a fresh namespace; the router is served in-process.
pub async fn run(args: &BenchArgs, client: &Client) -> anyhow::Result<HttpReport> {
    let ns = format!("bench-http-{:08x}", rand::random::<u32>());
    let toml = format!(
        "[serve]\nnamespace = \"{ns}\"\n[limits.bench]\nlimits = [ {{ algorithm = \"gcra\", limit = 1000000000, period_ms = 1000 }} ]\n"
    );
    let config = Config::parse(&toml, "bench")?;
    let state = ServeState::new(client.clone(), &config)?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let app = router(state, 4096);
    let server = tokio::spawn(redis_atomic_server::start::serve(
        listener,
        app,
        std::future::pending(),
    ));
    let limit = Limit::gcra(1_000_000_000, Duration::from_secs(1))?;
    let limiter = RateLimiter::new(client.clone(), Keyspace::new(&ns)?, limit);
    let tasks = args.concurrency;
    let each = Duration::from_secs_f64(args.seconds / args.rounds as f64);
    let (mut lib, mut web) = (Samples::default(), Samples::default());
    for round in 0..args.rounds {
        let http_first = round % 2 == 1;
        for http in [http_first, !http_first] {
            let s = if http {
                phase_http(addr, tasks, each).await?
            } else {
                phase_library(&limiter, tasks, each).await?
            };
            if http { &mut web } else { &mut lib }.add(s);
        }
    }
    server.abort();
    let (library, http) = (lib.finish(), web.finish());
    Ok(HttpReport {
        tasks,
        ratio: http.rate / library.rate.max(f64::MIN_POSITIVE),
        added_p50_us: i64::from(http.p50_us) - i64::from(library.p50_us),
        library,
        http,
    })
}

/// What one path's tasks measured: latencies of the decisions made, the errors, the time.
#[derive(Default)]
struct Samples {
    latencies: Vec<u32>,
    errors: Errors,
    secs: f64,
}

impl Samples {
    fn add(&mut self, other: Samples) {
        self.latencies.extend(other.latencies);
        self.errors.merge(&other.errors);
        self.secs += other.secs;
    }

    /// One decision's result, timed from `sent`.
    fn record(&mut self, sent: Instant, result: anyhow::Result<()>) {
        match result {
            Ok(()) => self.latencies.push(micros(sent)),
            Err(e) => self.errors.record(&e),
        }
    }

    fn finish(mut self) -> HttpPath {
        self.latencies.sort_unstable();
        HttpPath {
            rate: self.latencies.len() as f64 / self.secs.max(f64::MIN_POSITIVE),
            p50_us: quantile(&self.latencies, 0.5),
            p99_us: quantile(&self.latencies, 0.99),
            errors: self.errors.count,
            error: self.errors.first,
        }
    }
}

fn micros(since: Instant) -> u32 {
    u32::try_from(since.elapsed().as_micros()).unwrap_or(u32::MAX)
}

async fn phase_library(
    limiter: &RateLimiter,
    tasks: usize,
    secs: Duration,
) -> anyhow::Result<Samples> {
    let started = Instant::now();
    let deadline = started + secs;
    let mut handles = Vec::new();
    for t in 0..tasks {
        let limiter = limiter.clone();
        handles.push(tokio::spawn(async move {
            let (key, mut samples) = (format!("k{t}"), Samples::default());
            while Instant::now() < deadline {
                let sent = Instant::now();
                let decided = limiter.consume(&key, 1).await;
                let allowed = decided.map_err(anyhow::Error::from).and_then(|d| {
                    anyhow::ensure!(d.is_allowed(), "limited");
                    Ok(())
                });
                samples.record(sent, allowed);
            }
            samples
        }));
    }
    collect(handles, started).await
}

async fn phase_http(addr: SocketAddr, tasks: usize, secs: Duration) -> anyhow::Result<Samples> {
    let started = Instant::now();
    let deadline = started + secs;
    let mut handles = Vec::new();
    for t in 0..tasks {
        handles.push(tokio::spawn(async move {
            let body = format!("{{\"key\":\"k{t}\"}}");
            let request = format!(
                "POST /v1/limits/bench/consume HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
            let (mut conn, mut samples) = (None, Samples::default());
            while Instant::now() < deadline {
                let sent = Instant::now();
                let result = exchange(addr, &mut conn, &request).await;
                if result.is_err() {
                    conn = None; // broken or out of step: a new connection for the next one
                    tokio::time::sleep(errors::PAUSE).await;
                }
                samples.record(sent, result);
            }
            samples
        }));
    }
    collect(handles, started).await
}

/// One request on `conn` (opened first if there is none); Ok when answered 200.
async fn exchange(
    addr: SocketAddr,
    conn: &mut Option<BufReader<TcpStream>>,
    request: &str,
) -> anyhow::Result<()> {
    if conn.is_none() {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        *conn = Some(BufReader::new(stream));
    }
    let conn = conn.as_mut().context("no connection")?;
    conn.get_mut().write_all(request.as_bytes()).await?;
    let status = tokio::time::timeout(errors::TIMEOUT, read_response(conn))
        .await
        .context("no response in time")??;
    anyhow::ensure!(status == 200, "HTTP {status}");
    Ok(())
}

/// Reads one response (status line, headers, `Content-Length` body); returns the status.
async fn read_response(conn: &mut BufReader<TcpStream>) -> anyhow::Result<u16> {
    let mut line = String::new();
    conn.read_line(&mut line).await?;
    let status: u16 = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .with_context(|| format!("bad status line {line:?}"))?;
    let mut length = 0usize;
    loop {
        line.clear();
        anyhow::ensure!(conn.read_line(&mut line).await? > 0, "connection closed");
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().context("content-length")?;
            }
        }
    }
    anyhow::ensure!(length <= 1 << 16, "reply too large");
    let mut body = vec![0; length];
    conn.read_exact(&mut body).await?;
    Ok(status)
}

async fn collect(
    handles: Vec<tokio::task::JoinHandle<Samples>>,
    started: Instant,
) -> anyhow::Result<Samples> {
    let mut all = Samples::default();
    for h in handles {
        all.add(h.await?);
    }
    all.secs = started.elapsed().as_secs_f64();
    Ok(all)
}

impl HttpReport {
    /// The report as a small table.
    pub fn write_table(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(
            out,
            "ratelimit consume, {} tasks, keep-alive HTTP/1.1 vs library",
            self.tasks
        )?;
        writeln!(
            out,
            "{:<8} {:>12} {:>8} {:>8}",
            "path", "decisions/s", "p50 µs", "p99 µs"
        )?;
        for (name, p) in [("library", &self.library), ("http", &self.http)] {
            writeln!(
                out,
                "{name:<8} {:>12.0} {:>8} {:>8}",
                p.rate, p.p50_us, p.p99_us
            )?;
        }
        for (name, p) in [("library", &self.library), ("http", &self.http)] {
            if let Some(first) = &p.error {
                let every = if p.rate == 0.0 {
                    " (every decision)"
                } else {
                    ""
                };
                writeln!(out, "  {name}: {} failed{every}, first: {first}", p.errors)?;
            }
        }
        writeln!(
            out,
            "http/library: {:.0} % of decisions/s, {:+} µs at p50",
            self.ratio * 100.0,
            self.added_p50_us
        )
    }
}
