//! Decoding the tagged arrays scripts return, `{status, field, ...}`, for the generated reply
//! types.
//!
//! Every script's `returns:` header becomes a reply enum (see `redis-atomic-scripts`' codegen)
//! whose [`FromReply`] impl reads the fields in order through a [`Reply`] cursor. Whatever a
//! server (or a proxy in between) sends, decoding ends in a value or [`Error::BadReply`]: no
//! panic, and no allocation sized by a number in the reply.

use crate::lease::Fence;
use crate::Error;
use redis::Value;
use std::time::Duration;

/// A typed script reply, generated from the script's `returns:` header.
pub trait FromReply: Sized {
    /// Decodes a reply whose status word has been split off.
    fn from_reply(reply: Reply) -> Result<Self, Error>;
    /// The status word this reply was decoded from (for metrics and logs): always one the
    /// script's header declares.
    fn status(&self) -> &str;
}

/// A reply decoded only as far as its status word, which must be one the header declares: for
/// scripts loaded at run time ([`super::ScriptSet`]), whose reply types no compiler has seen.
#[derive(Clone, Debug, PartialEq)]
pub struct RawReply {
    /// The status word.
    pub status: String,
    /// The items after it, as sent.
    pub fields: Vec<Value>,
}

impl FromReply for RawReply {
    fn from_reply(mut reply: Reply) -> Result<Self, Error> {
        if reply
            .declared
            .is_some_and(|words| !words.contains(&reply.status()))
        {
            return Err(reply.unexpected());
        }
        Ok(RawReply {
            fields: reply.fields.by_ref().collect(),
            status: std::mem::take(&mut reply.status),
        })
    }

    fn status(&self) -> &str {
        &self.status
    }
}

/// A script reply being decoded: its status word and a cursor over the fields after it.
#[derive(Debug)]
pub struct Reply {
    script: &'static str,
    declared: Option<&'static [&'static str]>,
    status: String,
    fields: std::vec::IntoIter<Value>,
    next: usize,
}

impl Reply {
    /// Splits the status word off a reply of `script`. (Public for the bindings a user's
    /// `build.rs` generates, and for the CLI's benchmarks, which decode raw `EVALSHA` replies.)
    pub fn parse(script: &'static str, value: Value) -> Result<Reply, Error> {
        let Value::Array(items) = value else {
            return Err(bad(
                script,
                format!("expected an array, got {}", kind(&value)),
            ));
        };
        let mut fields = items.into_iter();
        let status = match fields.next() {
            Some(Value::BulkString(b)) => {
                String::from_utf8(b).map_err(|_| bad(script, "status not UTF-8".into()))?
            }
            Some(Value::SimpleString(s)) => s,
            Some(other) => return Err(bad(script, format!("status is {}", kind(&other)))),
            None => return Err(bad(script, "empty reply".into())),
        };
        Ok(Reply {
            script,
            declared: None,
            status,
            fields,
            next: 1,
        })
    }

