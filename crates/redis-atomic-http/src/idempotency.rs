//! A tower layer with the semantics of the IETF `Idempotency-Key` header draft
//! (draft-ietf-httpapi-idempotency-key-header), for axum.
//!
//! For the configured methods (POST and PATCH by default):
//! * no `Idempotency-Key` where one is required → 400; malformed → 400;
//! * the same key still being processed → 409 with `Retry-After`;
//! * the same key with a different request (method, path, query, body) → 422;
//! * the same key already processed → the stored response, with `Idempotent-Replayed: true`;
//! * otherwise the request runs once; its response is stored (by default except 5xx, which frees
//!   the key so a retry runs again: [`IdempotencyLayerConfig::cache`]), while the claim is
//!   extended every lease/3 to keep it alive for slow handlers. A response larger than
//!   `max_body_bytes` is answered, and stored, as a final 500: it ran, so a duplicate must not run
//!   it again, and it cannot be replayed.
//! * The execution runs in a task of its own: a client that disconnects does not cancel it half
//!   way, so its outcome is still stored (or the key freed) and a retry sees it.
//! * With [`IdempotencyLayerConfig::generation_header`], the claim's fence (its generation: it
//!   increases on every takeover of the key) is passed to the handler in that request header
//!   (any value the client sent there is replaced), so the service can fence its own writes.
//!
//! If Redis cannot be reached the request is refused with 503 and never runs: running it without
//! the claim could run it twice. Error bodies are `application/problem+json`.

