//! `serve`'s routes ([`leases`], [`routes`]), error mapping ([`errors`]) and document
//! ([`document`]), and what their tests share: the router on a real port over a real server,
//! and a JSON POST.

mod document;
mod errors;
mod leases;
mod routes;

use crate::common::{env, private_env, Env, Mode};
use redis_atomic::ClientConfig;
use redis_atomic_server::config::Config;
use redis_atomic_server::faces::serve::{router, ServeState};
use serde_json::Value;
use std::net::SocketAddr;
use std::time::Duration;

/// A running `serve` router and the server under it.
pub struct Served {
    pub env: Env,
    pub addr: SocketAddr,
    pub http: reqwest::Client,
}

/// `serve` with `config_toml` (namespaced by the test's unique keyspace when it sets none) on
/// this binary's shared server, client settings `config`.
pub async fn serve_with(test: &str, config_toml: &str, config: ClientConfig) -> Served {
    serve_on(env(Mode::StandaloneEval, test, config).await, config_toml).await
}

/// The same on a server of the test's own (`s.env.server`), for tests that kill or pause it.
pub async fn serve_private(test: &str, config_toml: &str, config: ClientConfig) -> Served {
    serve_on(private_env(test, config).await, config_toml).await
}

pub async fn serve_on(env: Env, config_toml: &str) -> Served {
    env.client
        .load(redis_atomic::script::registry::ALL)
        .await
        .unwrap();
    let mut toml = config_toml.to_string();
    if !toml.contains("[serve]") {
        toml.push_str(&format!(
            "\n[serve]\nnamespace = \"{}\"\n",
            env.keyspace.namespace()
        ));
    }
    let config = Config::parse(&toml, "test").unwrap();
    let state = ServeState::new(env.client.clone(), &config).unwrap();
    let app = router(state, 1024);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    Served {
        env,
        addr,
        http: reqwest::Client::new(),
    }
}

/// `serve` with `config_toml` and the default client settings.
pub async fn serve(test: &str, config_toml: &str) -> Served {
    serve_with(test, config_toml, ClientConfig::default()).await
}

/// One answer: status, headers, JSON body (Null when not JSON).
pub struct Answer {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
}

impl Answer {
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .map(|v| v.to_str().unwrap())
            .unwrap_or("")
    }

    /// Asserts a problem+json answer of `status` and `kind`.
    pub fn problem(&self, status: u16, kind: &str) {
        assert_eq!(self.status, status, "{}", self.body);
        assert_eq!(self.header("content-type"), "application/problem+json");
        assert_eq!(
            self.body["type"],
            format!("urn:redis-atomic:problem:{kind}"),
            "{}",
            self.body
        );
        assert_eq!(self.body["status"], status);
    }
}

impl Served {
    /// POSTs raw `body` to `path` with an optional bearer `token`.
    pub async fn post_raw(&self, path: &str, body: String, token: Option<&str>) -> Answer {
        let mut req = self
            .http
            .post(format!("http://{}{path}", self.addr))
            .body(body)
            .timeout(Duration::from_secs(30));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        answer(req.send().await.unwrap()).await
    }

    /// POSTs JSON `body` to `path`.
    pub async fn post(&self, path: &str, body: Value) -> Answer {
        self.post_raw(path, body.to_string(), None).await
    }

    /// GETs `path`.
    pub async fn get(&self, path: &str) -> (u16, String) {
        let r = self
            .http
            .get(format!("http://{}{path}", self.addr))
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.text().await.unwrap())
    }
}

async fn answer(r: reqwest::Response) -> Answer {
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    let text = r.text().await.unwrap();
    Answer {
        status,
        headers,
        body: serde_json::from_str(&text).unwrap_or(Value::Null),
    }
}
