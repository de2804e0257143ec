//! The stored response: status, selected headers, binary-safe body (or a reference to it).
//!
//! Encoded into one byte string by Rust, stored opaquely by the scripts (Lua never parses it), so
//! the record stays one Redis string. Layout (big-endian): `b"R1"`, status `u16`, header count
//! `u16`, per header name length `u16` + name + value length `u32` + value, then a body kind byte
//! (`0` bytes, `1` reference) and the body to the end.

use crate::Error;

/// What replaying a request returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    /// HTTP-style status code (or any code of the caller's protocol).
    pub status: u16,
    /// Headers to replay (the caller selects which).
    pub headers: Vec<(String, Vec<u8>)>,
    /// The body or a reference to where it is stored.
    pub body: Body,
}

/// A stored body.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Body {
    /// The bytes themselves (binary-safe).
    Bytes(Vec<u8>),
    /// A reference (object-store key, URL) to a body too large to keep in Redis.
    Reference(String),
}

impl Response {
    /// A response with a byte body and no headers.
    pub fn new(status: u16, body: impl Into<Vec<u8>>) -> Self {
        Response {
            status,
            headers: Vec::new(),
            body: Body::Bytes(body.into()),
        }
    }

    /// Adds a header.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<Vec<u8>>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The body bytes, when stored inline.
    pub fn body_bytes(&self) -> Option<&[u8]> {
        match &self.body {
            Body::Bytes(b) => Some(b),
            Body::Reference(_) => None,
        }
    }

    /// Encodes for storage.
    pub(crate) fn encode(&self) -> Result<Vec<u8>, Error> {
        let too_many = || Error::BadArgument("response has too many or too large headers".into());
        let mut out = Vec::with_capacity(16 + self.encoded_body_len());
        out.extend_from_slice(b"R1");
        out.extend_from_slice(&self.status.to_be_bytes());
        let count = u16::try_from(self.headers.len()).map_err(|_| too_many())?;
        out.extend_from_slice(&count.to_be_bytes());
        for (name, value) in &self.headers {
            let nlen = u16::try_from(name.len()).map_err(|_| too_many())?;
            let vlen = u32::try_from(value.len()).map_err(|_| too_many())?;
            out.extend_from_slice(&nlen.to_be_bytes());
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(&vlen.to_be_bytes());
            out.extend_from_slice(value);
        }
        match &self.body {
            Body::Bytes(b) => {
                out.push(0);
                out.extend_from_slice(b);
            }
            Body::Reference(r) => {
                out.push(1);
                out.extend_from_slice(r.as_bytes());
            }
        }
        Ok(out)
    }

    fn encoded_body_len(&self) -> usize {
        match &self.body {
            Body::Bytes(b) => b.len(),
            Body::Reference(r) => r.len(),
        }
    }

    /// Decodes what [`Response::encode`] wrote.
    pub(crate) fn decode(bytes: &[u8]) -> Result<Response, Error> {
        let mut r = Reader { bytes, pos: 0 };
        if r.take(2)? != b"R1" {
            return Err(bad("not an R1 response"));
        }
        let status = u16::from_be_bytes(r.array()?);
        let count = u16::from_be_bytes(r.array()?);
        // Sized by the bytes present, not the count: each header takes at least 6 of them.
        let present = (r.bytes.len() - r.pos) / 6;
        let mut headers = Vec::with_capacity(usize::from(count).min(present));
        for _ in 0..count {
            let nlen = usize::from(u16::from_be_bytes(r.array()?));
            let name = String::from_utf8(r.take(nlen)?.to_vec()).map_err(|_| bad("header name"))?;
            let vlen = usize::try_from(u32::from_be_bytes(r.array()?)).map_err(|_| bad("len"))?;
            headers.push((name, r.take(vlen)?.to_vec()));
        }
        let kind = r.take(1)?[0];
        let rest = r.bytes[r.pos..].to_vec();
        let body = match kind {
            0 => Body::Bytes(rest),
            1 => Body::Reference(String::from_utf8(rest).map_err(|_| bad("reference"))?),
            _ => return Err(bad("body kind")),
        };
        Ok(Response {
            status,
            headers,
            body,
        })
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
        let end = self.pos.checked_add(n).filter(|e| *e <= self.bytes.len());
        let end = end.ok_or_else(|| bad("truncated"))?;
        let slice = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(slice)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], Error> {
        self.take(N)?.try_into().map_err(|_| bad("truncated"))
    }
}

fn bad(detail: &str) -> Error {
    Error::BadReply {
        script: "idem_begin",
        detail: format!("stored response: {detail}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any response survives encode/decode byte-exact.
        #[test]
        fn roundtrip(status: u16, body: Vec<u8>, headers in proptest::collection::vec(("[a-z-]{1,20}", any::<Vec<u8>>()), 0..5), reference: bool) {
            let body = if reference { Body::Reference(String::from_utf8_lossy(&body).into_owned()) } else { Body::Bytes(body) };
            let r = Response { status, headers, body };
            prop_assert_eq!(Response::decode(&r.encode().unwrap()).unwrap(), r);
        }

        /// Arbitrary bytes never panic the decoder.
        #[test]
        fn decode_never_panics(bytes: Vec<u8>) {
            let _ = Response::decode(&bytes);
        }
    }
}
