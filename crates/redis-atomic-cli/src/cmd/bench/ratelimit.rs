//! The rate limiter's benchmarks: each task consumes 1 unit for its own identity (one
//! rate-limited user per task, no request id; with `--identities N`, each decision for one drawn
//! at random from N, as peers' benchmarks spread load over users), on limits high enough that
//! nothing is ever refused, so every decision is an admission that writes the limit's state on
//! both paths (a refusal only reads). One entry per algorithm (its own script, one key, five
//! arguments; the anchored window's three) and one for a policy of two limits (`rl_policy`).
//! Each algorithm adds a reference path: the classic script it replaces ([`super::classic`]:
//! INCR + EXPIRE for both fixed windows, the classic sorted-set sliding log, the float GCRA, the
//! float token bucket, the two-counter sliding window) on the same number of tasks and connections,
//! one key per identity of the same layout (the two-counter window derives its counters' names from
//! it). A record is one identity's limit state after 100 admissions (a sliding log then holds 100
//! entries).

use super::classic::{self, Classic};
use super::workload::{evalsha_dyn, send, BenchCtx, Conn, Decided, Path, Record, Workload};
use redis_atomic::ratelimit::{Algorithm, Limit, Policy, RateLimiter};
use redis_atomic::script::registry::{
    RlAnchoredWindowReply, RlFixedWindowReply, RlGcraReply, RlPolicyReply, RlSlidingLogReply,
    RlSlidingWindowReply, RlTokenBucketReply, RL_ANCHORED_WINDOW, RL_FIXED_WINDOW, RL_GCRA,
    RL_POLICY, RL_SLIDING_LOG, RL_SLIDING_WINDOW, RL_TOKEN_BUCKET,
};
use redis_atomic::script::{FromReply, Reply, ScriptDef};
use redis_atomic::Arg;
use std::marker::PhantomData;
use std::time::Duration;

const SECOND: Duration = Duration::from_secs(1);
/// Admissions in a record.
const RECORD_UNITS: usize = 100;

/// A rate-limit reply that says whether the request was admitted.
trait Admits: FromReply + std::fmt::Debug + Send + Sync + 'static {
    fn admitted(&self) -> bool;
}

macro_rules! admits {
    ($($reply:ident),*) => {$(
        impl Admits for $reply {
            fn admitted(&self) -> bool {
                matches!(self, $reply::Allowed { .. })
            }
        }
    )*};
}

admits!(
    RlAnchoredWindowReply,
    RlFixedWindowReply,
    RlGcraReply,
    RlPolicyReply,
    RlSlidingLogReply,
    RlSlidingWindowReply,
    RlTokenBucketReply
);

