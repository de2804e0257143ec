//! Reference scripts: what people write by hand instead of our scripts, measured in the same run
//! so "server µs per decision" has a yardstick that moves with the machine. Loaded once per run
//! (`SCRIPT LOAD`) and sent as raw `EVALSHA`, like the raw path. `tools/rl-script-cost.py` reads
//! the same files.

use super::workload::send;
use redis::aio::MultiplexedConnection;
use redis_atomic::Arg;
use std::sync::OnceLock;

/// A script outside our registry, by its source.
pub struct Classic {
    /// What it is, for the report.
    pub name: &'static str,
    /// Exactly what `SCRIPT LOAD` gets.
    pub source: &'static str,
    sha1: OnceLock<String>,
}

/// The classic sorted-set sliding log, reading the server's clock instead of the client's (member
/// `<now>-<count>` stands in for the usual unique request id). Keys: log. Args: window_ms limit.
/// Replies `{1, count}` admitted, `{0, count}` refused.
pub static SLIDING_LOG: Classic = Classic::new(
    "classic sliding log (sorted set, server TIME)",
    include_str!("classic/sliding_log.lua"),
);

/// The widely copied float GCRA (redis-gcra style) on server `TIME`. Keys: state. Args: rate
/// period_s burst. Replies `{1, 0}` admitted, `{0, wait_s}` refused.
pub static GCRA: Classic = Classic::new(
    "classic float GCRA (redis-gcra style, server TIME)",
    include_str!("classic/gcra.lua"),
);

/// The classic fixed window: `INCR`, `EXPIRE` on the first hit, compare. Keys: counter.
/// Args: window_s limit. Replies 1 admitted, 0 refused (the refused hit is still counted).
pub static FIXED_WINDOW: Classic = Classic::new(
    "classic fixed window (INCR + EXPIRE)",
    include_str!("classic/fixed_window.lua"),
);

/// Rung 5 of the ladder for a counter: `GET`, add one, `SET`, as one script (the same
/// read-modify-write a CAS closure does). Keys: counter. Replies the new value.
pub static INCR: Classic = Classic::new(
    "one-script GET/SET increment (rung 5)",
    include_str!("classic/incr.lua"),
);

/// The widely copied token bucket of blog posts and StackOverflow answers (no redis-cell): a hash
/// of `tokens` and `timestamp` read with `HMGET`, refilled by elapsed seconds × rate in floats on
/// server `TIME`, one token taken, written back with `HMSET` and `EXPIRE` (twice the fill time).
/// It writes on refusal too and has no retry safety. Keys: bucket. Args: capacity
/// rate_per_second. Replies `{1, tokens_left}` admitted, `{0, tokens}` refused.
pub static TOKEN_BUCKET: Classic = Classic::new(
    "classic float token bucket (blog/StackOverflow hash form, server TIME)",
    include_str!("classic/token_bucket.lua"),
);

/// The common two-counter sliding window on server `TIME`: the current and previous fixed
/// windows' counters, the previous weighted by its overlap (floats); if the estimate leaves room,
/// `INCR` the current counter and `PEXPIRE` it for two windows. Builds both counters' names in
/// Lua from KEYS[1] and the window number (as commonly written, though keys built in Lua are
/// invisible to cluster routing; a hash-tagged KEYS[1] keeps them in its slot). Keys: prefix. Args:
/// window_ms limit. Replies `{1, count}` admitted, `{0, count}` refused.
pub static SLIDING_WINDOW: Classic = Classic::new(
    "classic two-counter sliding window (floats, server TIME)",
    include_str!("classic/sliding_window.lua"),
);

/// The classic fenced lock: `SET NX PX` of a plain token and, when it took
/// the lock, `INCR` of a fence counter (kept forever), in one script; no re-entry, so a resend
/// after a lost reply finds the lock held. Keys: lock fence. Args: token ttl_ms. Replies the
/// fence acquired, nil held. Its release is [`LOCK_RELEASE`].
pub static FENCED_ACQUIRE: Classic = Classic::new(
    "classic fenced lock (SET NX PX + INCR script, then compare-and-delete script)",
    include_str!("classic/fenced_acquire.lua"),
);

/// The classic lock release: compare-and-delete of a plain token. Keys: lock. Args: token.
/// Replies 1 released, 0 not the owner.
pub static LOCK_RELEASE: Classic = Classic::new(
    "classic lock release (compare-and-delete script)",
    include_str!("classic/lock_release.lua"),
);

/// Every reference script (loaded before the first phase).
pub static ALL: [&Classic; 8] = [
    &SLIDING_LOG,
    &GCRA,
    &TOKEN_BUCKET,
    &SLIDING_WINDOW,
    &FIXED_WINDOW,
    &INCR,
    &FENCED_ACQUIRE,
    &LOCK_RELEASE,
];

impl Classic {
    const fn new(name: &'static str, source: &'static str) -> Classic {
        Classic {
            name,
            source,
            sha1: OnceLock::new(),
        }
    }

    /// SHA1 of the source, as `SCRIPT LOAD` reports it.
    pub fn sha1(&self) -> &str {
        self.sha1
            .get_or_init(|| sha1_smol::Sha1::from(self.source).digest().to_string())
    }

    /// Loads the script on the server of `conn`.
    pub async fn load(&self, conn: &mut MultiplexedConnection) -> anyhow::Result<()> {
        let sha: String = redis::cmd("SCRIPT")
            .arg("LOAD")
            .arg(self.source)
            .query_async(conn)
            .await?;
        anyhow::ensure!(sha == self.sha1(), "{}: server SHA1 {sha}", self.name);
        Ok(())
    }

    /// One raw `EVALSHA`, its first integer: the classic rate limits answer `1` or `{1, ..}`
    /// when they admit, the increment its new value, the fenced acquire its fence. Fails on any
    /// other reply (the fenced acquire's nil when the lock is held).
    pub async fn eval(
        &self,
        conn: &mut MultiplexedConnection,
        keys: &[&str],
        args: &[Arg<'_>],
    ) -> anyhow::Result<i64> {
        let reply = send(conn, self.sha1(), keys, args).await?;
        let first = match &reply {
            redis::Value::Array(items) => items.first(),
            one => Some(one),
        };
        match first {
            Some(redis::Value::Int(n)) => Ok(*n),
            _ => anyhow::bail!("{}: expected an integer first, got {reply:?}", self.name),
        }
    }
}
