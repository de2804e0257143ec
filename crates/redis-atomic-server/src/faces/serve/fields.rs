//! The constrained fields of `serve`'s requests: each type checks its value while the request is
//! parsed (a refusal is a 422 `invalid` problem naming the field) and describes the same
//! constraint in the OpenAPI document, from the same constants — the library's own limits
//! (`MAX_JOB_ID_LEN`, `lock::MAX_TTL`, …) — so the document and the server cannot disagree.
//!
//! **Integers** are JSON integers in `MIN..=MAX` (an integral number such as `1.0` counts, as
//! JSON Schema counts it); the schema says `minimum`, `maximum` and the width (`format`).
//!
//! **Identifiers** (tokens, worker names, job ids, key names, request ids) are printable ASCII,
//! U+0020..=U+007E, and key names (they become part of Redis keys) also exclude `{` and `}`, which
//! pick the cluster hash slot. Why ASCII: the library bounds identifiers in bytes, JSON Schema
//! bounds strings in characters; with one byte per character `maxLength` is the library's byte
//! limit exactly, and the schema's `pattern` is built from the same character ranges the server
//! checks. Free text (payloads, values, fingerprints, stored bodies, error messages) is any
//! Unicode, bounded only by the request size.

use serde::de::{self, Visitor};
use std::fmt;
use std::time::Duration;
use utoipa::openapi::schema::{ObjectBuilder, SchemaFormat, Type};
use utoipa::openapi::{RefOr, Schema};

/// Which characters an identifier may hold: inclusive ranges, from which both the server's check
/// ([`Chars::allows`]) and the schema's `pattern` ([`Chars::pattern`]) are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chars(&'static [(char, char)]);

impl Chars {
    /// Printable ASCII.
    pub const PRINTABLE: Chars = Chars(&[(' ', '~')]);
    /// Printable ASCII without `{` and `}` (a key name's braces would pick the hash slot).
    pub const KEY_NAME: Chars = Chars(&[(' ', 'z'), ('|', '|'), ('~', '~')]);

    /// Whether `c` is one of these characters.
    pub fn allows(self, c: char) -> bool {
        self.0.iter().any(|&(lo, hi)| (lo..=hi).contains(&c))
    }

    /// The ECMA-262 (and Python `re`) pattern of a string made only of these characters.
    pub fn pattern(self) -> String {
        let class: String = self
            .0
            .iter()
            .map(|&(lo, hi)| format!("\\x{:02X}-\\x{:02X}", u32::from(lo), u32::from(hi)))
            .collect();
        format!("^[{class}]*$")
    }
}

/// Whole milliseconds of a library limit, for a schema bound.
pub const fn ms(d: Duration) -> u64 {
    d.as_millis() as u64
}

/// A bound as the document writes it (an integer, never a float that would round `u64::MAX`).
fn number(n: i128) -> utoipa::Number {
    match (usize::try_from(n), isize::try_from(n)) {
        (Ok(u), _) => utoipa::Number::UInt(u),
        (_, Ok(i)) => utoipa::Number::Int(i),
        _ => utoipa::Number::Float(n as f64),
    }
}

/// The schema of an integer field in `min..=max`.
pub fn int_schema(min: i128, max: i128, format: &str, description: &str) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .format(Some(SchemaFormat::Custom(format.into())))
        .minimum(Some(number(min)))
        .maximum(Some(number(max)))
        .description(Some(description.trim()))
        .into()
}

/// The schema of an identifier of `min..=max` characters from `chars`.
pub fn text_schema(min: usize, max: usize, chars: Chars, description: &str) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(min))
        .max_length(Some(max))
        .pattern(Some(chars.pattern()))
        .description(Some(description.trim()))
        .into()
}

/// Accepts a JSON integer (or an integral number) in `min..=max`.
pub struct IntVisitor {
    /// Smallest accepted.
    pub min: i128,
    /// Largest accepted.
    pub max: i128,
}

impl IntVisitor {
    fn check<E: de::Error>(&self, v: i128) -> Result<i128, E> {
        if (self.min..=self.max).contains(&v) {
            Ok(v)
        } else {
            Err(E::custom(format!(
                "{v} is out of range: must be an integer in {}..={}",
                self.min, self.max
            )))
        }
    }
}

