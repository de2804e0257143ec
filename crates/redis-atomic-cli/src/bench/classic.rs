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

/// Seed 000 §10's sliding log, reading the server's clock instead of the client's (member
/// `<now>-<count>` stands in for the seed's unique request id). Keys: log. Args: window_ms limit.
/// Replies `{1, count}` admitted, `{0, count}` refused.
pub static SLIDING_LOG: Classic = Classic::new(
    "classic sliding log (seed 000 §10, server TIME)",
    include_str!("classic/sliding_log.lua"),
);

/// The widely copied float GCRA (redis-gcra style) on server `TIME`. Keys: state. Args: rate
/// period_s burst. Replies `{1, 0}` admitted, `{0, wait_s}` refused.
pub static GCRA: Classic = Classic::new(
    "classic float GCRA (redis-gcra style, server TIME)",
    include_str!("classic/gcra.lua"),
);

/// Seed 000 §7's fixed window: `INCR`, `EXPIRE` on the first hit, compare. Keys: counter.
/// Args: window_s limit. Replies 1 admitted, 0 refused (the refused hit is still counted).
pub static FIXED_WINDOW: Classic = Classic::new(
    "classic fixed window (seed 000 §7, INCR + EXPIRE)",
    include_str!("classic/fixed_window.lua"),
);

/// Rung 5 of the ladder for a counter: `GET`, add one, `SET`, as one script (the same
/// read-modify-write a CAS closure does). Keys: counter. Replies the new value.
pub static INCR: Classic = Classic::new(
    "one-script GET/SET increment (rung 5)",
    include_str!("classic/incr.lua"),
);

/// Seed 000 §8's lock release: compare-and-delete of a plain token (its acquire is `SET NX PX`,
/// no script). Keys: lock. Args: token. Replies 1 released, 0 not the owner.
pub static LOCK_RELEASE: Classic = Classic::new(
    "classic lock (seed 000 §8: SET NX PX + compare-and-delete script)",
    include_str!("classic/lock_release.lua"),
);

/// Every reference script (loaded before the first phase).
pub static ALL: [&Classic; 5] = [&SLIDING_LOG, &GCRA, &FIXED_WINDOW, &INCR, &LOCK_RELEASE];

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

    /// One raw `EVALSHA`, its first integer: the classic rate limits answer `{1, ..}` when
    /// they admit, the increment its new value. Fails on any other reply.
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
