//! An axum API whose `GET /hello` is rate-limited per `X-Api-Key`, with IETF `RateLimit`
//! headers, 429 + `Retry-After`, and an explicit policy for when Redis is down.
//!
//! ```sh
//! cargo run --example rate_limited_api -- --listen 127.0.0.1:8080 \
//!     --algorithm gcra --limit 5 --window-ms 10000          # embedded redis-server
//! curl -i localhost:8080/hello -H 'X-Api-Key: k1'           # 200, RateLimit: "gcra";r=4;t=2
//! ```
//! Six quick `curl`s: the sixth is `429 Too Many Requests` with `Retry-After`. Another key has its
//! own quota. `--fail-open` serves requests unlimited while Redis is unreachable (default: 503).
#![allow(clippy::unwrap_used)]

use axum::routing::get;
use axum::{Json, Router};
use clap::Parser;
use redis_atomic::ratelimit::{Algorithm, Limit, RateLimiter};
use redis_atomic::{Client, ClientConfig, Keyspace};
use redis_atomic_http::{RateLimitLayer, RateLimitLayerConfig, Unavailable};
use serde_json::json;
use std::time::Duration;

#[derive(Parser)]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: String,
    /// Redis URL; an embedded redis-server is started when absent.
    #[arg(long)]
    redis: Option<String>,
    /// fixed-window | anchored-window | sliding-log | sliding-window | token-bucket | gcra.
    #[arg(long, default_value = "gcra")]
    algorithm: String,
    /// Requests per window.
    #[arg(long, default_value_t = 5)]
    limit: u64,
    /// The window (period), in milliseconds.
    #[arg(long, default_value_t = 10_000)]
    window_ms: u64,
    /// Serve requests unlimited while Redis is unreachable (default: refuse with 503).
    #[arg(long)]
    fail_open: bool,
}

async fn hello() -> Json<serde_json::Value> {
    Json(json!({"hello": "world"}))
}

/// The layer's settings: keyed by `X-Api-Key` (401 without one), `unavailable` when Redis is not.
pub fn layer_config(unavailable: Unavailable) -> RateLimitLayerConfig {
    RateLimitLayerConfig::by_header("x-api-key", unavailable)
        .missing_key(axum::http::StatusCode::UNAUTHORIZED)
}

/// The service: `GET /hello` behind a rate limit of `limit` with `config`.
pub fn app(client: Client, limit: Limit, config: RateLimitLayerConfig) -> Router {
    let limiter = RateLimiter::new(client, Keyspace::new("api").unwrap(), limit);
    Router::new().route(
        "/hello",
        get(hello).layer(RateLimitLayer::new(limiter, config)),
    )
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let algorithm: Algorithm = args.algorithm.parse()?;
    let limit = Limit::new(algorithm, args.limit, Duration::from_millis(args.window_ms))?;
    let (url, _server) = match args.redis {
        Some(url) => (url, None),
        None => {
            let server = redis_atomic_testkit::RedisServer::start(Default::default())?;
            (server.url(), Some(server))
        }
    };
    let client = Client::connect(&url, ClientConfig::default()).await?;
    let unavailable = if args.fail_open {
        Unavailable::FailOpen
    } else {
        Unavailable::FailClosed
    };
    let listener = tokio::net::TcpListener::bind(&args.listen).await?;
    println!(
        "listening on http://{} (redis {url}, {algorithm} {}/{} ms per X-Api-Key)",
        listener.local_addr()?,
        args.limit,
        args.window_ms
    );
    axum::serve(listener, app(client, limit, layer_config(unavailable))).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Per algorithm, 1000 requests from 32 concurrent clients with one API key against a limit
    /// of 100: exactly 100 are served, the other 900 get 429 with `Retry-After` and `r=0`; another
    /// key is served; no key is 401.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn exactly_the_limit_is_served() {
        let server = redis_atomic_testkit::RedisServer::start(Default::default()).unwrap();
        let client = Client::connect(&server.url(), ClientConfig::default())
            .await
            .unwrap();
        for algorithm in Algorithm::ALL {
            // Windows longer than any test run (fixed windows are aligned to the epoch).
            let period = match algorithm {
                Algorithm::FixedWindow | Algorithm::SlidingWindow => 366 * 24 * 3600,
                _ => 3600,
            };
            let limit = Limit::new(algorithm, 100, Duration::from_secs(period)).unwrap();
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            // This test counts admissions: a decision slowed past the production 250 ms by a
            // loaded machine must not become a 503, so the timeout here is generous.
            let config = layer_config(Unavailable::FailClosed).timeout(Duration::from_secs(10));
            let app = app(client.clone(), limit, config);
            tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
            let http = reqwest::Client::new();
            let key = format!("key-{}", rand::random::<u64>());
            let mut tasks = Vec::new();
            for t in 0..32 {
                let (http, key) = (http.clone(), key.clone());
                tasks.push(tokio::spawn(async move {
                    let mut seen = Vec::new();
                    for _ in 0..(1000 / 32 + usize::from(t < 1000 % 32)) {
                        let r = http
                            .get(format!("http://{addr}/hello"))
                            .header("x-api-key", &key)
                            .send()
                            .await
                            .unwrap();
                        if r.status() == 429 {
                            let secs: u64 = r.headers()["retry-after"]
                                .to_str()
                                .unwrap()
                                .parse()
                                .unwrap();
                            assert!(secs >= 1);
                        }
                        let rl = r.headers()["ratelimit"].to_str().unwrap().to_string();
                        seen.push((r.status().as_u16(), rl));
                    }
                    seen
                }));
            }
            let mut statuses: HashMap<u16, usize> = HashMap::new();
            for t in tasks {
                for (status, rl) in t.await.unwrap() {
                    *statuses.entry(status).or_default() += 1;
                    if status == 429 {
                        assert!(rl.contains(";r=0;"), "{rl}");
                    }
                }
            }
            assert_eq!(statuses.get(&200), Some(&100), "{algorithm}: {statuses:?}");
            assert_eq!(statuses.get(&429), Some(&900), "{algorithm}: {statuses:?}");
            let other = http
                .get(format!("http://{addr}/hello"))
                .header("x-api-key", "another")
                .send()
                .await
                .unwrap();
            assert_eq!(other.status(), 200);
            let none = http
                .get(format!("http://{addr}/hello"))
                .send()
                .await
                .unwrap();
            assert_eq!(none.status(), 401);
        }
    }
}
