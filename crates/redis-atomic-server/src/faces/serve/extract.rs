//! Path and query extractors whose refusals are problems, like [`super::error::JsonBody`]'s: a
//! path segment or query parameter that fails its type ([`super::params`]) is a 422 `invalid`
//! naming it, never axum's plain-text 400.

use super::error::ApiError;
use axum::extract::{FromRequestParts, Query};
use http::request::Parts;
use serde::de::DeserializeOwned;

/// Path parameters, each checked by its type.
pub struct Named<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for Named<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|p| Named(p.0))
            .map_err(|e| ApiError::invalid(format!("path: {}", e.body_text())))
    }
}

/// Query parameters, each checked by its type; an unknown or repeated parameter is refused.
pub struct Params<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for Params<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Query::<T>::from_request_parts(parts, state)
            .await
            .map(|q| Params(q.0))
            .map_err(|e| ApiError::invalid(format!("query: {}", e.body_text())))
    }
}

/// `deserialize_with` for a number in a query string: the text is read as a JSON number and
/// checked by `T`, so `?count=5` obeys the same rule as `"count": 5` in a body.
pub fn query_number<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: DeserializeOwned,
{
    use serde::Deserialize;
    let text = String::deserialize(d)?;
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| serde::de::Error::custom(format!("{text:?}: {e}")))
}

/// Parses `bytes` as one JSON object into `T` (for [`super::error::JsonBody`]): a body is an
/// object, as the document says, never the array form serde also reads a struct from
/// (`[418]` would otherwise be `{"delay_ms": 418}`).
pub fn from_object<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, serde_json::Error> {
    use serde::de::{MapAccess, Visitor};
    use std::marker::PhantomData;

    struct Object<T>(PhantomData<T>);

    impl<'de, T: serde::Deserialize<'de>> Visitor<'de> for Object<T> {
        type Value = T;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON object")
        }

        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
            T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
        }
    }

    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = serde::Deserializer::deserialize_map(&mut de, Object(PhantomData))?;
    de.end()?;
    Ok(value)
}
