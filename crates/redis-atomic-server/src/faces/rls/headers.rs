//! The rate-limit headers Envoy adds to the client's response (`response_headers_to_add`), as
//! the domain's `response_headers` chooses:
//!
//! * `ietf`: `RateLimit-Policy` (each limit `"name";q=<requests_per_unit>;w=<unit seconds>`) and
//!   `RateLimit` (each limit `"name";r=<remaining>;t=<seconds until reset>`), as
//!   draft-ietf-httpapi-ratelimit-headers describes and `redis-atomic proxy` sends them; a
//!   limit's name is its `name`, else its config path;
//! * `draft-03`: `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` of the
//!   descriptor closest to its limit (an over-limit one first), as the reference server sends
//!   them with `LIMIT_RESPONSE_HEADERS_ENABLED`.

use super::config::{HeaderMode, Rule};
use super::pb::ratelimit::{Code, DescriptorStatus, HeaderValue};

/// The headers of the limited descriptors' statuses.
pub fn of(mode: HeaderMode, limited: &[(&Rule, DescriptorStatus)]) -> Vec<HeaderValue> {
    if limited.is_empty() {
        return Vec::new();
    }
    match mode {
        HeaderMode::Off => Vec::new(),
        HeaderMode::Ietf => ietf(limited),
        HeaderMode::Draft03 => draft03(limited),
    }
}

fn header(key: &str, value: String) -> HeaderValue {
    HeaderValue {
        key: key.to_string(),
        value,
        raw_value: Vec::new(),
    }
}

fn reset_secs(s: &DescriptorStatus) -> i64 {
    s.duration_until_reset.as_ref().map_or(0, |d| d.seconds)
}

/// An sf-string's content: the name without quotes or backslashes.
fn sf_name(rule: &Rule) -> String {
    let name = rule.name.as_deref().unwrap_or(&rule.path);
    name.chars()
        .filter(|c| *c != '"' && *c != '\\' && (' '..='~').contains(c))
        .collect()
}

fn ietf(limited: &[(&Rule, DescriptorStatus)]) -> Vec<HeaderValue> {
    let mut policy = Vec::new();
    let mut state = Vec::new();
    for (rule, s) in limited {
        let name = sf_name(rule);
        let w = rule
            .unit
            .map(|u| format!(";w={}", u.period().as_secs()))
            .unwrap_or_default();
        policy.push(format!("\"{name}\";q={}{w}", rule.requests_per_unit));
        state.push(format!(
            "\"{name}\";r={};t={}",
            s.limit_remaining,
            reset_secs(s)
        ));
    }
    vec![
        header("RateLimit-Policy", policy.join(", ")),
        header("RateLimit", state.join(", ")),
    ]
}

fn draft03(limited: &[(&Rule, DescriptorStatus)]) -> Vec<HeaderValue> {
    let over = |s: &DescriptorStatus| s.code == Code::OverLimit as i32;
    let Some((rule, s)) = limited
        .iter()
        .min_by_key(|(_, s)| (!over(s), s.limit_remaining))
    else {
        return Vec::new();
    };
    vec![
        header("X-RateLimit-Limit", rule.requests_per_unit.to_string()),
        header("X-RateLimit-Remaining", s.limit_remaining.to_string()),
        header("X-RateLimit-Reset", reset_secs(s).to_string()),
    ]
}
