//! The broken limiter `--sabotage` runs: each algorithm's own script, as the library ships it,
//! with one line added before its check: `if now % 2 == 0 then cost = 0 end`. On every other
//! request (by the parity of the server's µs) it forgets the cost: it admits whenever the limit
//! has not been overrun yet, and charges nothing, so the state never fills and a busy identity
//! gets about half its requests through. A real over-admission, made by a real script on the
//! server, with the library's reply shape; each row's checker must flag it many times. The
//! anchored window reads no clock, so its line reads one to pick the requests whose cost (its
//! `INCRBY` increment) it forgets.

use super::super::CheckResult;
use redis_atomic::ratelimit::{Algorithm, RateLimiter};
use redis_atomic::script::registry::{
    RlFixedWindowReply, RL_ANCHORED_WINDOW, RL_FIXED_WINDOW, RL_GCRA, RL_SLIDING_LOG,
    RL_SLIDING_WINDOW, RL_TOKEN_BUCKET,
};
use redis_atomic::script::{FromReply, Reply, ScriptDef};
use redis_atomic::{Client, Error};
use std::time::Duration;

/// Where the added line goes: the one line every single-limit script has between its clock and
/// its algorithm's check.
const ANCHOR: &str = "local key, ok, remaining, reset, retry, w1, w2 = KEYS[1]";
/// The sabotage.
const FORGET_COST: &str = "if now % 2 == 0 then cost = 0 end\n";
/// The anchored window's: before its one write, on the parity of the server's µs.
const ANCHORED_ANCHOR: &str = "local count = redis.pcall('INCRBY', key, cost)";
const ANCHORED_FORGET: &str = "if redis.call('TIME')[2] % 2 == 0 then cost = '0' end\n";

/// A limiter's script with the sabotage, and what to send it.
pub(super) struct Sabotaged {
    def: &'static ScriptDef,
    source: String,
    key: String,
    args: Vec<String>,
}

impl Sabotaged {
    /// The sabotaged script of `limiter`'s one limit, for `identity`.
    pub(super) fn new(limiter: &RateLimiter, identity: &str) -> CheckResult<Sabotaged> {
        let limit = &limiter.policy().limits()[0];
        let (def, anchor, line) = match limit.algorithm() {
            Algorithm::FixedWindow => (&RL_FIXED_WINDOW.def, ANCHOR, FORGET_COST),
            Algorithm::AnchoredWindow => {
                (&RL_ANCHORED_WINDOW.def, ANCHORED_ANCHOR, ANCHORED_FORGET)
            }
            Algorithm::SlidingLog => (&RL_SLIDING_LOG.def, ANCHOR, FORGET_COST),
            Algorithm::SlidingWindow => (&RL_SLIDING_WINDOW.def, ANCHOR, FORGET_COST),
            Algorithm::TokenBucket => (&RL_TOKEN_BUCKET.def, ANCHOR, FORGET_COST),
            _ => (&RL_GCRA.def, ANCHOR, FORGET_COST),
        };
        ensure!(
            def.source.matches(anchor).count() == 1,
            "{}: no single `{anchor}` line to sabotage",
            def.name
        );
        let source = def.source.replacen(anchor, &format!("{line}{anchor}"), 1);
        let key = limiter.keys(identity, None)?.limits.remove(0);
        // The library's arguments: cost, limit, period_us, burst, test clock (none); the
        // anchored window's: cost, limit, period_ms.
        let args = match limit.algorithm() {
            Algorithm::AnchoredWindow => vec![
                "1".to_string(),
                limit.limit().to_string(),
                limit.period_ms().to_string(),
            ],
            _ => vec![
                "1".to_string(),
                limit.limit().to_string(),
                limit.period_us().to_string(),
                limit.burst().to_string(),
                String::new(),
            ],
        };
        Ok(Sabotaged {
            def,
            source,
            key,
            args,
        })
    }

    /// One decision: admitted?, and the reply's `reset`. The six scripts share one `returns:`
    /// line, so the fixed window's generated reply type decodes each.
    pub(super) async fn decide(&self, client: &Client) -> Result<(bool, Duration), Error> {
        let mut eval = redis::cmd("EVAL");
        eval.arg(&self.source).arg(1).arg(&self.key).arg(&self.args);
        let reply = client.command(&eval).await?;
        let reply = Reply::parse(self.def.name, reply)?.declared(self.def.statuses);
        Ok(match RlFixedWindowReply::from_reply(reply)? {
            RlFixedWindowReply::Allowed { reset, .. } => (true, reset),
            RlFixedWindowReply::Limited { reset, .. } => (false, reset),
        })
    }
}
