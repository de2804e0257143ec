//! Arbitrary server replies, for proptests of reply decoders.
//!
//! Whatever a server (or a proxy in between, or a different server version) sends, a decoder
//! must answer with a value or a typed error: never a panic, never an allocation sized by a
//! number in the reply. [`reply`] generates depth- and size-bounded `redis::Value` trees of
//! every RESP2/RESP3 type, biased towards the values that break decoders: huge and negative
//! integers and counts (2^62, `i64::MIN`), numbers as text, wrong types, nil, `OK`, error
//! replies, maps, doubles. [`tagged`] builds tagged arrays that start with a status word a
//! script really returns, so decoding gets past the status to the fields.

use proptest::prelude::*;
use redis::Value;

/// Integers that break decoders, and any other.
pub fn int() -> impl Strategy<Value = i64> {
    prop_oneof![
        3 => prop::sample::select(vec![
            0,
            1,
            2,
            -1,
            i64::MIN,
            i64::MAX,
            1 << 62,
            -(1 << 62),
            1 << 53,
            u32::MAX as i64 + 1,
        ]),
        1 => any::<i64>(),
    ]
}

/// Texts that break decoders: numbers out of range, signs, floats, empty, not UTF-8, and any
/// other bytes.
pub fn bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        3 => prop::sample::select(vec![
            "",
            "0",
            "1",
            "-1",
            "4611686018427387904",
            "18446744073709551616",
            "-9223372036854775808",
            "1e3",
            "1.5",
            " 1",
            "nan",
            "OK",
        ])
        .prop_map(|s| s.as_bytes().to_vec()),
        1 => int().prop_map(|n| n.to_string().into_bytes()),
        1 => prop::collection::vec(any::<u8>(), 0..12),
        1 => Just(vec![0xff, 0xfe]),
    ]
}

/// A reply without nesting: every scalar type of RESP2 and RESP3.
pub fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        2 => int().prop_map(Value::Int),
        2 => bytes().prop_map(Value::BulkString),
        1 => Just(Value::Nil),
        1 => Just(Value::Okay),
        1 => "[a-z0-9 ]{0,8}".prop_map(Value::SimpleString),
        1 => any::<f64>().prop_map(Value::Double),
        1 => any::<bool>().prop_map(Value::Boolean),
        1 => bytes().prop_map(Value::BigNumber),
        1 => prop::sample::select(vec!["-ERR boom\r\n", "-NOSCRIPT x\r\n", "-WRONGTYPE y\r\n"])
            .prop_map(|raw| redis::parse_redis_value(raw.as_bytes()).unwrap_or(Value::Nil)),
    ]
}

/// Any reply: scalars, and arrays, sets, maps and pushes of replies, at most 3 levels deep and
/// 64 values in all.
pub fn reply() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(3, 64, 8, |inner| {
        prop_oneof![
            3 => prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            1 => prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Set),
            1 => prop::collection::vec((inner.clone(), inner.clone()), 0..4).prop_map(Value::Map),
            1 => prop::collection::vec(inner, 0..4).prop_map(|data| Value::Push {
                kind: redis::PushKind::Message,
                data,
            }),
        ]
    })
}

/// A tagged array `[status, field, ...]` whose status is one of `words` (as a bulk or simple
/// string) and whose fields are arbitrary replies — or, one time in four, any reply at all.
pub fn tagged(words: Vec<String>) -> impl Strategy<Value = Value> {
    let status = prop::sample::select(words).prop_flat_map(|w| {
        prop_oneof![
            Just(Value::BulkString(w.clone().into_bytes())),
            Just(Value::SimpleString(w)),
        ]
    });
    let fields = prop::collection::vec(prop_oneof![3 => scalar(), 1 => reply()], 0..12);
    prop_oneof![
        3 => (status, fields).prop_map(|(s, mut f)| {
            f.insert(0, s);
            Value::Array(f)
        }),
        1 => reply(),
    ]
}
