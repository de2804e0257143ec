//! The forwarding service at the bottom of the proxy: one request in, the same request to the
//! upstream, its answer back.
//!
//! What a reverse proxy must do and nothing more: the hop-by-hop headers of either side (RFC 9110
//! §7.6.1: `Connection` and the names it lists, `Keep-Alive`, `TE`, `Trailer`,
//! `Transfer-Encoding`, `Upgrade`, `Proxy-*`) are removed, `X-Forwarded-For`/`-Host`/`-Proto`
//! are added, the request body is read up to the limit first (413 above it: a body cut off
//! half-way upstream would be a worse failure than a refusal up front), and the upstream's
//! failures become problem+json answers that say which one it was: 502 when the upstream could
//! not be reached or broke the connection, 504 when it did not answer in time. Both are 5xx, so
//! the idempotency layer above frees the key rather than storing them.
//!
//! One hyper-util client with a keep-alive pool is shared by every request (cloning it is
//! cheap): the proxy's cost per request is then one upstream round trip on a warm connection.

use axum::body::{Body, Bytes};
use futures::future::BoxFuture;
use http::{header, HeaderMap, HeaderName, HeaderValue, Request, Response, StatusCode, Uri};
use http_body_util::Full;
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use hyper_util::rt::TokioExecutor;
use redis_atomic_http::layer::read_request_body;
use redis_atomic_http::problem;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::task::{Context, Poll};
use std::time::Duration;

/// Where requests go: an `http://host:port[/base]` URL.
#[derive(Clone, Debug)]
pub struct Upstream {
    scheme_authority: String,
    base: String,
}

impl Upstream {
    /// Parses `url`: `http://` only (the proxy speaks plain HTTP/1.1 to a service beside it).
    pub fn parse(url: &str) -> Result<Upstream, String> {
        let uri: Uri = url
            .parse()
            .map_err(|e| format!("--upstream {url:?}: {e}"))?;
        match uri.scheme_str() {
            Some("http") => {}
            Some(other) => return Err(format!("--upstream {url:?}: scheme {other} (only http)")),
            None => return Err(format!("--upstream {url:?}: no scheme (http://host:port)")),
        }
        let authority = uri
            .authority()
            .ok_or_else(|| format!("--upstream {url:?}: no host"))?;
        if uri.query().is_some() {
            return Err(format!("--upstream {url:?}: a query is not allowed"));
        }
        Ok(Upstream {
            scheme_authority: format!("http://{authority}"),
            base: uri.path().trim_end_matches('/').to_string(),
        })
    }

    /// The upstream URI for a request to `path_and_query` on the proxy.
    fn uri(&self, path_and_query: &str) -> Result<Uri, http::uri::InvalidUri> {
        format!("{}{}{}", self.scheme_authority, self.base, path_and_query).parse()
    }
}

/// Settings of the forwarding service.
#[derive(Clone, Debug)]
pub struct ForwardConfig {
    /// Longest wait for the upstream's response head; past it: 504.
    pub timeout: Duration,
    /// Largest request body forwarded; above it: 413.
    pub max_body_bytes: usize,
}

/// The forwarding service: a tower service from requests to the upstream's responses (or the
/// problem+json answer for why there is none). Cheap to clone (the pool is shared).
#[derive(Clone)]
pub struct Forward {
    upstream: Upstream,
    client: Client<HttpConnector, Full<Bytes>>,
    config: ForwardConfig,
}

