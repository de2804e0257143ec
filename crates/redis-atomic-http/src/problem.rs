//! `application/problem+json` error bodies (RFC 9457): one shape for every error the layers
//! answer, and the HTTP faces built on them (`redis-atomic-server`) answer theirs with the same
//! functions, so a client parses errors once.

use axum::body::Body;
use http::{header, HeaderValue, Response, StatusCode};

/// A problem with a stable `type` (`urn:redis-atomic:problem:<kind>`), `detail`, and extra
/// members (e.g. `retry_safe`) merged into the body.
pub fn typed(
    status: StatusCode,
    kind: &str,
    detail: &str,
    extra: serde_json::Map<String, serde_json::Value>,
) -> Response<Body> {
    let mut body = serde_json::Map::new();
    body.insert(
        "type".into(),
        format!("urn:redis-atomic:problem:{kind}").into(),
    );
    body.insert(
        "title".into(),
        status.canonical_reason().unwrap_or("Error").into(),
    );
    body.insert("status".into(), status.as_u16().into());
    body.insert("detail".into(), detail.into());
    body.extend(extra);
    let text = serde_json::Value::Object(body).to_string();
    with_type(Response::new(Body::from(text)), status)
}

fn with_type(mut r: Response<Body>, status: StatusCode) -> Response<Body> {
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/problem+json"),
    );
    r
}

/// A problem response with a title from the status and `detail`.
pub fn response(status: StatusCode, detail: &str) -> Response<Body> {
    let body = format!(
        r#"{{"type":"about:blank","title":{},"status":{},"detail":{}}}"#,
        json_string(status.canonical_reason().unwrap_or("Error")),
        status.as_u16(),
        json_string(detail)
    );
    with_type(Response::new(Body::from(body)), status)
}

fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
