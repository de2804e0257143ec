//! `ShouldRateLimit`: the rules in force, the plan, the calls under a deadline, the answer.
//!
//! **Deadline.** Every request's Redis work runs under one deadline (default 10 ms, well under
//! Envoy's 20 ms RPC timeout): past it, or on any Redis error, the answer is gRPC `UNAVAILABLE`
//! at once, so Envoy's `failure_mode_deny` decides (allow by default) and no call hangs on a
//! stalled Redis. A call cut off by the deadline may or may not have been charged (the library's
//! `OutcomeUnknown`); it is not resent.
//!
//! **Logs** carry the domain, the descriptor count, the code and the time, never descriptor
//! values (user ids, API keys, paths) unless `log_values` is set.

use super::answer;
use super::config::Rules;
use super::pb::ratelimit::{Code, RateLimitRequest, RateLimitResponse, RateLimitService};
use super::plan::{self, BadRequest};
use redis_atomic::ratelimit::EntryLimiter;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

/// Default per-request deadline.
pub const DEFAULT_DEADLINE: Duration = Duration::from_millis(10);

/// Why a request got no decision.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RlsError {
    /// The request is malformed (gRPC `INVALID_ARGUMENT`, HTTP 400).
    #[error(transparent)]
    BadRequest(#[from] BadRequest),
    /// Redis failed or the deadline passed (gRPC `UNAVAILABLE`, HTTP 503).
    #[error("unavailable: {0}")]
    Unavailable(String),
}

/// The rules in force, swapped whole on reload (requests in flight keep the snapshot they took).
pub type SharedRules = Arc<RwLock<Arc<Rules>>>;

/// The decision service behind the gRPC method and `/json`.
#[derive(Clone)]
pub struct Rls {
    limiter: EntryLimiter,
    rules: SharedRules,
    cluster: bool,
    deadline: Duration,
    log_values: bool,
    each_alone: bool,
}

impl Rls {
    /// A service deciding with `limiter` under `rules`.
    pub fn new(
        limiter: EntryLimiter,
        rules: SharedRules,
        cluster: bool,
        deadline: Duration,
    ) -> Rls {
        Rls {
            limiter,
            rules,
            cluster,
            deadline,
            log_values: false,
            each_alone: false,
        }
    }

    /// Decides each descriptor alone, charging it whatever the others say, as
    /// envoyproxy/ratelimit does: only for `verify --sabotage`, which must catch it.
    pub fn decide_each_alone(mut self, on: bool) -> Rls {
        self.each_alone = on;
        self
    }

    /// Logs descriptor values too (off by default).
    pub fn log_values(mut self, on: bool) -> Rls {
        self.log_values = on;
        self
    }

    /// The rules in force now.
    pub fn rules(&self) -> Arc<Rules> {
        self.rules
            .read()
            .map(|r| r.clone())
            .unwrap_or_else(|p| p.into_inner().clone())
    }

    /// Decides `req`.
    pub async fn decide(&self, req: &RateLimitRequest) -> Result<RateLimitResponse, RlsError> {
        let started = Instant::now();
        let rules = self.rules();
        let domain = rules.domain(&req.domain);
        let label = if domain.is_some() {
            req.domain.clone()
        } else {
            "unknown".into()
        };
        let result = self.decide_in(req, &rules).await;
        let code = match &result {
            Ok(r) if r.overall_code == Code::OverLimit as i32 => "over_limit",
            Ok(_) => "ok",
            Err(RlsError::BadRequest(_)) => "invalid",
            Err(RlsError::Unavailable(_)) => "unavailable",
        };
        let took = started.elapsed();
        metrics::counter!("redis_atomic_rls_requests_total", "domain" => label.clone(), "code" => code)
            .increment(1);
        metrics::histogram!("redis_atomic_rls_request_seconds", "domain" => label.clone())
            .record(took.as_secs_f64());
        let us = took.as_micros() as u64;
        let n = req.descriptors.len();
        if self.log_values {
            tracing::debug!(domain = %label, descriptors = ?req.descriptors, code, us, "should_rate_limit");
        } else {
            tracing::debug!(domain = %label, descriptors = n, code, us, "should_rate_limit");
        }
        if let Err(RlsError::Unavailable(why)) = &result {
            tracing::warn!(domain = %label, %why, "answered UNAVAILABLE");
        }
        result
    }

    async fn decide_in(
        &self,
        req: &RateLimitRequest,
        rules: &Rules,
    ) -> Result<RateLimitResponse, RlsError> {
        let domain = rules.domain(&req.domain);
        let plan = plan::plan(req, domain, self.cluster || self.each_alone)?;
        let run = answer::run(&self.limiter, &plan.calls, !self.each_alone);
        let verdicts = match tokio::time::timeout(self.deadline, run).await {
            Ok(Ok(v)) => v,
            Ok(Err(e)) => return Err(RlsError::Unavailable(e.to_string())),
            Err(_) => {
                let ms = self.deadline.as_millis();
                return Err(RlsError::Unavailable(format!("no decision within {ms} ms")));
            }
        };
        Ok(answer::respond(domain, &plan, &verdicts))
    }
}

#[tonic::async_trait]
impl RateLimitService for Rls {
    async fn should_rate_limit(
        &self,
        request: tonic::Request<RateLimitRequest>,
    ) -> Result<tonic::Response<RateLimitResponse>, tonic::Status> {
        match self.decide(request.get_ref()).await {
            Ok(r) => Ok(tonic::Response::new(r)),
            Err(RlsError::BadRequest(e)) => Err(tonic::Status::invalid_argument(e.0)),
            Err(RlsError::Unavailable(e)) => Err(tonic::Status::unavailable(e)),
        }
    }
}