use crate::layer::{read_request_body, run, Handler, Inner, Layer, Service};
use crate::problem;
use axum::body::Body;
use http::{header, HeaderName, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::BodyExt;
use redis_atomic::idempotency::{
    Begin, Body as StoredBody, Claim, Failure, Fingerprint, Idempotency, Outcome,
    Response as StoredResponse, Stored,
};
use redis_atomic::lease::Extend;
use std::sync::Arc;
use std::time::Duration;

/// The request header carrying the key.
pub const IDEMPOTENCY_KEY: &str = "idempotency-key";
/// The response header marking a replay.
pub const IDEMPOTENT_REPLAYED: &str = "idempotent-replayed";

/// Picks the scope (tenant, principal) a key belongs to, from the request head.
pub type ScopeFn = Arc<dyn Fn(&http::request::Parts) -> String + Send + Sync>;

/// Settings of the layer.
#[derive(Clone)]
#[non_exhaustive]
pub struct IdempotencyLayerConfig {
    /// Methods the layer handles (others pass through untouched).
    pub methods: Vec<Method>,
    /// Whether a missing key is an error (400) or the request passes through unprotected.
    pub required: bool,
    /// Longest accepted key, in bytes.
    pub max_key_len: usize,
    /// Largest request body accepted (413 above it), and largest response body stored.
    pub max_body_bytes: usize,
    /// Response headers stored and replayed.
    pub replay_headers: Vec<HeaderName>,
    /// Scope extractor; by default every request shares one scope.
    pub scope: ScopeFn,
    /// Which responses are stored for replay. The rest free the key so a retry runs again.
    /// Default: everything but 5xx (a server error is worth retrying, not replaying).
    pub cache: CachePolicy,
    /// Request header that carries the claim's fence to the handler (none by default).
    pub generation_header: Option<HeaderName>,
}

/// Decides from the status whether a response is stored for replay.
pub type CachePolicy = Arc<dyn Fn(StatusCode) -> bool + Send + Sync>;

impl Default for IdempotencyLayerConfig {
    fn default() -> Self {
        IdempotencyLayerConfig {
            methods: vec![Method::POST, Method::PATCH],
            required: true,
            max_key_len: 255,
            max_body_bytes: 1 << 20,
            replay_headers: vec![
                header::CONTENT_TYPE,
                header::LOCATION,
                header::CONTENT_LOCATION,
            ],
            scope: Arc::new(|_| "default".to_string()),
            cache: Arc::new(|status: StatusCode| !status.is_server_error()),
            generation_header: None,
        }
    }
}

impl IdempotencyLayerConfig {
    /// With this scope extractor (e.g. from an authenticated principal header).
    pub fn scope(
        mut self,
        f: impl Fn(&http::request::Parts) -> String + Send + Sync + 'static,
    ) -> Self {
        self.scope = Arc::new(f);
        self
    }

    /// With this request/response body limit.
    pub fn max_body_bytes(mut self, limit: usize) -> Self {
        self.max_body_bytes = limit;
        self
    }

    /// With this cache policy (e.g. `|s| s.is_success()` to replay only successes).
    pub fn cache(mut self, f: impl Fn(StatusCode) -> bool + Send + Sync + 'static) -> Self {
        self.cache = Arc::new(f);
        self
    }

    /// Passes the claim's fence to the handler in request header `name`.
    pub fn generation_header(mut self, name: HeaderName) -> Self {
        self.generation_header = Some(name);
        self
    }

    /// Whether the key is required.
    pub fn required(mut self, required: bool) -> Self {
        self.required = required;
        self
    }
}

/// What the idempotency layer decides per request: the store and the settings.
pub struct IdempotencyHandler {
    store: Idempotency,
    config: IdempotencyLayerConfig,
}

/// The layer. Results are kept for the store's `result_ttl` (24 h by default).
pub type IdempotencyLayer = Layer<IdempotencyHandler>;

/// The service the layer wraps around yours.
pub type IdempotencyService<S> = Service<S, IdempotencyHandler>;

impl IdempotencyLayer {
    /// A layer over `store`.
    pub fn new(store: Idempotency, config: IdempotencyLayerConfig) -> Self {
        Layer::from_handler(IdempotencyHandler { store, config })
    }
}

impl Handler for IdempotencyHandler {
    async fn handle<S: Inner>(self: Arc<Self>, inner: S, req: Request<Body>) -> Response<Body> {
        let config = &self.config;
        if !config.methods.contains(req.method()) {
            return run(inner, req).await;
        }
        let key = match req.headers().get(IDEMPOTENCY_KEY) {
            None if config.required => {
                return problem::response(
                    StatusCode::BAD_REQUEST,
                    "Idempotency-Key header is required for this request",
                )
            }
            None => return run(inner, req).await,
            Some(v) => match valid_key(v, config.max_key_len) {
                Some(k) => k,
                None => {
                    return problem::response(
                        StatusCode::BAD_REQUEST,
                        "Idempotency-Key must be 1..=255 visible ASCII characters",
                    )
                }
            },
        };
        let (parts, body) = req.into_parts();
        let bytes = match read_request_body(body, config.max_body_bytes).await {
            Ok(bytes) => bytes,
            Err(refused) => return refused,
        };
        let target = parts.uri.path_and_query().map_or("", |p| p.as_str());
        let fp = Fingerprint::of(&[parts.method.as_str().as_bytes(), target.as_bytes(), &bytes]);
        let scope = (config.scope)(&parts);
        match self.store.begin(&scope, key.as_bytes(), fp).await {
            Ok(Begin::Claimed(claim)) => {
                let mut req = Request::from_parts(parts, Body::from(bytes));
                if let Some(name) = &config.generation_header {
                    req.headers_mut()
                        .insert(name.clone(), HeaderValue::from(claim.fence().0));
                }
                // Its own task: a client hanging up must not cancel the execution between the
                // side effect and storing its outcome.
                let task = tokio::spawn(execute(inner, self.clone(), claim, req));
                task.await.unwrap_or_else(|e| {
                    tracing::error!(error = %e, "idempotent execution panicked");
                    problem::response(StatusCode::INTERNAL_SERVER_ERROR, "handler failed")
                })
            }
            Ok(Begin::InProgress { retry_after }) => in_progress(retry_after),
            Ok(Begin::Replay(Stored::Completed(r) | Stored::Failed(r))) => replay(r),
            Ok(Begin::Mismatch) => problem::response(
                StatusCode::UNPROCESSABLE_ENTITY,
                "Idempotency-Key was already used with a different request",
            ),
            // `Begin` is non-exhaustive: an outcome this layer does not know is never run blindly.
            Ok(other) => {
                tracing::error!(
                    ?other,
                    "idempotency outcome unknown to this layer; request refused"
                );
                problem::response(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "unexpected idempotency state",
                )
            }
            Err(e) => {
                tracing::warn!(error = %e, "idempotency store unavailable; request refused");
                problem::response(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "idempotency store unavailable; retry later",
                )
            }
        }
    }
}

/// Runs the handler while extending the claim every lease/3, then stores the outcome.
async fn execute<S: Inner>(
    inner: S,
    state: Arc<IdempotencyHandler>,
    mut claim: Claim,
    req: Request<Body>,
) -> Response<Body> {
    let lease = state.store.config().ttl;
    let response = {
        let work = run(inner, req);
        tokio::pin!(work);
        let mut beat = tokio::time::interval(lease / 3);
        beat.tick().await;
        loop {
            tokio::select! {
                r = &mut work => break r,
                _ = beat.tick() => {
                    if let Ok(Extend::Lost) = claim.extend(lease).await {
                        tracing::warn!("idempotency claim lost while the handler ran");
                    }
                }
            }
        }
    };
    let (parts, body) = response.into_parts();
    if !(state.config.cache)(parts.status) {
        // Not stored: the key is freed, and the body passes through unbuffered.
        end(claim.fail(&Failure::Retryable).await);
        return Response::from_parts(parts, body);
    }
    let limit = state.config.max_body_bytes;
    let bytes = match http_body_util::Limited::new(body, limit).collect().await {
        Ok(c) => c.to_bytes(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            return too_large_to_store(claim).await
        }
        Err(e) => {
            // The body broke off: nothing whole to store or answer; a retry may run again.
            tracing::warn!(error = %e, "response body failed; idempotency key freed");
            end(claim.fail(&Failure::Retryable).await);
            return problem::response(StatusCode::BAD_GATEWAY, "the response body broke off");
        }
    };
    let mut stored = StoredResponse::new(parts.status.as_u16(), bytes.to_vec());
    for name in &state.config.replay_headers {
        for value in parts.headers.get_all(name) {
            stored = stored.header(name.as_str(), value.as_bytes().to_vec());
        }
    }
    end(claim.complete(&stored).await);
    Response::from_parts(parts, Body::from(bytes))
}

/// Logs an end of a claim that did not take effect.
fn end(outcome: Result<Outcome, redis_atomic::Error>) {
    if !matches!(outcome, Ok(Outcome::Stored)) {
        tracing::warn!(?outcome, "idempotency result not stored");
    }
}

/// The request ran but its response is over the limit: a final 500, stored, so a duplicate
/// replays the refusal instead of running the request again.
async fn too_large_to_store(claim: Claim) -> Response<Body> {
    let detail = "the response was over the size limit: the request ran, its response is not kept";
    let answer = problem::response(StatusCode::INTERNAL_SERVER_ERROR, detail);
    let (parts, body) = answer.into_parts();
    let bytes = body
        .collect()
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    let stored = StoredResponse::new(parts.status.as_u16(), bytes.to_vec())
        .header("content-type", b"application/problem+json".to_vec());
    if let Err(e) = claim.fail(&Failure::Final(stored)).await {
        tracing::warn!(error = %e, "idempotency failure not stored");
    }
    Response::from_parts(parts, Body::from(bytes))
}

fn valid_key(v: &HeaderValue, max: usize) -> Option<String> {
    let s = v.to_str().ok()?.trim();
    let ok =
        !s.is_empty() && s.len() <= max && s.bytes().all(|b| b.is_ascii_graphic() || b == b' ');
    ok.then(|| s.to_string())
}

fn in_progress(retry_after: Duration) -> Response<Body> {
    let mut r = problem::response(
        StatusCode::CONFLICT,
        "a request with this Idempotency-Key is still being processed",
    );
    let secs = retry_after.as_millis().div_ceil(1000).max(1);
    if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
        r.headers_mut().insert(header::RETRY_AFTER, v);
    }
    r
}

fn replay(stored: StoredResponse) -> Response<Body> {
    let status = StatusCode::from_u16(stored.status).unwrap_or(StatusCode::OK);
    let body = match stored.body {
        StoredBody::Bytes(b) => Body::from(b),
        _ => Body::empty(),
    };
    let mut r = Response::new(body);
    *r.status_mut() = status;
    for (name, value) in stored.headers {
        if let (Ok(n), Ok(v)) = (HeaderName::try_from(name), HeaderValue::from_bytes(&value)) {
            r.headers_mut().append(n, v);
        }
    }
    r.headers_mut()
        .insert(IDEMPOTENT_REPLAYED, HeaderValue::from_static("true"));
    r
}
