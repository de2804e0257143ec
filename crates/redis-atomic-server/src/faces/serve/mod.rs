//! `redis-atomic serve`: the primitives over HTTP/JSON for services in any language.
//!
//! An axum [`Router`] under `/v1` whose handlers are thin: parse the body ([`error::JsonBody`]),
//! call one library method, turn its outcome into JSON. A refusal (held, limited, stale fence) is
//! a normal body with 409/429; errors are problems ([`error`] has the mapping). Each bearer token
//! maps to a namespace ([`crate::auth::Auth`]), and every key of a request lives under that
//! namespace, so one tenant's `orders` lock is not another's.
//!
//! Routes: [`locks`], [`queues`] ([`dead`] letters), [`limits`], [`semaphores`], [`quotas`], [`dedup`], [`fenced`],
//! [`idempotency`]; `/openapi.json` ([`openapi`]), `/metrics`,
//! `/healthz`, `/readyz` ([`crate::health`], [`crate::metrics`]).

pub mod dead;
pub mod dedup;
pub mod error;
pub mod extract;
pub mod fenced;
pub mod fields;
pub mod idempotency;
pub mod limits;
pub mod locks;
pub mod openapi;
pub mod params;
pub mod queues;
pub mod quotas;
pub mod semaphores;

use crate::auth::{Auth, AuthError};
use crate::config::Config;
use crate::start::{Face, FaceError};
use crate::{health, metrics};
use axum::extract::{DefaultBodyLimit, FromRequestParts, State};
use axum::routing::{get, post};
use axum::Router;
use error::ApiError;
use http::request::Parts;
use http::StatusCode;
use redis_atomic::ratelimit::RateLimiter;
use redis_atomic::{Client, Keyspace};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// Default largest request body: 64 KiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 64 * 1024;
/// Default namespace when no token maps to one.
pub const DEFAULT_NAMESPACE: &str = "serve";

/// One namespace's handles, built once at start.
pub struct Tenant {
    /// The library client.
    pub client: Client,
    /// The namespace's keyspace.
    pub keyspace: Keyspace,
    /// Locks under it.
    pub locks: redis_atomic::lock::Locks,
    /// One limiter per configured policy.
    pub limiters: BTreeMap<String, RateLimiter>,
}

/// Largest `[serve] max_body_bytes`: 1 MiB, the smallest of the library's size limits on what a
/// body carries (a job's payload, an idempotency response), so a body the server reads never
/// holds a value too large for the library: a size is refused with 413 before it is parsed, and
/// every other refusal is a schema constraint (422).
pub const MAX_BODY_BYTES: usize = redis_atomic::queue::MAX_PAYLOAD;

/// What every handler shares.
pub struct ServeState {
    /// The library client.
    pub client: Client,
    auth: Auth,
    tenants: HashMap<String, Arc<Tenant>>,
    /// `/openapi.json`, made once at start ([`openapi::document`]).
    openapi: Arc<str>,
}

/// Why `serve` could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SetupError {
    /// A namespace the library refuses.
    #[error("namespace: {0}")]
    Namespace(#[from] redis_atomic::Error),
    /// `[serve] max_body_bytes` out of `1..=MAX_BODY_BYTES`.
    #[error("[serve] max_body_bytes must be 1..={MAX_BODY_BYTES}, got {0}")]
    MaxBody(usize),
}

impl ServeState {
    /// Builds the tenants of `config` over `client`.
    pub fn new(client: Client, config: &Config) -> Result<Arc<Self>, SetupError> {
        let default_ns = config
            .serve
            .namespace
            .as_deref()
            .unwrap_or(DEFAULT_NAMESPACE);
        let auth = Auth::new(&config.auth, default_ns);
        let policies: BTreeMap<String, _> = config
            .limits
            .keys()
            .filter_map(|name| Some((name.clone(), config.policy(name)?)))
            .collect();
        let openapi = openapi::document(&policies, auth.required()).to_string();
        let mut tenants = HashMap::new();
        for ns in auth.namespaces() {
            let keyspace = Keyspace::new(ns.clone())?;
            let limiters = policies
                .iter()
                .map(|(name, policy)| {
                    let limiter =
                        RateLimiter::new(client.clone(), keyspace.clone(), policy.clone());
                    (name.clone(), limiter)
                })
                .collect();
            let tenant = Tenant {
                client: client.clone(),
                locks: redis_atomic::lock::Locks::new(client.clone(), keyspace.clone()),
                keyspace,
                limiters,
            };
            tenants.insert(ns, Arc::new(tenant));
        }
        Ok(Arc::new(ServeState {
            client,
            auth,
            tenants,
            openapi: openapi.into(),
        }))
    }

