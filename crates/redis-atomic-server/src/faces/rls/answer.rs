//! Runs a [`Plan`]'s calls and turns the verdicts into Envoy's `RateLimitResponse`: one status
//! per descriptor (`code`, `current_limit`, `limit_remaining`, `duration_until_reset`), the
//! overall code, the rate-limit headers the domain asks for, and the metrics.
//!
//! **Metrics** (Prometheus, per domain and descriptor — the rule's config path, or the request's
//! values when the rule has `detailed_metric`): `redis_atomic_rls_hits_total{domain,descriptor,
//! result}` with `result` = `total`, `over_limit`, `near_limit` (admitted past 80 % of the
//! limit), `within_limit`, `shadow_mode` (over the limit, answered OK), counted in hits as the
//! reference server counts them.

use super::config::{Domain, Rule};
use super::headers;
use super::pb::ratelimit::{Code, DescriptorStatus, RateLimit, RateLimitResponse};
use super::plan::{Call, Plan, Slot};
use redis_atomic::ratelimit::{EntriesVerdict, EntryLimiter, EntryStatus};
use redis_atomic::Error;
use std::time::Duration;

/// Runs the calls in order. Once one refuses, the later ones are only checked (hits 0): what a
/// request spanning slots gives up is the charge of the calls before the refusing one. (With
/// `check_after_refusal` false every call charges: the sabotage `verify` must catch.)
pub async fn run(
    limiter: &EntryLimiter,
    calls: &[Call],
    check_after_refusal: bool,
) -> Result<Vec<EntriesVerdict>, Error> {
    let mut out = Vec::with_capacity(calls.len());
    let mut refused = false;
    for c in calls {
        let v = if refused {
            let check: Vec<_> = c
                .entries
                .iter()
                .map(|e| {
                    redis_atomic::ratelimit::Entry::new(e.limit().clone(), e.identity(), 0)
                        .with_mode(e.mode())
                })
                .collect();
            limiter.decide(&c.tag, &check).await?
        } else {
            limiter.decide(&c.tag, &c.entries).await?
        };
        refused |= check_after_refusal && !v.decision.is_allowed();
        out.push(v);
    }
    Ok(out)
}

/// The answer to a planned request from its calls' verdicts.
pub fn respond(
    domain: Option<&Domain>,
    plan: &Plan,
    verdicts: &[EntriesVerdict],
) -> RateLimitResponse {
    let domain_name = domain.map(|d| d.name.as_str()).unwrap_or_default();
    let mut over = verdicts.iter().any(|v| !v.decision.is_allowed());
    let mut statuses = Vec::with_capacity(plan.slots.len());
    let mut limited: Vec<(&Rule, DescriptorStatus)> = Vec::new();
    for slot in &plan.slots {
        let status = match slot {
            Slot::None | Slot::Replaced => ok_status(None, 0, None),
            Slot::Unlimited(_) => ok_status(None, u32::MAX, None),
            Slot::Blocked(m) => {
                count(domain_name, &m.metric, 1, false, m.rule.shadow);
                if !m.rule.shadow {
                    over = true;
                }
                let code = if m.rule.shadow {
                    Code::Ok
                } else {
                    Code::OverLimit
                };
                let reset = m.rule.unit.map(|u| until_window_end(u.period()));
                let s = status(code, &m.rule, 0, reset);
                limited.push((&m.rule, s.clone()));
                s
            }
            Slot::Decided {
                matched: m,
                call,
                entry,
                hits,
            } => {
                let e: &EntryStatus = &verdicts[*call].entries[*entry];
                let admitted = verdicts[*call].decision.is_allowed();
                let rpu = m.rule.requests_per_unit;
                let remaining = u32::try_from(e.remaining).unwrap_or(u32::MAX);
                count(
                    domain_name,
                    &m.metric,
                    *hits,
                    admitted && e.admits,
                    m.rule.shadow,
                );
                if admitted && e.admits {
                    near(domain_name, &m.metric, rpu, remaining, *hits);
                }
                let code = if e.admits || m.rule.shadow {
                    Code::Ok
                } else {
                    Code::OverLimit
                };
                let s = status(code, &m.rule, remaining, Some(e.reset_after));
                limited.push((&m.rule, s.clone()));
                s
            }
        };
        statuses.push(status);
    }
    let mode = domain.map(|d| d.headers).unwrap_or_default();
    RateLimitResponse {
        overall_code: if over { Code::OverLimit } else { Code::Ok } as i32,
        statuses,
        response_headers_to_add: headers::of(mode, &limited),
        request_headers_to_add: Vec::new(),
    }
}

fn ok_status(
    limit: Option<RateLimit>,
    remaining: u32,
    reset: Option<Duration>,
) -> DescriptorStatus {
    DescriptorStatus {
        code: Code::Ok as i32,
        current_limit: limit,
        limit_remaining: remaining,
        duration_until_reset: reset.map(proto_duration),
    }
}

fn status(code: Code, rule: &Rule, remaining: u32, reset: Option<Duration>) -> DescriptorStatus {
    DescriptorStatus {
        code: code as i32,
        current_limit: Some(RateLimit {
            name: rule.name.clone().unwrap_or_default(),
            requests_per_unit: rule.requests_per_unit,
            unit: rule.unit.map(|u| u.proto()).unwrap_or_default(),
        }),
        limit_remaining: remaining,
        duration_until_reset: reset.map(proto_duration),
    }
}

/// A protobuf duration, rounded up to whole seconds as the reference reports it (never 0 for a
/// window still running).
pub fn proto_duration(d: Duration) -> prost_types::Duration {
    let secs = d.as_micros().div_ceil(1_000_000);
    prost_types::Duration {
        seconds: i64::try_from(secs).unwrap_or(i64::MAX),
        nanos: 0,
    }
}

/// Until the end of the epoch-aligned window of `period` that contains now (local clock: only
/// for limits answered without Redis).
fn until_window_end(period: Duration) -> Duration {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let p = period.as_secs().max(1);
    Duration::from_secs(p - now.as_secs() % p)
}

/// The hit counters of one descriptor.
fn count(domain: &str, descriptor: &str, hits: u64, admitted: bool, shadow: bool) {
    let c = |result: &'static str| {
        metrics::counter!("redis_atomic_rls_hits_total",
            "domain" => domain.to_string(), "descriptor" => descriptor.to_string(), "result" => result)
    };
    c("total").increment(hits);
    if admitted {
        c("within_limit").increment(hits);
    } else if shadow {
        c("shadow_mode").increment(hits);
    } else {
        c("over_limit").increment(hits);
    }
}

/// Counts `near_limit` for an admitted descriptor whose remaining fell under 20 % of its limit.
fn near(domain: &str, descriptor: &str, limit: u32, remaining: u32, hits: u64) {
    if u64::from(limit).saturating_sub(u64::from(remaining)) * 5 > u64::from(limit) * 4 {
        metrics::counter!("redis_atomic_rls_hits_total",
            "domain" => domain.to_string(), "descriptor" => descriptor.to_string(), "result" => "near_limit")
        .increment(hits);
    }
}
