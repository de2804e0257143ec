//! Idempotency responses: what `complete` / `fail` store and `'replay'` answers give back — the
//! library's `Response` (status, headers, and a body or a reference to one), in and out.

use crate::convert::{bytes, uint};
use crate::errors::bad;
use napi::bindgen_prelude::{Buffer, Either, JsObjectValue, Object};
use napi_derive::napi;
use redis_atomic::idempotency::{Body, Response};
use redis_atomic::Error;

/// A header to store.
#[napi(object)]
pub struct HeaderInit {
    /// The header's name.
    pub name: String,
    /// Its value.
    pub value: Either<String, Buffer>,
}

/// A stored header.
#[napi(object)]
pub struct Header {
    /// The header's name.
    pub name: String,
    /// Its value, byte for byte.
    pub value: Buffer,
}

/// A response to store for replay: `status`, the headers to replay (an object, or an array to
/// keep repeated names), and a `body` — or, for a body too large to keep in Redis, a
/// `reference` to where it is (an object-store key, a URL).
#[napi(object)]
pub struct ResponseInit<'a> {
    /// An HTTP-style status (0..=65535), or any code of your protocol.
    pub status: f64,
    /// The headers to replay.
    #[napi(ts_type = "Record<string, string | Buffer> | Array<HeaderInit>")]
    pub headers: Option<Either<Vec<HeaderInit>, Object<'a>>>,
    /// The body (default: empty).
    pub body: Option<Either<String, Buffer>>,
    /// Instead of `body`: where the body is stored.
    pub reference: Option<String>,
}

/// A stored response, as `'replay'` gives it back.
#[napi(object)]
pub struct StoredResponse {
    /// The status.
    pub status: f64,
    /// The headers, in the order stored.
    pub headers: Vec<Header>,
    /// The body (absent when the response stored a `reference`).
    pub body: Option<Buffer>,
    /// Where the body is stored, when the response stored a reference.
    pub reference: Option<String>,
}

/// The library's response for `init` (on the JavaScript thread: object headers are read here).
pub(crate) fn build(init: ResponseInit) -> Result<Response, Error> {
    let status = u16::try_from(uint("status", init.status)?)
        .map_err(|_| bad(format!("status must be 0..=65535, got {}", init.status)))?;
    let body = match (init.body, init.reference) {
        (Some(_), Some(_)) => return Err(bad("a response has a body or a reference, not both")),
        (Some(b), None) => Body::Bytes(bytes(&b)),
        (None, Some(r)) => Body::Reference(r),
        (None, None) => Body::Bytes(Vec::new()),
    };
    let headers = match init.headers {
        None => Vec::new(),
        Some(Either::A(list)) => list
            .iter()
            .map(|h| (h.name.clone(), bytes(&h.value)))
            .collect(),
        Some(Either::B(object)) => object_headers(&object)?,
    };
    Ok(Response {
        status,
        headers,
        body,
    })
}

fn object_headers(object: &Object) -> Result<Vec<(String, Vec<u8>)>, Error> {
    let names = Object::keys(object).map_err(|e| bad(format!("headers: {e}")))?;
    names
        .into_iter()
        .map(|name| {
            let value: Either<String, Buffer> = object
                .get_named_property(&name)
                .map_err(|_| bad(format!("header {name:?} must be a string or a Buffer")))?;
            Ok((name, bytes(&value)))
        })
        .collect()
}

/// A stored response for JavaScript.
pub(crate) fn stored(r: Response) -> StoredResponse {
    let (body, reference) = match r.body {
        Body::Bytes(b) => (Some(Buffer::from(b)), None),
        Body::Reference(r) => (None, Some(r)),
        // A body kind added to the library later: shown as neither.
        _ => (None, None),
    };
    StoredResponse {
        status: f64::from(r.status),
        headers: r
            .headers
            .into_iter()
            .map(|(name, value)| Header {
                name,
                value: Buffer::from(value),
            })
            .collect(),
        body,
        reference,
    }
}
