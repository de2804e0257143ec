//! Bearer-token auth for the faces that authenticate (`serve`): each token maps to a namespace
//! (a tenant) from `[auth] tokens`, and a face that authenticates refuses to listen off loopback
//! without tokens ([`check_listen`]), so a misconfigured server is never open to the network.
//!
//! With no tokens configured every request gets the default namespace (allowed on loopback
//! only). A missing or unknown token is `401` with `WWW-Authenticate: Bearer`; the token is
//! never logged.

use axum::response::{IntoResponse, Response};
use http::{header, HeaderMap, HeaderValue, StatusCode};
use redis_atomic_http::problem;
use std::collections::HashMap;
use std::net::SocketAddr;

/// Bearer token → namespace. Tokens are kept and looked up as SHA-256 digests: the lookup's
/// timing depends on the digest of what was presented, not on how much of a real token it
/// shares, and the process holds no token in clear after start.
#[derive(Clone, Debug)]
pub struct Auth {
    tokens: HashMap<[u8; 32], String>,
    default_namespace: String,
}

/// Why a request was not authenticated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthError {
    /// No `Authorization: Bearer` header.
    Missing,
    /// A token the config does not know.
    Unknown,
}

impl Auth {
    /// From `[auth] tokens`; `default_namespace` serves every request when there are no tokens.
    pub fn new(config: &crate::config::AuthConfig, default_namespace: &str) -> Self {
        Auth {
            tokens: config
                .tokens
                .iter()
                .map(|(token, ns)| (digest(token), ns.clone()))
                .collect(),
            default_namespace: default_namespace.to_string(),
        }
    }

    /// Whether requests must carry a token.
    pub fn required(&self) -> bool {
        !self.tokens.is_empty()
    }

    /// Every namespace a request can get (the default one when auth is off).
    pub fn namespaces(&self) -> Vec<String> {
        if self.required() {
            let mut all: Vec<String> = self.tokens.values().cloned().collect();
            all.sort();
            all.dedup();
            all
        } else {
            vec![self.default_namespace.clone()]
        }
    }

    /// The namespace of the request with these headers.
    pub fn namespace(&self, headers: &HeaderMap) -> Result<&str, AuthError> {
        if !self.required() {
            return Ok(&self.default_namespace);
        }
        let token = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .ok_or(AuthError::Missing)?;
        self.tokens
            .get(&digest(token.trim()))
            .map(String::as_str)
            .ok_or(AuthError::Unknown)
    }
}

fn digest(token: &str) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(token.as_bytes()).into()
}

impl IntoResponse for AuthError {
    fn into_response(self) -> Response {
        let detail = match self {
            AuthError::Missing => "an Authorization: Bearer <token> header is required",
            AuthError::Unknown => "unknown bearer token",
        };
        let mut r = problem::typed(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            detail,
            Default::default(),
        );
        r.headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        r
    }
}

/// Refuses to listen on a non-loopback address without auth: one line saying why.
pub fn check_listen(addr: SocketAddr, auth: &Auth) -> Result<(), String> {
    if addr.ip().is_loopback() || auth.required() {
        Ok(())
    } else {
        Err(format!(
            "refusing to listen on {addr} without auth: add [auth] tokens to --config, or listen on 127.0.0.1"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::AuthConfig;

    fn auth(tokens: &[(&str, &str)]) -> Auth {
        let mut config = AuthConfig::default();
        for (t, ns) in tokens {
            config.tokens.insert(t.to_string(), ns.to_string());
        }
        Auth::new(&config, "dflt")
    }

    /// Off loopback, no tokens is refused (one line naming the address); loopback or tokens pass.
    #[test]
    fn listen_check() {
        let open = auth(&[]);
        let closed = auth(&[("token-aaaa", "a")]);
        let lan: SocketAddr = "0.0.0.0:7379".parse().expect("address");
        let lo: SocketAddr = "127.0.0.1:0".parse().expect("address");
        let v6: SocketAddr = "[::1]:80".parse().expect("address");
        let err = check_listen(lan, &open).expect_err("refused");
        assert!(err.contains("0.0.0.0:7379") && !err.contains('\n'), "{err}");
        assert!(check_listen(lo, &open).is_ok() && check_listen(v6, &open).is_ok());
        assert!(check_listen(lan, &closed).is_ok());
    }

    /// Tokens map to their namespaces; missing and unknown tokens are told apart; without
    /// tokens every request gets the default namespace.
    #[test]
    fn tokens_to_namespaces() {
        let a = auth(&[("token-aaaa", "ns-a"), ("token-bbbb", "ns-b")]);
        let mut h = HeaderMap::new();
        assert_eq!(a.namespace(&h), Err(AuthError::Missing));
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer token-bbbb"),
        );
        assert_eq!(a.namespace(&h), Ok("ns-b"));
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer token-cccc"),
        );
        assert_eq!(a.namespace(&h), Err(AuthError::Unknown));
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Basic dG9rZW4="),
        );
        assert_eq!(a.namespace(&h), Err(AuthError::Missing));
        assert_eq!(a.namespaces(), vec!["ns-a".to_string(), "ns-b".to_string()]);
        assert_eq!(auth(&[]).namespace(&HeaderMap::new()), Ok("dflt"));
    }
}