impl Visitor<'_> for IntVisitor {
    type Value = i128;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "an integer in {}..={}", self.min, self.max)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<i128, E> {
        self.check(v.into())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<i128, E> {
        self.check(v.into())
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<i128, E> {
        // `1.0` is an integer to JSON Schema; `1.5` is not. (An f64 past i128 is out of every
        // range anyway: the cast saturates.)
        if v.is_finite() && v.fract() == 0.0 {
            self.check(v as i128)
        } else {
            Err(E::invalid_type(de::Unexpected::Float(v), &self))
        }
    }
}

/// Accepts a string of `min..=max` characters from `chars`.
pub fn check_text<E: de::Error>(s: &str, min: usize, max: usize, chars: Chars) -> Result<(), E> {
    if let Some(c) = s.chars().find(|&c| !chars.allows(c)) {
        return Err(E::custom(format!(
            "character {c:?} is not allowed here (pattern {})",
            chars.pattern()
        )));
    }
    // All ASCII: bytes are characters.
    if s.len() < min || s.len() > max {
        return Err(E::custom(format!(
            "must be {min}..={max} characters, got {}",
            s.len()
        )));
    }
    Ok(())
}

/// An integer field: a newtype over `$ty` in `$min..=$max`, its check and its schema.
macro_rules! int_field {
    ($(#[doc = $doc:literal])* $name:ident($ty:ty): $min:expr, $max:expr, $format:literal) => {
        $(#[doc = $doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, ::serde::Serialize)]
        #[serde(transparent)]
        pub struct $name(pub $ty);

        impl $name {
            /// Smallest accepted.
            pub const MIN: $ty = $min;
            /// Largest accepted.
            pub const MAX: $ty = $max;
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let visitor = $crate::faces::serve::fields::IntVisitor {
                    min: Self::MIN as i128,
                    max: Self::MAX as i128,
                };
                let v = d.deserialize_any(visitor)?;
                <$ty>::try_from(v)
                    .map($name)
                    .map_err(<D::Error as ::serde::de::Error>::custom)
            }
        }

        impl ::utoipa::PartialSchema for $name {
            fn schema() -> ::utoipa::openapi::RefOr<::utoipa::openapi::Schema> {
                $crate::faces::serve::fields::int_schema(
                    Self::MIN as i128,
                    Self::MAX as i128,
                    $format,
                    concat!($($doc, "\n"),*),
                )
            }
        }

        impl ::utoipa::ToSchema for $name {}
    };
}

/// A text field: a newtype over `String`, `$min..=$max` characters from `$chars`.
macro_rules! text_field {
    ($(#[doc = $doc:literal])* $name:ident: $min:expr, $max:expr, $chars:expr) => {
        $(#[doc = $doc])*
        #[derive(Clone, Debug, PartialEq, Eq, ::serde::Serialize)]
        #[serde(transparent)]
        pub struct $name(pub String);

        impl $name {
            /// Fewest characters.
            pub const MIN: usize = $min;
            /// Most characters (bytes: all ASCII).
            pub const MAX: usize = $max;
            /// The characters allowed.
            pub const CHARS: $crate::faces::serve::fields::Chars = $chars;

            /// The text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <String as ::serde::Deserialize>::deserialize(d)?;
                $crate::faces::serve::fields::check_text::<D::Error>(
                    &s, Self::MIN, Self::MAX, Self::CHARS,
                )?;
                Ok($name(s))
            }
        }

        impl ::utoipa::PartialSchema for $name {
            fn schema() -> ::utoipa::openapi::RefOr<::utoipa::openapi::Schema> {
                $crate::faces::serve::fields::text_schema(
                    Self::MIN,
                    Self::MAX,
                    Self::CHARS,
                    concat!($($doc, "\n"),*),
                )
            }
        }

        impl ::utoipa::ToSchema for $name {}
    };
}

pub(crate) use {int_field, text_field};

#[cfg(test)]
mod tests {
    use super::*;

    /// The pattern lists exactly the ranges the check allows (every ASCII character, and a
    /// non-ASCII one, agree between the two).
    #[test]
    fn patterns_come_from_the_ranges() {
        assert_eq!(Chars::PRINTABLE.pattern(), r"^[\x20-\x7E]*$");
        assert_eq!(
            Chars::KEY_NAME.pattern(),
            r"^[\x20-\x7A\x7C-\x7C\x7E-\x7E]*$"
        );
        for c in (0u8..=127).map(char::from).chain(['é', '\u{85}', '😀']) {
            let printable = (' '..='~').contains(&c);
            assert_eq!(Chars::PRINTABLE.allows(c), printable, "{c:?}");
            assert_eq!(
                Chars::KEY_NAME.allows(c),
                printable && c != '{' && c != '}',
                "{c:?}"
            );
        }
    }

    int_field!(
        /// A test field.
        Small(u8): 1, 9, "uint8"
    );
    text_field!(
        /// A test id.
        Id: 1, 3, Chars::KEY_NAME
    );

    /// Integers in range (integral floats too) pass; out of range, fractional, strings and
    /// nulls are refused with a message naming the range.
    #[test]
    fn integers() {
        let ok = |s: &str| serde_json::from_str::<Small>(s).map(|v| v.0);
        assert_eq!(ok("1").unwrap(), 1);
        assert_eq!(ok("9.0").unwrap(), 9);
        for bad in [
            "0",
            "10",
            "-1",
            "1.5",
            "\"5\"",
            "null",
            "1e300",
            "18446744073709551616",
        ] {
            let err = ok(bad).expect_err(bad).to_string();
            assert!(err.contains("1..=9"), "{bad}: {err}");
        }
    }

    /// Identifiers: length in range, only the allowed characters.
    #[test]
    fn identifiers() {
        let ok = |s: &str| serde_json::from_str::<Id>(s).map(|v| v.as_str().to_string());
        assert_eq!(ok(r#""a b""#).unwrap(), "a b");
        for bad in [r#""""#, r#""abcd""#, r#""{a}""#, r#""é""#, r#""\n""#, "5"] {
            assert!(ok(bad).is_err(), "{bad}");
        }
    }
}