impl Forward {
    /// Forwards to `upstream` through one keep-alive pool.
    pub fn new(upstream: Upstream, config: ForwardConfig) -> Forward {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(config.timeout));
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(30))
            .build(connector);
        Forward {
            upstream,
            client,
            config,
        }
    }

    async fn forward(self, req: Request<Body>) -> Response<Body> {
        let (mut parts, body) = req.into_parts();
        let bytes = match read_request_body(body, self.config.max_body_bytes).await {
            Ok(bytes) => bytes,
            Err(refused) => return refused,
        };
        let target = parts.uri.path_and_query().map_or("/", |p| p.as_str());
        parts.uri = match self.upstream.uri(target) {
            Ok(uri) => uri,
            Err(_) => return problem::response(StatusCode::BAD_REQUEST, "unusable request target"),
        };
        let peer = parts
            .extensions
            .get::<axum::extract::ConnectInfo<SocketAddr>>()
            .map(|c| c.0);
        prepare_request_headers(&mut parts.headers, peer);
        parts.version = http::Version::HTTP_11;
        let sent = self
            .client
            .request(Request::from_parts(parts, Full::new(bytes)));
        match tokio::time::timeout(self.config.timeout, sent).await {
            Ok(Ok(response)) => {
                let (mut parts, body) = response.into_parts();
                strip_hop_by_hop(&mut parts.headers);
                Response::from_parts(parts, Body::new(body))
            }
            Ok(Err(e)) => {
                tracing::warn!(error = %e, connect = e.is_connect(), "upstream request failed");
                let detail = if e.is_connect() {
                    "upstream unreachable"
                } else {
                    "upstream closed the connection without a complete response"
                };
                problem::response(StatusCode::BAD_GATEWAY, detail)
            }
            Err(_) => {
                tracing::warn!(timeout = ?self.config.timeout, "upstream did not answer in time");
                problem::response(
                    StatusCode::GATEWAY_TIMEOUT,
                    "upstream did not answer in time",
                )
            }
        }
    }
}

impl tower::Service<Request<Body>> for Forward {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response<Body>, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<Body>) -> Self::Future {
        let this = self.clone();
        Box::pin(async move { Ok(this.forward(req).await) })
    }
}

/// The hop-by-hop headers every message loses at a proxy (plus those `Connection` lists).
const HOP_BY_HOP: [&str; 8] = [
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "upgrade",
];

/// Removes the hop-by-hop headers of `headers` (`Transfer-Encoding` too: hyper frames the body
/// itself on each side).
pub(crate) fn strip_hop_by_hop(headers: &mut HeaderMap) {
    let listed: Vec<HeaderName> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|name| HeaderName::try_from(name.trim()).ok())
        .collect();
    for name in listed {
        headers.remove(name);
    }
    for name in HOP_BY_HOP {
        headers.remove(name);
    }
    headers.remove(header::TRANSFER_ENCODING);
}

/// Hop-by-hop headers out; `Host` becomes the upstream's (hyper sets it from the URI) and the
/// client's goes to `X-Forwarded-Host`; the peer is appended to `X-Forwarded-For`.
fn prepare_request_headers(headers: &mut HeaderMap, peer: Option<SocketAddr>) {
    strip_hop_by_hop(headers);
    if let Some(host) = headers.remove(header::HOST) {
        headers.insert("x-forwarded-host", host);
    }
    headers.insert("x-forwarded-proto", HeaderValue::from_static("http"));
    if let Some(peer) = peer {
        let ip = peer.ip().to_string();
        let value = match headers.get("x-forwarded-for").and_then(|v| v.to_str().ok()) {
            Some(prior) => format!("{prior}, {ip}"),
            None => ip,
        };
        if let Ok(v) = HeaderValue::from_str(&value) {
            headers.insert("x-forwarded-for", v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_urls_are_checked() {
        let u = Upstream::parse("http://127.0.0.1:8080/api/").expect("valid");
        assert_eq!(
            u.uri("/orders?x=1").expect("uri").to_string(),
            "http://127.0.0.1:8080/api/orders?x=1"
        );
        for bad in ["https://h", "127.0.0.1:80", "http://h/?q=1", "not a url"] {
            let err = Upstream::parse(bad).expect_err(bad);
            assert!(err.starts_with("--upstream"), "{err}");
        }
    }

    #[test]
    fn connection_listed_headers_are_hop_by_hop() {
        let mut h = HeaderMap::new();
        h.insert(
            header::CONNECTION,
            HeaderValue::from_static("x-secret, close"),
        );
        h.insert("x-secret", HeaderValue::from_static("1"));
        h.insert("keep-alive", HeaderValue::from_static("timeout=5"));
        h.insert("x-kept", HeaderValue::from_static("1"));
        prepare_request_headers(&mut h, Some("10.0.0.7:5000".parse().expect("addr")));
        assert!(h.get("x-secret").is_none() && h.get("keep-alive").is_none());
        assert!(h.get(header::CONNECTION).is_none());
        assert_eq!(h["x-kept"], "1");
        assert_eq!(h["x-forwarded-for"], "10.0.0.7");
    }
}
