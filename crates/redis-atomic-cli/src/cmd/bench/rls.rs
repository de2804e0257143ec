//! `redis-atomic bench --rls`: what Envoy's gRPC rate-limit face (`rls`) costs over the library
//! path, for requests of 1 and of 4 descriptors.
//!
//! The same decision made two ways on the same server in the same run: through
//! [`EntryLimiter::decide`] directly (the entries `rls` would send: fixed windows of 10^9 per
//! second, one identity per task and descriptor, under the domain's tag), and as
//! `ShouldRateLimit` to an `rls` service served in-process on a loopback port, each task on its
//! own gRPC channel (one HTTP/2 connection, as Envoy keeps one per worker). The paths alternate
//! in ABBA rounds ([`super::phase`]'s rule) so machine drift hits both; for each path and size:
//! decisions/s, p50/p99, and the server's µs per decision (`INFO commandstats`). The closing
//! lines give rls/library decisions/s, the p50 rls adds, and the server time of a 4-descriptor
//! request over a 1-descriptor one.

use super::stats::{quantile, ServerStats};
use super::BenchArgs;
use redis_atomic::ratelimit::{Entry, EntryLimiter, Limit};
use redis_atomic::{Client, Keyspace};
use redis_atomic_server::faces::rls::pb::ratelimit::{
    Code, Entry as PbEntry, RateLimitDescriptor, RateLimitRequest, RateLimitServiceClient,
    RateLimitServiceServer,
};
use redis_atomic_server::faces::rls::{Rls, RlsFace, RlsSettings, Rules};
use std::io::Write;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

const CONFIG: &str = "domain: bench
descriptors:
  - {key: d0, rate_limit: {unit: second, requests_per_unit: 1000000000}}
  - {key: d1, rate_limit: {unit: second, requests_per_unit: 1000000000}}
  - {key: d2, rate_limit: {unit: second, requests_per_unit: 1000000000}}
  - {key: d3, rate_limit: {unit: second, requests_per_unit: 1000000000}}
";

/// One path and request size over all its rounds.
#[derive(Debug, serde::Serialize)]
pub struct RlsPath {
    /// `library` or `rls`.
    pub path: &'static str,
    /// Descriptors per request.
    pub descriptors: usize,
    /// Decisions (requests) per second.
    pub rate: f64,
    /// Median latency, µs.
    pub p50_us: u32,
    /// 99th percentile latency, µs.
    pub p99_us: u32,
    /// Server µs per decision (commandstats).
    pub server_us: f64,
}

/// The report of `bench --rls`.
#[derive(Debug, serde::Serialize)]
pub struct RlsReport {
    /// Concurrent tasks.
    pub tasks: usize,
    /// Every path and size.
    pub paths: Vec<RlsPath>,
}

/// `bench --rls`: connects (or starts the embedded server) and runs the comparison.
pub async fn connect_and_run(args: &BenchArgs) -> anyhow::Result<RlsReport> {
    let (url, _server, client) = super::connect(args).await?;
    run(args, &url, &client).await
}

/// Runs the comparison on `client`'s server (`url`, for commandstats) with a fresh namespace.
pub async fn run(args: &BenchArgs, url: &str, client: &Client) -> anyhow::Result<RlsReport> {
    let ns = format!("bench-rls-{:08x}", rand::random::<u32>());
    let mut settings = RlsSettings::default();
    settings.namespace = ns.clone();
    settings.deadline = Duration::from_secs(5);
    let rules = Rules::parse([("bench.yaml", CONFIG)])?;
    let rls = RlsFace::with_rules(settings, rules)
        .service(client.clone())
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let addr = serve(rls).await?;
    let limiter = EntryLimiter::new(client.clone(), Keyspace::new(&ns)?);
    let mut stats = redis::Client::open(url)?
        .get_multiplexed_async_connection()
        .await?;
    let each = Duration::from_secs_f64(args.seconds / args.rounds as f64);
    let mut paths = Vec::new();
    for n in [1usize, 4] {
        let (mut lib, mut grpc) = (Samples::default(), Samples::default());
        for round in 0..args.rounds {
            let rls_first = round % 2 == 1;
            for via_rls in [rls_first, !rls_first] {
                let before = ServerStats::fetch(&mut stats).await?;
                let s = if via_rls {
                    phase_rls(addr, args.concurrency, n, each).await?
                } else {
                    phase_library(&limiter, args.concurrency, n, each).await?
                };
                let usec = before
                    .since(&ServerStats::fetch(&mut stats).await?, &[])
                    .usec;
                if via_rls { &mut grpc } else { &mut lib }.add(s, usec);
            }
        }
        paths.push(lib.finish("library", n));
        paths.push(grpc.finish("rls", n));
    }
    Ok(RlsReport {
        tasks: args.concurrency,
        paths,
    })
}

/// Serves `rls`'s gRPC routes in-process on a loopback port (for the run's lifetime).
async fn serve(rls: Rls) -> anyhow::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let app = tonic::service::Routes::new(RateLimitServiceServer::new(rls)).into_axum_router();
    tokio::spawn(redis_atomic_server::start::serve(
        listener,
        app,
        std::future::pending(),
    ));
    Ok(addr)
}

#[derive(Default)]
struct Samples {
    latencies: Vec<u32>,
    secs: f64,
    usec: u64,
}

