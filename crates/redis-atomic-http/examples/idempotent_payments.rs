//! An axum payment service whose charges happen once per `Idempotency-Key`, however many
//! duplicates arrive at once.
//!
//! ```sh
//! cargo run --example idempotent_payments -- --listen 127.0.0.1:8080      # embedded redis-server
//! curl -i -X POST localhost:8080/charges -H 'Idempotency-Key: k1' \
//!      -H 'content-type: application/json' -d '{"account":"acme","amount_cents":500}'
//! curl localhost:8080/accounts/acme
//! ```
//! The ledger lives in Redis (`payments:acct:{<account>}:balance`). Run the same `curl` twice: the
//! second answer is the first one, replayed (`idempotent-replayed: true`), and the balance moved once.
#![allow(clippy::unwrap_used)]

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use clap::Parser;
use redis_atomic::idempotency::Idempotency;
use redis_atomic::{Client, ClientConfig, Keyspace};
use redis_atomic_http::{IdempotencyLayer, IdempotencyLayerConfig};
use serde::Deserialize;
use serde_json::json;

#[derive(Parser)]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: String,
    /// Redis URL; an embedded redis-server is started when absent.
    #[arg(long)]
    redis: Option<String>,
}

#[derive(Deserialize)]
struct Charge {
    account: String,
    amount_cents: i64,
}

fn balance_key(account: &str) -> Result<String, StatusCode> {
    Keyspace::new("payments")
        .and_then(|ks| ks.key("acct", 1, account, &["balance"]))
        .map_err(|_| StatusCode::BAD_REQUEST)
}

async fn charge(
    State(client): State<Client>,
    Json(c): Json<Charge>,
) -> (StatusCode, Json<serde_json::Value>) {
    if c.amount_cents <= 0 || c.amount_cents > 100_000_000 {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "amount_cents must be in 1..=100000000"})),
        );
    }
    let Ok(key) = balance_key(&c.account) else {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "bad account"})),
        );
    };
    match client
        .command(redis::cmd("INCRBY").arg(&key).arg(-c.amount_cents))
        .await
    {
        Ok(redis::Value::Int(balance)) => {
            let id = format!("ch_{:016x}", rand::random::<u64>());
            (
                StatusCode::CREATED,
                Json(json!({"charge_id": id, "balance_cents": balance})),
            )
        }
        _ => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"error": "ledger unavailable"})),
        ),
    }
}

async fn account(
    State(client): State<Client>,
    Path(id): Path<String>,
) -> Result<Json<serde_json::Value>, StatusCode> {
    let key = balance_key(&id)?;
    let v = client
        .command(redis::cmd("GET").arg(&key))
        .await
        .map_err(|_| StatusCode::SERVICE_UNAVAILABLE)?;
    let balance: Option<i64> =
        redis::from_redis_value(v).map_err(|_| StatusCode::INTERNAL_SERVER_ERROR)?;
    Ok(Json(json!({"balance_cents": balance.unwrap_or(0)})))
}

/// The service: routes plus the idempotency layer on POST /charges.
pub fn app(client: Client) -> Router {
    let store = Idempotency::new(client.clone(), Keyspace::new("payments").unwrap());
    let layer = IdempotencyLayer::new(store, IdempotencyLayerConfig::default());
    Router::new()
        .route("/charges", post(charge).layer(layer))
        .route("/accounts/{id}", get(account))
        .with_state(client)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let (url, _server) = match args.redis {
        Some(url) => (url, None),
        None => {
            let server = redis_atomic_testkit::RedisServer::start(Default::default())?;
            (server.url(), Some(server))
        }
    };
    let client = Client::connect(&url, ClientConfig::default()).await?;
    let listener = tokio::net::TcpListener::bind(&args.listen).await?;
    println!(
        "listening on http://{} (redis {url})",
        listener.local_addr()?
    );
    axum::serve(listener, app(client)).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 50 concurrent duplicates of one charge move the balance once and all get the same answer.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn duplicates_charge_once() {
        let server = redis_atomic_testkit::RedisServer::start(Default::default()).unwrap();
        let client = Client::connect(&server.url(), ClientConfig::default())
            .await
            .unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app(client)).await.unwrap() });
        let http = reqwest::Client::new();
        let mut tasks = Vec::new();
        for _ in 0..50 {
            let http = http.clone();
            tasks.push(tokio::spawn(async move {
                http.post(format!("http://{addr}/charges"))
                    .header("idempotency-key", "order-1")
                    .json(&json!({"account": "acme", "amount_cents": 500}))
                    .send()
                    .await
                    .unwrap()
            }));
        }
        let mut created = Vec::new();
        for t in tasks {
            let r = t.await.unwrap();
            match r.status().as_u16() {
                201 => created.push(r.text().await.unwrap()),
                409 => assert!(r.headers().contains_key("retry-after")),
                other => panic!("unexpected status {other}"),
            }
        }
        assert!(!created.is_empty());
        assert!(
            created.windows(2).all(|w| w[0] == w[1]),
            "replays differ from the original"
        );
        let bal: serde_json::Value = http
            .get(format!("http://{addr}/accounts/acme"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(bal["balance_cents"], -500, "charged more than once");
    }
}