/// A classic script and its arguments (equivalent to the entry's limit).
type Reference = (&'static Classic, &'static [&'static str]);

struct RateBench<R: 'static> {
    reply: PhantomData<fn() -> R>,
    limiter: RateLimiter,
    /// The limit's own script (one key); `None` for a policy (`rl_policy`).
    script: Option<&'static ScriptDef>,
    /// The arguments the library sends (see `RateLimiter::run`).
    args: Vec<String>,
    reference: Option<Reference>,
    /// `--identities`: each decision's identity drawn from this many; `None`, one per task.
    identities: Option<u64>,
}

/// GCRA, 10^6 per second (burst 10^6), against the classic float GCRA with the same rate.
pub(super) fn gcra(ctx: BenchCtx) -> anyhow::Result<Box<dyn Workload>> {
    let limit = Limit::new(Algorithm::Gcra, 1_000_000, SECOND)?;
    let reference: Reference = (&classic::GCRA, &["1000000", "1", "1000000"]);
    single::<RlGcraReply>(ctx, limit, &RL_GCRA.def, Some(reference))
}

/// A fixed window of 10^9 per minute, against the classic INCR + EXPIRE with the same window
/// and limit.
pub(super) fn fixed_window(ctx: BenchCtx) -> anyhow::Result<Box<dyn Workload>> {
    let limit = Limit::new(Algorithm::FixedWindow, 1_000_000_000, 60 * SECOND)?;
    let reference: Reference = (&classic::FIXED_WINDOW, &["60", "1000000000"]);
    single::<RlFixedWindowReply>(ctx, limit, &RL_FIXED_WINDOW.def, Some(reference))
}

/// An anchored window of 10^9 per minute, against the same classic (INCR + EXPIRE), the
/// script it matches in mechanism with the defects taken out (refusals charged, no cost, no
/// reset, nothing validated).
pub(super) fn anchored_window(ctx: BenchCtx) -> anyhow::Result<Box<dyn Workload>> {
    let limit = Limit::new(Algorithm::AnchoredWindow, 1_000_000_000, 60 * SECOND)?;
    let reference: Reference = (&classic::FIXED_WINDOW, &["60", "1000000000"]);
    let script = &RL_ANCHORED_WINDOW.def;
    single::<RlAnchoredWindowReply>(ctx, limit, script, Some(reference))
}

/// A sliding log of 10 000 per 100 ms (its largest limit), against the classic sorted-set log with the
/// same window and limit. Under 2 000 per second per task here, so each decision trims, counts
/// and adds.
pub(super) fn sliding_log(ctx: BenchCtx) -> anyhow::Result<Box<dyn Workload>> {
    let limit = Limit::new(Algorithm::SlidingLog, 10_000, SECOND / 10)?;
    let reference: Reference = (&classic::SLIDING_LOG, &["100", "10000"]);
    single::<RlSlidingLogReply>(ctx, limit, &RL_SLIDING_LOG.def, Some(reference))
}

/// A sliding window of 10^6 per second (limit × period stays within its 2^52 bound), against
/// the classic two-counter window with the same window and limit.
pub(super) fn sliding_window(ctx: BenchCtx) -> anyhow::Result<Box<dyn Workload>> {
    let limit = Limit::new(Algorithm::SlidingWindow, 1_000_000, SECOND)?;
    let reference: Reference = (&classic::SLIDING_WINDOW, &["1000", "1000000"]);
    single::<RlSlidingWindowReply>(ctx, limit, &RL_SLIDING_WINDOW.def, Some(reference))
}

/// A token bucket of 10^6 per second (burst 10^6), against the classic float token bucket with
/// the same capacity and rate.
pub(super) fn token_bucket(ctx: BenchCtx) -> anyhow::Result<Box<dyn Workload>> {
    let limit = Limit::new(Algorithm::TokenBucket, 1_000_000, SECOND)?;
    let reference: Reference = (&classic::TOKEN_BUCKET, &["1000000", "1000000"]);
    single::<RlTokenBucketReply>(ctx, limit, &RL_TOKEN_BUCKET.def, Some(reference))
}

/// Two limits, GCRA 10^6 per second and a fixed window of 10^9 per day, through `rl_policy`.
pub(super) fn policy(ctx: BenchCtx) -> anyhow::Result<Box<dyn Workload>> {
    let policy = Policy::new(vec![
        Limit::gcra(1_000_000, SECOND)?,
        Limit::fixed_window(1_000_000_000, 86_400 * SECOND)?,
    ])?;
    let identities = ctx.identities;
    let limiter = RateLimiter::new(ctx.client.clone(), ctx.keyspace, policy);
    // rl_policy: cost, request id (none), request ttl µs, test clock (none), then per limit
    // algorithm, limit, period_us, burst.
    let ttl_us = limiter.request_ttl().as_micros().to_string();
    let mut args = vec!["1".to_string(), String::new(), ttl_us, String::new()];
    for l in limiter.policy().limits() {
        let code = l.algorithm().code().to_string();
        args.extend([code, l.limit().to_string(), l.period_us().to_string()]);
        args.push(l.burst().to_string());
    }
    Ok(Box::new(RateBench::<RlPolicyReply> {
        reply: PhantomData,
        limiter,
        script: None,
        args,
        reference: None,
        identities,
    }))
}

fn single<R: Admits>(
    ctx: BenchCtx,
    limit: Limit,
    script: &'static ScriptDef,
    reference: Option<Reference>,
) -> anyhow::Result<Box<dyn Workload>> {
    // The limit's own script: cost, limit, period_us, burst, test clock (none); the anchored
    // window's: cost, limit, period_ms (see `RateLimiter::run`).
    let mut args = vec!["1".to_string(), limit.limit().to_string()];
    match limit.algorithm() {
        Algorithm::AnchoredWindow => args.push(limit.period_ms().to_string()),
        _ => args.extend([
            limit.period_us().to_string(),
            limit.burst().to_string(),
            String::new(),
        ]),
    }
    let identities = ctx.identities;
    let limiter = RateLimiter::new(ctx.client.clone(), ctx.keyspace, limit);
    Ok(Box::new(RateBench::<R> {
        reply: PhantomData,
        limiter,
        script: Some(script),
        args,
        reference,
        identities,
    }))
}

/// The identity of task `task`'s next decision on `path` (paths never share one): the task's own,
/// or with `identities`, one drawn at random from that many.
fn identity(path: Path, task: usize, identities: Option<u64>) -> String {
    match identities {
        None => format!("user-{}-{task}", path.name()),
        Some(n) => format!("user-{}-{}", path.name(), rand::random_range(0..n.max(1))),
    }
}

impl<R: Admits> RateBench<R> {
    fn identity(&self, path: Path, task: usize) -> String {
        identity(path, task, self.identities)
    }

    /// What the library sends for `identity`, as one raw `EVALSHA`: whether it admitted.
    async fn raw_consume(&self, conn: &mut Conn, identity: &str) -> anyhow::Result<bool> {
        let args: Vec<Arg<'_>> = self.args.iter().map(Arg::from).collect();
        if let Some(script) = self.script {
            let state = self.limiter.keys(identity, None)?.limits.remove(0);
            let value = send(conn, script.sha1, &[state.as_str()], &args).await?;
            return Ok(R::from_reply(Reply::parse(script.name, value)?)?.admitted());
        }
        // Without a request id rl_policy never touches KEYS[1]: any request key of the slot.
        let k = self.limiter.keys(identity, Some("-"))?;
        let first = k.request.ok_or_else(|| anyhow::anyhow!("no request key"))?;
        let mut keys = vec![first.as_str()];
        keys.extend(k.limits.iter().map(String::as_str));
        Ok(evalsha_dyn(conn, &RL_POLICY, &keys, &args)
            .await?
            .admitted())
    }
}

impl<R: Admits> Workload for RateBench<R> {
    fn library(&self, task: usize, _i: u64) -> Decided<'_> {
        Box::pin(async move {
            let got = self
                .limiter
                .consume(&self.identity(Path::Library, task), 1)
                .await?;
            anyhow::ensure!(got.is_allowed(), "consume: {got:?}");
            Ok(())
        })
    }

    fn raw<'a>(&'a self, conn: &'a mut Conn, task: usize, _i: u64) -> Decided<'a> {
        Box::pin(async move {
            let admitted = self
                .raw_consume(conn, &self.identity(Path::Raw, task))
                .await?;
            anyhow::ensure!(admitted, "raw consume refused");
            Ok(())
        })
    }

    fn reference_script(&self) -> Option<&'static Classic> {
        self.reference.map(|(classic, _)| classic)
    }

    fn reference<'a>(&'a self, conn: &'a mut Conn, task: usize, _i: u64) -> Decided<'a> {
        Box::pin(async move {
            let (classic, args) = self
                .reference
                .ok_or_else(|| anyhow::anyhow!("no reference script"))?;
            // One key per identity, of the limiter's own layout (the classic keeps its state
            // there in its own format).
            let state = &self
                .limiter
                .keys(&self.identity(Path::Reference, task), None)?
                .limits[0];
            let args: Vec<Arg<'_>> = args.iter().map(|a| Arg::from(*a)).collect();
            let admitted = classic.eval(conn, &[state], &args).await?;
            anyhow::ensure!(admitted == 1, "{}: refused", classic.name);
            Ok(())
        })
    }

    fn record(&self) -> Record<'_> {
        Box::pin(async move {
            let identity = "api-key-4b1c-9f0e-7a2d";
            for _ in 0..RECORD_UNITS {
                let got = self.limiter.consume(identity, 1).await?;
                anyhow::ensure!(got.is_allowed(), "consume: {got:?}");
            }
            Ok(self.limiter.keys(identity, None)?.limits)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{identity, Path};
    use std::collections::BTreeSet;

    /// One identity per task by default; with `--identities 3`, draws from exactly three (all
    /// three seen in 1 000 draws: missing one has probability 3 × (2/3)^1000), per path.
    #[test]
    fn identities_per_task_or_drawn_from_n() {
        assert_eq!(identity(Path::Raw, 7, None), "user-raw-7");
        let drawn: BTreeSet<String> = (0..1000)
            .map(|t| identity(Path::Library, t, Some(3)))
            .collect();
        let want: BTreeSet<String> = (0..3).map(|i| format!("user-library-{i}")).collect();
        assert_eq!(drawn, want);
        assert_eq!(identity(Path::Reference, 5, Some(1)), "user-reference-0");
    }
}
