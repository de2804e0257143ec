//! `redis-atomic proxy`: Idempotency-Key semantics and rate limits in front of any HTTP service,
//! without changing it.
//!
//! The proxy is `redis-atomic-http`'s two layers in front of a forwarding service, per route:
//!
//! ```text
//! client ─▶ Dispatch (longest path prefix) ─▶ RateLimitLayer × policies ─▶ IdempotencyLayer ─▶ Forward ─▶ upstream
//! ```
//!
//! * [`forward`]: hop-by-hop headers, `X-Forwarded-*`, 413 / 502 / 504 as problem+json.
//! * [`routes`]: the route table and the client's scope ([`credential_scope`]: a hash of the
//!   `Authorization` header), which scopes both idempotency keys and quotas.
//! * The idempotency layer does the rest (400 / 409 + `Retry-After` / 422 / replay with
//!   `Idempotent-Replayed: true`; 5xx — a 502 or 504 from [`Forward`] included — frees the key)
//!   and passes the claim's generation upstream in [`GENERATION_HEADER`].
//!
//! Everything a request may not pass through unjudged fails closed: Redis unreachable → 503
//! (never forwarded without a claim, never unlimited).

pub mod forward;
pub mod routes;

pub use forward::{Forward, ForwardConfig, Upstream};
pub use routes::credential_scope;

use crate::config::Config;
use crate::start::{Face, FaceError};
use redis_atomic::idempotency::{Idempotency, IdempotencyConfig};
use redis_atomic::{Client, Keyspace};
use routes::{Dispatch, RouteSpec, Shared};
use std::future::Future;
use std::time::Duration;

/// The request header carrying the claim's generation (its fence) to the upstream. It increases
/// each time a key is taken over after a lost lease, so a service that rejects writes with an
/// older generation than it has seen cannot be overwritten by a stale execution.
pub const GENERATION_HEADER: &str = "idempotency-generation";

/// Default namespace of the proxy's keys.
pub const DEFAULT_NAMESPACE: &str = "proxy";
/// Default largest request body and stored response body: 1 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 1 << 20;
/// Default wait for the upstream's response head: 30 s.
pub const DEFAULT_UPSTREAM_TIMEOUT: Duration = Duration::from_secs(30);
/// Longest wait for a rate-limit decision before the request is refused with 503.
const LIMITER_TIMEOUT: Duration = Duration::from_secs(2);
/// Room for status and headers beside the body in a stored record.
const RECORD_OVERHEAD: usize = 64 << 10;

/// Why a proxy could not be built from its settings: one line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProxyError {
    /// A setting the library refuses (namespace, key TTL…).
    #[error("{0}")]
    Settings(String),
}

/// A built proxy: the route table, ready to serve.
pub struct Proxy {
    dispatch: Dispatch,
}

impl Proxy {
    /// The proxy `config` describes, over `client`, forwarding to `upstream`.
    pub fn new(client: Client, config: &Config, upstream: Upstream) -> Result<Proxy, ProxyError> {
        let settings = |e: redis_atomic::Error| ProxyError::Settings(e.to_string());
        let p = &config.proxy;
        let namespace = p.namespace.clone().unwrap_or(DEFAULT_NAMESPACE.into());
        let keyspace = Keyspace::new(namespace).map_err(settings)?;
        let max_body_bytes = p.max_body_bytes.unwrap_or(DEFAULT_MAX_BODY_BYTES);
        let mut idem = IdempotencyConfig::default()
            .max_response_bytes(max_body_bytes.saturating_add(RECORD_OVERHEAD));
        if let Some(ms) = p.key_ttl_ms {
            idem = idem.result_ttl(Duration::from_millis(ms));
        }
        let store = Idempotency::new(client.clone(), keyspace.clone())
            .with_config(idem)
            .map_err(settings)?;
        let timeout = p
            .upstream_timeout_ms
            .map_or(DEFAULT_UPSTREAM_TIMEOUT, Duration::from_millis);
        let forward = Forward::new(
            upstream,
            ForwardConfig {
                timeout,
                max_body_bytes,
            },
        );
        let shared = Shared {
            client,
            keyspace,
            store,
            max_body_bytes,
            limiter_timeout: LIMITER_TIMEOUT,
            forward,
        };
        let mut routes = Vec::with_capacity(p.routes.len());
        for route in &p.routes {
            let policies = route
                .limits
                .iter()
                .map(|name| {
                    config
                        .policy(name)
                        .map(|p| (name.as_str(), p))
                        .ok_or_else(|| ProxyError::Settings(format!("no policy [limits.{name}]")))
                })
                .collect::<Result<Vec<_>, _>>()?;
            let spec = RouteSpec {
                require_key: route.require_key,
                policies,
            };
            routes.push((route.path.clone(), shared.stack(&spec)));
        }
        let fallback = shared.stack(&RouteSpec {
            require_key: false,
            policies: Vec::new(),
        });
        Ok(Proxy {
            dispatch: Dispatch::new(routes, fallback),
        })
    }

    /// The proxy as an axum router (every path goes to the route table).
    pub fn router(&self) -> axum::Router {
        axum::Router::new().fallback_service(self.dispatch.clone())
    }

    /// Serves on `listener` until `shutdown` completes, then finishes the requests in flight
    /// (the faces' one way: [`crate::start::serve`]).
    pub async fn serve(
        self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        crate::start::serve(listener, self.router(), shutdown).await
    }
}

/// The proxy as a [`Face`]: `redis-atomic proxy --upstream URL`. It does not authenticate (the
/// upstream does, with the `Authorization` header it receives unchanged), so it may listen on
/// any address.
pub struct ProxyFace {
    upstream: Upstream,
}

impl ProxyFace {
    /// The proxy in front of `upstream`.
    pub fn new(upstream: Upstream) -> ProxyFace {
        ProxyFace { upstream }
    }
}

impl Face for ProxyFace {
    fn name(&self) -> &'static str {
        "proxy"
    }

    fn authenticates(&self) -> bool {
        false
    }

    fn app(&self, client: Client, config: &Config) -> Result<axum::Router, FaceError> {
        Ok(Proxy::new(client, config, self.upstream.clone())?.router())
    }
}
