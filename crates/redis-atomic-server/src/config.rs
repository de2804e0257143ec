//! The one TOML file `redis-atomic serve` and `redis-atomic proxy` read (`--config FILE`).
//!
//! One file, one parser, for both faces: a platform team writes its rate-limit policies once and
//! names them from `serve`'s `/v1/limits/{policy}/consume` and from `proxy`'s routes alike.
//! Unknown fields are refused (a typo in a limit must not silently mean "no limit"), and every
//! policy is turned into the library's validated [`Policy`] at load time, so a config that loads
//! is one the scripts accept.
//!
//! ```toml
//! [auth]                      # bearer token → namespace (tenant); required off loopback
//! tokens = { "s3cr3t-a" = "tenant-a", "s3cr3t-b" = "tenant-b" }
//!
//! [limits.api]                # a policy; several limits are all-or-nothing
//! limits = [ { algorithm = "gcra", limit = 10, period_ms = 1000 },
//!            { algorithm = "fixed-window", limit = 1000, period_ms = 86400000 } ]
//!
//! [[proxy.routes]]            # longest matching path prefix wins
//! path = "/payments"
//! require_key = true
//! limits = ["api"]
//! ```

use redis_atomic::ratelimit::{Algorithm, Limit, Policy};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// Largest config file read, in bytes.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// Why a config file was refused: one line naming the file and the problem.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read (or is too large).
    #[error("{path}: {reason}")]
    Read {
        /// The file.
        path: String,
        /// What went wrong.
        reason: String,
    },
    /// The TOML does not parse or has an unknown field.
    #[error("{path}: {reason}")]
    Parse {
        /// The file.
        path: String,
        /// The parser's message, on one line.
        reason: String,
    },
    /// A value is out of range (a limit the library refuses, an unknown policy name…).
    #[error("{path}: {what}: {reason}")]
    Invalid {
        /// The file.
        path: String,
        /// Where in the file (e.g. `limits.api`).
        what: String,
        /// Why.
        reason: String,
    },
}

/// The whole file. Every section is optional.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Config {
    /// Bearer tokens and the namespace each maps to.
    #[serde(default)]
    pub auth: AuthConfig,
    /// Rate-limit policies by name.
    #[serde(default)]
    pub limits: BTreeMap<String, PolicyConfig>,
    /// Settings of `serve`.
    #[serde(default)]
    pub serve: ServeConfig,
    /// Settings of `proxy`.
    #[serde(default)]
    pub proxy: ProxyConfig,
}

/// `[auth]`: bearer token → namespace. Each token's keys live under its own namespace, so one
/// tenant can neither see nor take another's locks, jobs or limits.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct AuthConfig {
    /// Token → namespace.
    #[serde(default)]
    pub tokens: BTreeMap<String, String>,
}

/// `[limits.NAME]`: one policy.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct PolicyConfig {
    /// The limits, all-or-nothing.
    pub limits: Vec<LimitConfig>,
}

/// One limit of a policy.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct LimitConfig {
    /// `fixed-window`, `anchored-window`, `sliding-log`, `sliding-window`, `token-bucket` or
    /// `gcra`.
    pub algorithm: String,
    /// Units per period.
    pub limit: u64,
    /// The period, in milliseconds.
    pub period_ms: u64,
    /// Burst (token bucket and GCRA only).
    #[serde(default)]
    pub burst: Option<u64>,
    /// Name shown in the `RateLimit` headers (defaults to the algorithm's).
    #[serde(default)]
    pub name: Option<String>,
}

/// `[serve]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ServeConfig {
    /// Key namespace when no token maps to one (default `serve`).
    #[serde(default)]
    pub namespace: Option<String>,
    /// Largest request body, in bytes (default 64 KiB).
    #[serde(default)]
    pub max_body_bytes: Option<usize>,
}

