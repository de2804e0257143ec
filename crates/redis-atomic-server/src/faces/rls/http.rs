//! The HTTP side of `rls`: `POST /json` (the request as proto3 JSON, the answer as proto3 JSON:
//! 200 OK, 429 over the limit, 400 malformed, 503 unavailable — for curl and scripts), and the
//! faces' `/metrics` and `/healthz`.
//!
//! ```text
//! curl -s localhost:8081/json -d '{"domain":"rl","descriptors":[{"entries":[{"key":"user","value":"alice"}]}]}'
//! ```
//!
//! Field names in lowerCamelCase or as in the `.proto` (proto3 JSON accepts both); enums by name
//! or number; 64-bit integers as numbers or strings.

use super::pb::ratelimit::{
    Code, DescriptorStatus, Entry, RateLimitDescriptor, RateLimitOverride, RateLimitRequest,
    RateLimitResponse,
};
use super::service::{Rls, RlsError};
use crate::faces::rls::config::Unit;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Json;
use http::StatusCode;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{json, Value};

/// The HTTP routes over `rls`.
pub fn router(rls: Rls) -> axum::Router {
    axum::Router::new()
        .route("/json", post(decide))
        .route("/metrics", get(crate::metrics::metrics))
        .route("/healthz", get(crate::health::healthz))
        .with_state(rls)
}

async fn decide(State(rls): State<Rls>, body: axum::body::Bytes) -> Response {
    let req = match serde_json::from_slice::<JsonRequest>(&body) {
        Ok(r) => r.into_proto(),
        Err(e) => return error(StatusCode::BAD_REQUEST, &e.to_string()),
    };
    let req = match req {
        Ok(r) => r,
        Err(e) => return error(StatusCode::BAD_REQUEST, &e),
    };
    match rls.decide(&req).await {
        Ok(r) => {
            let status = if r.overall_code == Code::OverLimit as i32 {
                StatusCode::TOO_MANY_REQUESTS
            } else {
                StatusCode::OK
            };
            (status, Json(response_json(&r))).into_response()
        }
        Err(e @ RlsError::BadRequest(_)) => error(StatusCode::BAD_REQUEST, &e.to_string()),
        Err(e @ RlsError::Unavailable(_)) => error(StatusCode::SERVICE_UNAVAILABLE, &e.to_string()),
    }
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({ "error": message }))).into_response()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonRequest {
    domain: String,
    #[serde(default)]
    descriptors: Vec<JsonDescriptor>,
    #[serde(default, alias = "hits_addend", rename = "hitsAddend")]
    hits_addend: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonDescriptor {
    #[serde(default)]
    entries: Vec<JsonEntry>,
    #[serde(default)]
    limit: Option<JsonOverride>,
    #[serde(
        default,
        alias = "hits_addend",
        rename = "hitsAddend",
        deserialize_with = "u64_any"
    )]
    hits_addend: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonEntry {
    key: String,
    #[serde(default)]
    value: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonOverride {
    #[serde(default, alias = "requests_per_unit", rename = "requestsPerUnit")]
    requests_per_unit: u32,
    #[serde(default)]
    unit: Value,
}

/// A 64-bit integer as proto3 JSON writes it: a number or a decimal string.
fn u64_any<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_u64()
            .map(Some)
            .ok_or_else(|| serde::de::Error::custom("hitsAddend: not an unsigned integer")),
        Some(Value::String(s)) => s
            .parse()
            .map(Some)
            .map_err(|_| serde::de::Error::custom("hitsAddend: not an unsigned integer")),
        Some(_) => Err(serde::de::Error::custom(
            "hitsAddend: not an unsigned integer",
        )),
    }
}

impl JsonRequest {
    fn into_proto(self) -> Result<RateLimitRequest, String> {
        let descriptors = self
            .descriptors
            .into_iter()
            .map(|d| {
                let limit = d.limit.map(|o| o.into_proto()).transpose()?;
                Ok(RateLimitDescriptor {
                    entries: d
                        .entries
                        .into_iter()
                        .map(|e| Entry {
                            key: e.key,
                            value: e.value,
                        })
                        .collect(),
                    limit,
                    hits_addend: d.hits_addend,
                })
            })
            .collect::<Result<_, String>>()?;
        Ok(RateLimitRequest {
            domain: self.domain,
            descriptors,
            hits_addend: self.hits_addend,
        })
    }
}

impl JsonOverride {
    fn into_proto(self) -> Result<RateLimitOverride, String> {
        let unit = match &self.unit {
            Value::Number(n) => n.as_i64().and_then(|n| i32::try_from(n).ok()),
            Value::String(s) => Unit::parse(s).map(Unit::proto),
            _ => None,
        }
        .ok_or_else(|| format!("limit.unit: unknown unit {}", self.unit))?;
        Ok(RateLimitOverride {
            requests_per_unit: self.requests_per_unit,
            unit,
        })
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonStatus {
    code: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    current_limit: Option<Value>,
    limit_remaining: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    duration_until_reset: Option<String>,
}

fn code_name(code: i32) -> &'static str {
    match Code::try_from(code) {
        Ok(Code::Ok) => "OK",
        Ok(Code::OverLimit) => "OVER_LIMIT",
        _ => "UNKNOWN",
    }
}

fn status_json(s: &DescriptorStatus) -> JsonStatus {
    let unit_name = |n: i32| Unit::of_proto(n).map(|u| u.name().to_ascii_uppercase());
    JsonStatus {
        code: code_name(s.code),
        current_limit: s.current_limit.as_ref().map(|l| {
            json!({ "name": l.name, "requestsPerUnit": l.requests_per_unit, "unit": unit_name(l.unit) })
        }),
        limit_remaining: s.limit_remaining,
        duration_until_reset: s.duration_until_reset.as_ref().map(|d| format!("{}s", d.seconds)),
    }
}

/// The answer as proto3 JSON.
pub fn response_json(r: &RateLimitResponse) -> Value {
    let headers: Vec<Value> = r
        .response_headers_to_add
        .iter()
        .map(|h| json!({ "key": h.key, "value": h.value }))
        .collect();
    let statuses: Vec<JsonStatus> = r.statuses.iter().map(status_json).collect();
    json!({
        "overallCode": code_name(r.overall_code),
        "statuses": statuses,
        "responseHeadersToAdd": headers,
    })
}
