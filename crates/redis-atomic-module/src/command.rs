//! Running a server command from a native, as a script's `redis.call` does (`RedisModule_Call`
//! with `!`: its writes are replicated as the script's would be, wrapped with the native's other
//! effects): for the natives over sorted sets and hashes, where a transliteration of the script's
//! calls is the surest way to decide as it does. The reply is copied out and freed at once.

use crate::ffi::{self, CallReply};
use crate::server::Call;
use std::ffi::{c_char, CStr};

/// A command's reply, owned.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// A bulk or simple string.
    Bytes(Vec<u8>),
    /// An integer.
    Int(i64),
    /// An array.
    Array(Vec<Reply>),
    /// Nil.
    Nil,
}

impl Reply {
    /// The bytes of a string reply (None for nil or anything else).
    pub fn bytes(&self) -> Option<&[u8]> {
        match self {
            Reply::Bytes(b) => Some(b),
            _ => None,
        }
    }
}

/// Converts and frees `reply`: Err(text) for an error reply (the error a script's call raises).
///
/// # Safety
/// `reply` must be a live call reply (or null) of `api`.
unsafe fn take(api: &ffi::Api, reply: *mut CallReply, depth: usize) -> Result<Reply, Vec<u8>> {
    if reply.is_null() {
        return Err(b"ERR redis-atomic module: the server refused a command".to_vec());
    }
    let bytes = |r: *mut CallReply| {
        let mut len = 0usize;
        let ptr = (api.call_reply_string_ptr)(r, &mut len);
        match ptr.is_null() {
            true => Vec::new(),
            false => std::slice::from_raw_parts(ptr.cast::<u8>(), len).to_vec(),
        }
    };
    let out = match (api.call_reply_type)(reply) {
        ffi::REPLY_STRING => Ok(Reply::Bytes(bytes(reply))),
        ffi::REPLY_ERROR => Err(bytes(reply)),
        ffi::REPLY_INTEGER => Ok(Reply::Int((api.call_reply_integer)(reply))),
        ffi::REPLY_ARRAY if depth < 4 => {
            let n = (api.call_reply_length)(reply);
            let mut items = Vec::with_capacity(n.min(1024));
            for i in 0..n {
                // Elements belong to the array reply: converted, not freed on their own (an
                // error inside an array, which no command here answers, reads as nil).
                let item = (api.call_reply_array_element)(reply, i);
                items.push(take(api, item, depth + 1).unwrap_or(Reply::Nil));
            }
            Ok(Reply::Array(items))
        }
        _ => Ok(Reply::Nil),
    };
    if depth == 0 {
        (api.free_call_reply)(reply);
    }
    out
}

/// `RedisModule_Call`'s format per argument count: `!` (replicate the writes as a script's are),
/// then one `b` (buffer, length) per argument.
const FORMATS: [&CStr; 9] = [
    c"!",
    c"!b",
    c"!bb",
    c"!bbb",
    c"!bbbb",
    c"!bbbbb",
    c"!bbbbbb",
    c"!bbbbbbb",
    c"!bbbbbbbb",
];

macro_rules! call_with {
    ($api:expr, $ctx:expr, $cmd:expr, $a:expr; $($i:literal),*) => {
        ($api.call)(
            $ctx,
            $cmd,
            FORMATS[$a.len()].as_ptr(),
            $($a[$i].as_ptr().cast::<c_char>(), $a[$i].len()),*
        )
    };
}

impl Call {
    /// `redis.call(cmd, args...)` with at most 8 arguments: Ok(reply) or Err(the error's text).
    pub fn run(&self, cmd: &std::ffi::CStr, a: &[&[u8]]) -> Result<Reply, Vec<u8>> {
        let (api, ctx, c) = (self.api(), self.ctx(), cmd.as_ptr());
        // SAFETY: the format has one 'b' (pointer, length) per argument passed; the buffers
        // outlive the call; the reply is taken (freed) once.
        unsafe {
            let reply = match a.len() {
                0 => (api.call)(ctx, c, FORMATS[0].as_ptr()),
                1 => call_with!(api, ctx, c, a; 0),
                2 => call_with!(api, ctx, c, a; 0, 1),
                3 => call_with!(api, ctx, c, a; 0, 1, 2),
                4 => call_with!(api, ctx, c, a; 0, 1, 2, 3),
                5 => call_with!(api, ctx, c, a; 0, 1, 2, 3, 4),
                6 => call_with!(api, ctx, c, a; 0, 1, 2, 3, 4, 5),
                7 => call_with!(api, ctx, c, a; 0, 1, 2, 3, 4, 5, 6),
                8 => call_with!(api, ctx, c, a; 0, 1, 2, 3, 4, 5, 6, 7),
                _ => return Err(b"ERR redis-atomic module: too many arguments".to_vec()),
            };
            take(api, reply, 0)
        }
    }
}