/// `[proxy]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ProxyConfig {
    /// Key namespace when no token maps to one (default `proxy`).
    #[serde(default)]
    pub namespace: Option<String>,
    /// How long a stored response is replayed, in milliseconds (default 24 h).
    #[serde(default)]
    pub key_ttl_ms: Option<u64>,
    /// Largest request or stored response body, in bytes (default 1 MiB).
    #[serde(default)]
    pub max_body_bytes: Option<usize>,
    /// Longest wait for the upstream's response head, in milliseconds (default 30 s); past it the
    /// client gets 504 and the key is freed.
    #[serde(default)]
    pub upstream_timeout_ms: Option<u64>,
    /// Per-path settings; a path no route matches is forwarded with the defaults (key optional,
    /// no limits).
    #[serde(default)]
    pub routes: Vec<RouteConfig>,
}

/// `[[proxy.routes]]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct RouteConfig {
    /// Path prefix (`/payments` matches `/payments` and `/payments/…`).
    pub path: String,
    /// Whether `POST`/`PATCH` without an `Idempotency-Key` is refused with 400.
    #[serde(default)]
    pub require_key: bool,
    /// Names of `[limits.NAME]` policies applied to every request on the route.
    #[serde(default)]
    pub limits: Vec<String>,
}

impl Config {
    /// Reads and validates `path`.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let shown = path.display().to_string();
        let read = |reason: String| ConfigError::Read {
            path: shown.clone(),
            reason,
        };
        let meta = std::fs::metadata(path).map_err(|e| read(e.to_string()))?;
        if !meta.is_file() {
            return Err(read("not a regular file".into()));
        }
        if meta.len() > MAX_CONFIG_BYTES {
            return Err(read(format!("larger than {MAX_CONFIG_BYTES} bytes")));
        }
        let text = std::fs::read_to_string(path).map_err(|e| read(e.to_string()))?;
        Config::parse(&text, &shown)
    }

    /// Parses and validates TOML text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Config, ConfigError> {
        let config: Config = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: origin.to_string(),
            reason: one_line(&e.to_string()),
        })?;
        config.validate(origin)?;
        Ok(config)
    }

    /// The library policy named `name`, if the file defines it.
    pub fn policy(&self, name: &str) -> Option<Policy> {
        // Validated at load: a defined policy always converts.
        self.limits.get(name).and_then(|p| p.to_policy().ok())
    }

    fn validate(&self, origin: &str) -> Result<(), ConfigError> {
        let invalid = |what: String, reason: String| ConfigError::Invalid {
            path: origin.to_string(),
            what,
            reason,
        };
        for (name, policy) in &self.limits {
            policy
                .to_policy()
                .map_err(|reason| invalid(format!("limits.{name}"), reason))?;
        }
        for (token, namespace) in &self.auth.tokens {
            if token.len() < 8 {
                // The token itself is never printed.
                return Err(invalid(
                    "auth.tokens".into(),
                    "a token is shorter than 8 bytes".into(),
                ));
            }
            redis_atomic::Keyspace::new(namespace.clone())
                .map_err(|e| invalid("auth.tokens".into(), e.to_string()))?;
        }
        self.validate_proxy_numbers(origin)?;
        for (i, route) in self.proxy.routes.iter().enumerate() {
            if !route.path.starts_with('/') {
                return Err(invalid(
                    format!("proxy.routes[{i}].path"),
                    "must start with /".into(),
                ));
            }
            if let Some(missing) = route.limits.iter().find(|n| !self.limits.contains_key(*n)) {
                return Err(invalid(
                    format!("proxy.routes[{i}].limits"),
                    format!("no policy [limits.{missing}]"),
                ));
            }
        }
        Ok(())
    }
}

impl Config {
    fn validate_proxy_numbers(&self, origin: &str) -> Result<(), ConfigError> {
        let p = &self.proxy;
        let bad = |what: &str, reason: &str| {
            Err(ConfigError::Invalid {
                path: origin.to_string(),
                what: format!("proxy.{what}"),
                reason: reason.to_string(),
            })
        };
        const DAY_MS: u64 = 24 * 3600 * 1000;
        if p.key_ttl_ms.is_some_and(|ms| ms == 0 || ms > 30 * DAY_MS) {
            return bad("key_ttl_ms", "must be 1..=2592000000 (30 days)");
        }
        if p.upstream_timeout_ms
            .is_some_and(|ms| ms == 0 || ms > DAY_MS)
        {
            return bad("upstream_timeout_ms", "must be 1..=86400000 (1 day)");
        }
        if p.max_body_bytes.is_some_and(|b| b == 0 || b > 64 << 20) {
            return bad("max_body_bytes", "must be 1..=67108864 (64 MiB)");
        }
        if let Some(ns) = &p.namespace {
            if let Err(e) = redis_atomic::Keyspace::new(ns.clone()) {
                return bad("namespace", &e.to_string());
            }
        }
        Ok(())
    }
}

