//! `application/problem+json` error bodies (RFC 9457).

use axum::body::Body;
use http::{header, HeaderValue, Response, StatusCode};

/// A problem response with a title from the status and `detail`.
pub(crate) fn response(status: StatusCode, detail: &str) -> Response<Body> {
    let body = format!(
        r#"{{"type":"about:blank","title":{},"status":{},"detail":{}}}"#,
        json_string(status.canonical_reason().unwrap_or("Error")),
        status.as_u16(),
        json_string(detail)
    );
    let mut r = Response::new(Body::from(body));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/problem+json"),
    );
    r
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