    /// The status words the script's header declares, for decoders that do not list them
    /// themselves ([`RawReply`]); generated reply types match their own words.
    pub fn declared(mut self, statuses: &'static [&'static str]) -> Reply {
        self.declared = Some(statuses);
        self
    }

    /// The script's name.
    pub fn script(&self) -> &'static str {
        self.script
    }

    /// The status word.
    pub fn status(&self) -> &str {
        &self.status
    }

    /// The error for a status word the reply type does not declare.
    pub fn unexpected(&self) -> Error {
        let mut word: String = self.status.chars().take(64).collect();
        if word.len() < self.status.len() {
            word.push('…');
        }
        bad(self.script, format!("unknown status `{word}`"))
    }

    /// Ends decoding: every field must have been read.
    pub fn finish(mut self) -> Result<(), Error> {
        match self.fields.next() {
            None => Ok(()),
            Some(_) => Err(self.error(format!(
                "`{}` reply has more than {} items",
                self.status, self.next
            ))),
        }
    }

    fn error(&self, detail: String) -> Error {
        bad(self.script, detail)
    }

    fn take(&mut self) -> Result<Value, Error> {
        let i = self.next;
        self.next += 1;
        self.fields
            .next()
            .ok_or_else(|| self.error(format!("`{}` reply lacks item {i}", self.status)))
    }

    /// An integer: an integer reply or a decimal string.
    pub fn int(&mut self) -> Result<i64, Error> {
        let i = self.next;
        match self.take()? {
            Value::Int(n) => Ok(n),
            Value::BulkString(b) => std::str::from_utf8(&b)
                .ok()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| self.error(format!("item {i} is not an integer"))),
            other => Err(self.error(format!("item {i} is {}", kind(&other)))),
        }
    }

    /// A non-negative integer.
    pub fn uint(&mut self) -> Result<u64, Error> {
        let i = self.next;
        u64::try_from(self.int()?).map_err(|_| self.error(format!("item {i} is negative")))
    }

    /// 0 or 1.
    pub fn bool(&mut self) -> Result<bool, Error> {
        let i = self.next;
        match self.int()? {
            0 => Ok(false),
            1 => Ok(true),
            n => Err(self.error(format!("item {i} is {n}, not 0 or 1"))),
        }
    }

    /// Non-negative milliseconds.
    pub fn ms(&mut self) -> Result<Duration, Error> {
        self.uint().map(Duration::from_millis)
    }

    /// Non-negative microseconds.
    pub fn us(&mut self) -> Result<Duration, Error> {
        self.uint().map(Duration::from_micros)
    }

    /// A fence.
    pub fn fence(&mut self) -> Result<Fence, Error> {
        self.uint().map(Fence)
    }

    /// Binary-safe bytes (a bulk string).
    pub fn bytes(&mut self) -> Result<Vec<u8>, Error> {
        let i = self.next;
        match self.take()? {
            Value::BulkString(b) => Ok(b),
            Value::SimpleString(s) => Ok(s.into_bytes()),
            other => Err(self.error(format!("item {i} is {}", kind(&other)))),
        }
    }

    /// UTF-8 text.
    pub fn str(&mut self) -> Result<String, Error> {
        let i = self.next;
        String::from_utf8(self.bytes()?).map_err(|_| self.error(format!("item {i} not UTF-8")))
    }

    /// Text, invalid UTF-8 replaced.
    pub fn text(&mut self) -> Result<String, Error> {
        self.bytes()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    }

    /// One of `words`: its index.
    pub fn word(&mut self, words: &[&str]) -> Result<usize, Error> {
        let i = self.next;
        let got = self.bytes()?;
        words
            .iter()
            .position(|w| w.as_bytes() == got.as_slice())
            .ok_or_else(|| self.error(format!("item {i} is none of {words:?}")))
    }

    /// An optional trailing field: `None` when the reply has ended.
    pub fn opt<T>(
        &mut self,
        read: impl FnOnce(&mut Self) -> Result<T, Error>,
    ) -> Result<Option<T>, Error> {
        if self.fields.len() == 0 {
            return Ok(None);
        }
        read(self).map(Some)
    }

    /// The rest of the reply as groups of `width` items, each read by `read`; with `count`, the
    /// number of groups must equal it. Allocation follows the items actually received.
    pub fn group<T>(
        &mut self,
        width: usize,
        count: Option<u64>,
        mut read: impl FnMut(&mut Self) -> Result<T, Error>,
    ) -> Result<Vec<T>, Error> {
        let rest = self.fields.len();
        if width == 0 || rest % width != 0 {
            return Err(self.error(format!(
                "{rest} items after item {} do not make groups of {width}",
                self.next - 1
            )));
        }
        let groups = rest / width;
        if let Some(count) = count.filter(|c| u64::try_from(groups).ok() != Some(*c)) {
            return Err(self.error(format!("{groups} groups, but the reply counts {count}")));
        }
        let mut out = Vec::with_capacity(groups);
        for _ in 0..groups {
            out.push(read(self)?);
        }
        Ok(out)
    }
}

/// [`Error::BadReply`] for a command's reply (or its absence) that is none of the shapes its
/// parser expects: says what kind of value came, never its content.
pub(crate) fn unexpected(command: &'static str, value: Option<&Value>) -> Error {
    let detail = match value {
        Some(v) => format!("answered {}", kind(v)),
        None => "no reply".into(),
    };
    bad(command, detail)
}

/// What kind of value `value` is, for error messages (never its content: a reply may be large
/// or carry user data).
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Nil => "nil",
        Value::Int(_) => "an integer",
        Value::BulkString(_) => "a bulk string",
        Value::Array(_) => "an array",
        Value::SimpleString(_) => "a simple string",
        Value::Okay => "OK",
        Value::ServerError(_) => "an error",
        _ => "an unexpected type",
    }
}

fn bad(script: &'static str, detail: String) -> Error {
    Error::BadReply { script, detail }
}