impl Samples {
    fn add(&mut self, (latencies, secs): (Vec<u32>, f64), usec: u64) {
        self.latencies.extend(latencies);
        self.secs += secs;
        self.usec += usec;
    }

    fn finish(mut self, path: &'static str, descriptors: usize) -> RlsPath {
        self.latencies.sort_unstable();
        let n = self.latencies.len().max(1) as f64;
        RlsPath {
            path,
            descriptors,
            rate: self.latencies.len() as f64 / self.secs.max(f64::MIN_POSITIVE),
            p50_us: quantile(&self.latencies, 0.5),
            p99_us: quantile(&self.latencies, 0.99),
            server_us: self.usec as f64 / n,
        }
    }
}

fn micros(since: Instant) -> u32 {
    u32::try_from(since.elapsed().as_micros()).unwrap_or(u32::MAX)
}

/// The entries `rls` sends for task `t`'s request of `n` descriptors (its identities and limit).
fn entries(t: usize, n: usize) -> anyhow::Result<Vec<Entry>> {
    let limit = Limit::fixed_window(1_000_000_000, Duration::from_secs(1))?.named("second")?;
    Ok((0..n)
        .map(|i| Entry::new(limit.clone(), format!("bench\u{1f}d{i}=t{t}"), 1))
        .collect())
}

async fn phase_library(
    limiter: &EntryLimiter,
    tasks: usize,
    n: usize,
    secs: Duration,
) -> anyhow::Result<(Vec<u32>, f64)> {
    let started = Instant::now();
    let deadline = started + secs;
    let mut handles = Vec::new();
    for t in 0..tasks {
        let (limiter, entries) = (limiter.clone(), entries(t, n)?);
        handles.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            while Instant::now() < deadline {
                let sent = Instant::now();
                let v = limiter.decide("bench", &entries).await?;
                anyhow::ensure!(v.decision.is_allowed(), "limited");
                lat.push(micros(sent));
            }
            anyhow::Ok(lat)
        }));
    }
    collect(handles, started).await
}

async fn phase_rls(
    addr: SocketAddr,
    tasks: usize,
    n: usize,
    secs: Duration,
) -> anyhow::Result<(Vec<u32>, f64)> {
    let started = Instant::now();
    let deadline = started + secs;
    let mut handles = Vec::new();
    for t in 0..tasks {
        handles.push(tokio::spawn(async move {
            let mut client = RateLimitServiceClient::connect(format!("http://{addr}")).await?;
            let descriptors = (0..n)
                .map(|i| RateLimitDescriptor {
                    entries: vec![PbEntry {
                        key: format!("d{i}"),
                        value: format!("t{t}"),
                    }],
                    limit: None,
                    hits_addend: None,
                })
                .collect();
            let req = RateLimitRequest {
                domain: "bench".into(),
                descriptors,
                hits_addend: 0,
            };
            let mut lat = Vec::new();
            while Instant::now() < deadline {
                let sent = Instant::now();
                let r = client.should_rate_limit(req.clone()).await?.into_inner();
                anyhow::ensure!(r.overall_code == Code::Ok as i32, "limited");
                lat.push(micros(sent));
            }
            anyhow::Ok(lat)
        }));
    }
    collect(handles, started).await
}

async fn collect(
    handles: Vec<tokio::task::JoinHandle<anyhow::Result<Vec<u32>>>>,
    started: Instant,
) -> anyhow::Result<(Vec<u32>, f64)> {
    let mut all = Vec::new();
    for h in handles {
        all.extend(h.await??);
    }
    Ok((all, started.elapsed().as_secs_f64()))
}

impl RlsReport {
    fn get(&self, path: &str, n: usize) -> Option<&RlsPath> {
        self.paths
            .iter()
            .find(|p| p.path == path && p.descriptors == n)
    }

    /// The report as a small table and its ratios.
    pub fn write_table(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(
            out,
            "rls ShouldRateLimit vs library EntryLimiter::decide, {} tasks (one gRPC channel each)",
            self.tasks
        )?;
        writeln!(
            out,
            "{:<8} {:>5} {:>12} {:>8} {:>8} {:>10}",
            "path", "desc", "decisions/s", "p50 µs", "p99 µs", "server µs"
        )?;
        for p in &self.paths {
            writeln!(
                out,
                "{:<8} {:>5} {:>12.0} {:>8} {:>8} {:>10.1}",
                p.path, p.descriptors, p.rate, p.p50_us, p.p99_us, p.server_us
            )?;
        }
        for n in [1, 4] {
            if let (Some(l), Some(r)) = (self.get("library", n), self.get("rls", n)) {
                writeln!(
                    out,
                    "{n} descriptor(s): rls/library {:.0} % of decisions/s, {:+} µs at p50",
                    100.0 * r.rate / l.rate.max(f64::MIN_POSITIVE),
                    i64::from(r.p50_us) - i64::from(l.p50_us)
                )?;
            }
        }
        if let (Some(one), Some(four)) = (self.get("rls", 1), self.get("rls", 4)) {
            writeln!(
                out,
                "rls server time, 4 descriptors / 1: {:.2}x",
                four.server_us / one.server_us.max(f64::MIN_POSITIVE)
            )?;
        }
        Ok(())
    }
}
