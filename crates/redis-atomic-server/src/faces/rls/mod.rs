//! `redis-atomic rls`: Envoy's gRPC rate-limit service
//! (`envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit`), configured with
//! envoyproxy/ratelimit's YAML, every request decided in one atomic script call.
//!
//! Where envoyproxy/ratelimit pipelines `INCRBY` + `EXPIRE` per descriptor (a request over one
//! limit still charges every other; a blocked request still counts), this face hands all the
//! descriptors a request matches to the library's [`EntryLimiter`]: one `rl_policy` call that
//! checks every limit before charging any, so a refused request charges nothing anywhere. It is
//! a thin adapter over the library:
//!
//! * [`config`]: the reference's YAML (a file or a directory), compiled into a lookup tree;
//! * [`plan`]: a request's descriptors → matched rules, `replaces`, `unlimited`, hits, and the
//!   calls (one per request with a `hash_tag` or off a cluster);
//! * [`answer`]: the calls run, statuses, overall code, headers ([`headers`]), metrics;
//! * [`service`]: the gRPC method with its deadline (`UNAVAILABLE` past it);
//! * [`http`]: `POST /json`, `/metrics`, `/healthz`;
//! * [`reload`]: SIGHUP and file changes, a bad config never replacing a good one.
//!
//! (`redis-atomic verify`'s `rls` row drives this face; it is the CLI's, beside the verb.)
//!
//! The gRPC service, `grpc.health.v1.Health` and the HTTP routes all answer on `--listen`
//! (HTTP/2 cleartext and HTTP/1.1 on one port); `--http ADDR` serves the HTTP routes on a port of
//! their own too. Started by the faces' one start-up ([`crate::start`]).

pub mod answer;
pub mod config;
pub mod headers;
pub mod http;
pub mod pb;
pub mod plan;
pub mod reload;
pub mod service;

pub use config::{RlsConfigError, Rules};
pub use service::{Rls, RlsError, DEFAULT_DEADLINE};

use crate::config::Config;
use crate::start::{Face, FaceError};
use pb::ratelimit::RateLimitServiceServer;
use redis_atomic::ratelimit::EntryLimiter;
use redis_atomic::{Client, Keyspace};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

/// Default key namespace of `rls`.
pub const DEFAULT_NAMESPACE: &str = "rls";
/// Default interval between config file checks.
pub const DEFAULT_POLL: Duration = Duration::from_secs(1);

/// How `rls` runs, besides Redis and the listen address.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RlsSettings {
    /// The YAML file or directory (None: no rules, every request OK).
    pub config: Option<PathBuf>,
    /// The per-request deadline.
    pub deadline: Duration,
    /// The key namespace.
    pub namespace: String,
    /// A second address serving only the HTTP routes.
    pub http: Option<SocketAddr>,
    /// Descriptor values in the debug logs.
    pub log_values: bool,
    /// How often the config's files are checked for changes.
    pub poll: Duration,
}

impl Default for RlsSettings {
    fn default() -> Self {
        RlsSettings {
            config: None,
            deadline: DEFAULT_DEADLINE,
            namespace: DEFAULT_NAMESPACE.into(),
            http: None,
            log_values: false,
            poll: DEFAULT_POLL,
        }
    }
}

/// The `rls` face: its rules are loaded when it is made (before Redis is reached, so a bad config
/// fails the start-up at once).
pub struct RlsFace {
    settings: RlsSettings,
    rules: service::SharedRules,
    side: Mutex<Option<axum::Router>>,
}

impl RlsFace {
    /// The face with `settings`, its config loaded and checked.
    pub fn new(settings: RlsSettings) -> Result<RlsFace, RlsConfigError> {
        let rules = match &settings.config {
            Some(path) => Rules::load(path)?,
            None => Rules::default(),
        };
        Ok(RlsFace::with_rules(settings, rules))
    }

    /// The face with `settings` and rules already parsed ([`Rules::parse`]); `settings.config`,
    /// if any, is still watched for changes.
    pub fn with_rules(settings: RlsSettings, rules: Rules) -> RlsFace {
        RlsFace {
            settings,
            rules: Arc::new(RwLock::new(Arc::new(rules))),
            side: Mutex::new(None),
        }
    }

    /// The service over `client` (for embedding and tests; [`Face::app`] wraps it).
    pub fn service(&self, client: Client) -> Result<Rls, FaceError> {
        let keyspace = Keyspace::new(self.settings.namespace.clone())?;
        let cluster = client.is_cluster();
        let limiter = EntryLimiter::new(client, keyspace);
        Ok(
            Rls::new(limiter, self.rules.clone(), cluster, self.settings.deadline)
                .log_values(self.settings.log_values),
        )
    }
}

impl Face for RlsFace {
    fn name(&self) -> &'static str {
        "rls"
    }

    fn authenticates(&self) -> bool {
        false
    }

    fn app(&self, client: Client, _config: &Config) -> Result<axum::Router, FaceError> {
        let rls = self.service(client)?;
        crate::metrics::metrics_handle();
        if let Some(path) = &self.settings.config {
            reload::spawn(path.clone(), self.rules.clone(), self.settings.poll);
        }
        let (reporter, health) = tonic_health::server::health_reporter();
        tokio::spawn(async move {
            reporter.set_serving::<RateLimitServiceServer<Rls>>().await;
        });
        let grpc = tonic::service::Routes::new(RateLimitServiceServer::new(rls.clone()))
            .add_service(health)
            .into_axum_router();
        let http = http::router(rls).layer(axum::middleware::from_fn(crate::metrics::track));
        if let Ok(mut side) = self.side.lock() {
            *side = self.settings.http.map(|_| http.clone());
        }
        Ok(grpc.merge(http))
    }

    fn side(&self) -> Option<(SocketAddr, axum::Router)> {
        let router = self.side.lock().ok()?.take()?;
        Some((self.settings.http?, router))
    }
}
