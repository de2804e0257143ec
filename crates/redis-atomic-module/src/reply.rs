//! A decision's reply, built whole before anything is sent (so no path can answer twice or half),
//! in the shapes a script's Lua table becomes: strings as bulk strings, numbers as integers.

/// One element of a reply array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// A Lua string: a bulk string.
    Bulk(Vec<u8>),
    /// A Lua number: an integer (truncated as the server converts it: [`crate::lua::to_ll`]).
    Int(i64),
}

/// A whole reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Out {
    /// An error reply; the text starts with its code (`ERR …`, `WRONGTYPE …`).
    Error(Vec<u8>),
    /// The server's own wrong-number-of-arguments error.
    WrongArity,
    /// A Lua table.
    Array(Vec<Item>),
}

impl Out {
    /// An error reply from text.
    pub fn err(text: impl Into<Vec<u8>>) -> Out {
        Out::Error(text.into())
    }

    /// `ERR redis-atomic: <what>`, as the scripts' `redis.error_reply`s read.
    pub fn bad(what: &str) -> Out {
        Out::Error(format!("ERR redis-atomic: {what}").into_bytes())
    }

    /// The error a `redis.call` raises on a key of another type (the script adds its own suffix
    /// after " script: "; the words before it are these).
    pub fn wrongtype() -> Out {
        Out::err("WRONGTYPE Operation against a key holding the wrong kind of value")
    }

    /// A status word and numbers: `{'allowed', remaining, reset}` and the like.
    pub fn status(word: &str, numbers: &[f64]) -> Out {
        let mut items = vec![Item::Bulk(word.as_bytes().to_vec())];
        items.extend(numbers.iter().map(|&n| Item::Int(crate::lua::to_ll(n))));
        Out::Array(items)
    }
}
