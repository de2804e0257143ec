//! The rate limiter's benchmarks: each task consumes 1 unit for its own identity (one rate-limited
//! user per task, no request id), on a limit high enough that nothing is ever refused, so every
//! decision is an admission that writes the limit's state on both paths (a refusal only reads).
//! Three entries: GCRA (the bucket algorithms' script shape), a fixed window (the cheapest) and
//! the sliding log (the costliest: a sorted set trimmed on every decision).
//! A record is one identity's limit state; it expires on its own (the scripts set TTLs).

use super::{expect_status, BenchCtx, Workload};
use futures::future::BoxFuture;
use redis::aio::MultiplexedConnection;
use redis_atomic::ratelimit::{Limit, RateLimiter};
use redis_atomic::script::registry::{RL_FIXED_WINDOW, RL_GCRA, RL_SLIDING_LOG};
use redis_atomic::script::ScriptDef;
use std::time::Duration;

struct RateBench {
    limiter: RateLimiter,
    limit: Limit,
    script: &'static ScriptDef,
}

/// GCRA, 10^6 per second (burst 10^6): never refused at the rates a task reaches.
pub(super) fn setup_gcra(ctx: BenchCtx) -> BoxFuture<'static, anyhow::Result<Box<dyn Workload>>> {
    Box::pin(async move {
        let limit = Limit::gcra(1_000_000, Duration::from_secs(1))?;
        Ok(RateBench::boxed(ctx, limit, &RL_GCRA.def))
    })
}

/// A fixed window of 10^9 per minute: never refused.
pub(super) fn setup_fixed_window(
    ctx: BenchCtx,
) -> BoxFuture<'static, anyhow::Result<Box<dyn Workload>>> {
    Box::pin(async move {
        let limit = Limit::fixed_window(1_000_000_000, Duration::from_secs(60))?;
        Ok(RateBench::boxed(ctx, limit, &RL_FIXED_WINDOW.def))
    })
}

/// A sliding log of 10 000 per 100 ms (its largest limit): never refused at the rates a task
/// reaches (under 2 000 per second each here), so each decision trims, counts and adds.
pub(super) fn setup_sliding_log(
    ctx: BenchCtx,
) -> BoxFuture<'static, anyhow::Result<Box<dyn Workload>>> {
    Box::pin(async move {
        let limit = Limit::sliding_log(10_000, Duration::from_millis(100))?;
        Ok(RateBench::boxed(ctx, limit, &RL_SLIDING_LOG.def))
    })
}

impl RateBench {
    fn boxed(ctx: BenchCtx, limit: Limit, script: &'static ScriptDef) -> Box<dyn Workload> {
        let limiter = RateLimiter::new(ctx.client.clone(), ctx.keyspace.clone(), limit.clone());
        Box::new(RateBench {
            limiter,
            limit,
            script,
        })
    }
}

impl Workload for RateBench {
    fn cycle(&self) -> u64 {
        1
    }

    fn library(&self, task: usize, _i: u64) -> BoxFuture<'_, anyhow::Result<()>> {
        Box::pin(async move {
            let got = self.limiter.consume(&format!("user-lib-{task}"), 1).await?;
            anyhow::ensure!(got.is_allowed(), "consume: {got:?}");
            Ok(())
        })
    }

    fn raw<'a>(
        &'a self,
        conn: &'a mut MultiplexedConnection,
        task: usize,
        _i: u64,
    ) -> BoxFuture<'a, anyhow::Result<()>> {
        Box::pin(async move {
            let state = self
                .limiter
                .keys(&format!("user-raw-{task}"), None)?
                .limits
                .remove(0);
            let l = &self.limit;
            let mut cmd = redis::cmd("EVALSHA");
            cmd.arg(self.script.sha1).arg(1).arg(&state);
            cmd.arg(1)
                .arg(l.limit())
                .arg(l.period_us())
                .arg(l.burst())
                .arg("");
            expect_status(cmd.query_async(conn).await?, "allowed")
        })
    }

    fn record(&self) -> BoxFuture<'_, anyhow::Result<Vec<String>>> {
        Box::pin(async move {
            let identity = "api-key-4b1c-9f0e-7a2d";
            let got = self.limiter.consume(identity, 1).await?;
            anyhow::ensure!(got.is_allowed(), "consume: {got:?}");
            Ok(self.limiter.keys(identity, None)?.limits)
        })
    }

    fn cleanup(&self, _tasks: usize) -> BoxFuture<'_, anyhow::Result<()>> {
        Box::pin(async { Ok(()) })
    }
}