    /// The auth settings (for [`crate::auth::check_listen`]).
    pub fn auth(&self) -> &Auth {
        &self.auth
    }
}

/// The caller's tenant, from its bearer token.
pub struct Caller(pub Arc<Tenant>);

impl FromRequestParts<Arc<ServeState>> for Caller {
    type Rejection = axum::response::Response;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<ServeState>,
    ) -> Result<Self, Self::Rejection> {
        use axum::response::IntoResponse;
        let ns = state
            .auth
            .namespace(&parts.headers)
            .map_err(AuthError::into_response)?;
        state
            .tenants
            .get(ns)
            .cloned()
            .map(Caller)
            .ok_or_else(|| AuthError::Unknown.into_response())
    }
}

/// The whole `serve` router: `/v1` routes, `/openapi.json`, `/metrics`, `/healthz`, `/readyz`,
/// the body limit and the request metrics.
pub fn router(state: Arc<ServeState>, max_body_bytes: usize) -> Router {
    // Installed before the first request, so every metric from here on is recorded.
    let _ = metrics::metrics_handle();
    let v1 = Router::new()
        .route("/locks/{resource}/acquire", post(locks::acquire))
        .route("/locks/{resource}/extend", post(locks::extend))
        .route("/locks/{resource}/release", post(locks::release))
        .route("/queues/{queue}/jobs", post(queues::enqueue))
        .route("/queues/{queue}/claim", post(queues::claim))
        .route("/queues/{queue}/jobs/{id}/ack", post(queues::ack))
        .route("/queues/{queue}/jobs/{id}/extend", post(queues::extend))
        .route("/queues/{queue}/jobs/{id}/nack", post(queues::nack))
        .route("/queues/{queue}/dead", get(dead::list))
        .route("/queues/{queue}/dead/{id}/requeue", post(dead::requeue))
        .route("/queues/{queue}/dead/purge", post(dead::purge))
        .route("/limits/{policy}/consume", post(limits::consume))
        .route("/semaphores/{name}/acquire", post(semaphores::acquire))
        .route("/semaphores/{name}/extend", post(semaphores::extend))
        .route("/semaphores/{name}/release", post(semaphores::release))
        .route("/quotas/{name}", get(quotas::get))
        .route("/quotas/{name}/add", post(quotas::add))
        .route("/dedup/{event}", post(dedup::seen))
        .route("/fenced/{resource}/write", post(fenced::write))
        .route("/idempotency/{key}/begin", post(idempotency::begin))
        .route("/idempotency/{key}/extend", post(idempotency::extend))
        .route("/idempotency/{key}/complete", post(idempotency::complete))
        .route("/idempotency/{key}/fail", post(idempotency::fail));
    Router::new()
        .nest("/v1", v1)
        .route("/openapi.json", get(document))
        .route("/metrics", get(metrics::metrics))
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(readyz))
        .fallback(not_found)
        .layer(axum::middleware::from_fn(metrics::track))
        .layer(DefaultBodyLimit::max(max_body_bytes))
        .with_state(state)
}

async fn document(State(state): State<Arc<ServeState>>) -> axum::response::Response {
    use axum::response::IntoResponse;
    let json = http::HeaderValue::from_static("application/json");
    (
        [(http::header::CONTENT_TYPE, json)],
        state.openapi.to_string(),
    )
        .into_response()
}

async fn readyz(State(state): State<Arc<ServeState>>) -> axum::response::Response {
    health::readyz(&state.client).await
}

async fn not_found() -> ApiError {
    ApiError::Client {
        status: StatusCode::NOT_FOUND,
        kind: "not-found",
        detail: "no such route (see /openapi.json)".into(),
    }
}

/// `serve` as a [`Face`]: every primitive over HTTP/JSON, bearer tokens mapped to namespaces
/// (so it refuses to listen off loopback without `[auth] tokens`).
#[derive(Clone, Copy, Debug, Default)]
pub struct ServeFace;

impl Face for ServeFace {
    fn name(&self) -> &'static str {
        "serve"
    }

    fn authenticates(&self) -> bool {
        true
    }

    fn app(&self, client: Client, config: &Config) -> Result<Router, FaceError> {
        let max_body = config
            .serve
            .max_body_bytes
            .unwrap_or(DEFAULT_MAX_BODY_BYTES);
        if !(1..=MAX_BODY_BYTES).contains(&max_body) {
            return Err(SetupError::MaxBody(max_body).into());
        }
        let state = ServeState::new(client, config)?;
        Ok(router(state, max_body))
    }
}