impl PolicyConfig {
    /// The library's validated policy, or why not.
    pub fn to_policy(&self) -> Result<Policy, String> {
        let limits = self
            .limits
            .iter()
            .map(LimitConfig::to_limit)
            .collect::<Result<Vec<_>, _>>()?;
        Policy::new(limits).map_err(|e| e.to_string())
    }
}

impl LimitConfig {
    /// The library's validated limit, or why not.
    pub fn to_limit(&self) -> Result<Limit, String> {
        let algorithm: Algorithm = self
            .algorithm
            .parse()
            .map_err(|e: redis_atomic::Error| e.to_string())?;
        let mut limit = Limit::new(algorithm, self.limit, Duration::from_millis(self.period_ms))
            .map_err(|e| e.to_string())?;
        if let Some(burst) = self.burst {
            limit = limit.with_burst(burst).map_err(|e| e.to_string())?;
        }
        if let Some(name) = &self.name {
            limit = limit.named(name).map_err(|e| e.to_string())?;
        }
        Ok(limit)
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"
        [auth]
        tokens = { "token-aaaa" = "tenant-a" }
        [limits.api]
        limits = [ { algorithm = "gcra", limit = 10, period_ms = 1000 },
                   { algorithm = "fixed-window", limit = 1000, period_ms = 86400000 } ]
        [[proxy.routes]]
        path = "/payments"
        require_key = true
        limits = ["api"]
    "#;

    #[test]
    fn the_documented_sample_loads() {
        let config = Config::parse(SAMPLE, "sample").expect("loads");
        let policy = config.policy("api").expect("defined");
        assert_eq!(policy.limits().len(), 2);
        assert_eq!(policy.limits()[0].algorithm(), Algorithm::Gcra);
        assert_eq!(config.proxy.routes[0].limits, vec!["api".to_string()]);
        assert_eq!(config.auth.tokens["token-aaaa"], "tenant-a");
    }

    #[test]
    fn mistakes_are_named_on_one_line() {
        let cases = [
            (
                "[limits.api]\nlimits = [{ algorithm = \"leaky\", limit = 1, period_ms = 1 }]",
                "limits.api",
            ),
            (
                "[limits.api]\nlimits = [{ algorithm = \"gcra\", limit = 0, period_ms = 1000 }]",
                "limits.api",
            ),
            (
                "[limits.api]\nlimits = [{ algorithm = \"gcra\", limt = 1, period_ms = 1 }]",
                "limt",
            ),
            (
                "[[proxy.routes]]\npath = \"/x\"\nlimits = [\"nope\"]",
                "no policy [limits.nope]",
            ),
            ("[[proxy.routes]]\npath = \"x\"", "must start with /"),
            ("[auth]\ntokens = { \"short\" = \"t\" }", "shorter than 8"),
            ("[sever]\nnamespace = \"x\"", "sever"),
            ("[proxy]\nkey_ttl_ms = 0", "proxy.key_ttl_ms"),
            ("[proxy]\nmax_body_bytes = 0", "proxy.max_body_bytes"),
            (
                "[proxy]\nupstream_timeout_ms = 0",
                "proxy.upstream_timeout_ms",
            ),
        ];
        for (text, expected) in cases {
            let err = Config::parse(text, "f.toml").expect_err(text).to_string();
            assert!(err.contains(expected), "{text:?} → {err}");
            assert!(!err.contains('\n'), "one line: {err}");
            assert!(err.starts_with("f.toml: "), "{err}");
        }
    }
}
