//! TRANSITION ONLY: the index-based reply decoder of the bindings not yet on generated replies (`script::reply`). Removed when the last binding moves.

use crate::Error;
use redis::Value;

/// A script reply: its status word and the fields after it.
pub(crate) struct Reply {
    pub(crate) script: &'static str,
    pub(crate) status: String,
    fields: Vec<Value>,
}

impl Reply {
    pub(crate) fn parse(script: &'static str, value: Value) -> Result<Reply, Error> {
        let Value::Array(mut items) = value else {
            return Err(bad(script, format!("expected an array, got {value:?}")));
        };
        if items.is_empty() {
            return Err(bad(script, "empty reply".into()));
        }
        let status = match items.remove(0) {
            Value::BulkString(b) => {
                String::from_utf8(b).map_err(|_| bad(script, "status not UTF-8".into()))?
            }
            Value::SimpleString(s) => s,
            other => return Err(bad(script, format!("status {other:?}"))),
        };
        Ok(Reply {
            script,
            status,
            fields: items,
        })
    }

    /// Field `i` (0-based, after the status) as an integer (integer or decimal string reply).
    pub(crate) fn int(&self, i: usize) -> Result<i64, Error> {
        match self.fields.get(i) {
            Some(Value::Int(n)) => Ok(*n),
            Some(Value::BulkString(b)) => std::str::from_utf8(b)
                .ok()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| bad(self.script, format!("field {i} is not an integer"))),
            other => Err(bad(self.script, format!("field {i}: {other:?}"))),
        }
    }

    /// Field `i` as a non-negative integer.
    pub(crate) fn uint(&self, i: usize) -> Result<u64, Error> {
        u64::try_from(self.int(i)?).map_err(|_| bad(self.script, format!("field {i} is negative")))
    }

    /// Field `i` as bytes.
    pub(crate) fn bytes(&self, i: usize) -> Result<&[u8], Error> {
        match self.fields.get(i) {
            Some(Value::BulkString(b)) => Ok(b),
            other => Err(bad(self.script, format!("field {i}: {other:?}"))),
        }
    }

    /// The error for a status word the binding does not know.
    pub(crate) fn unexpected(&self) -> Error {
        bad(self.script, format!("unknown status `{}`", self.status))
    }
}

fn bad(script: &'static str, detail: String) -> Error {
    Error::BadReply { script, detail }
}

/// A `Duration` as whole milliseconds in `1..=max_ms`, or a typed error naming `what`.
pub(crate) fn millis(what: &str, d: std::time::Duration, max_ms: u64) -> Result<i64, Error> {
    let ms = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    if ms == 0 || ms > max_ms {
        return Err(Error::BadArgument(format!(
            "{what} must be between 1 ms and {max_ms} ms, got {d:?}"
        )));
    }
    i64::try_from(ms).map_err(|_| Error::BadArgument(format!("{what} too large")))
}
