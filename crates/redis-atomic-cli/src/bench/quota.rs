//! The quota's benchmark: each task owns one counter bounded to `[0, 10^6]` and alternates a
//! bounded add of +1 (use) and -1 (refund), so every add is applied on both paths. Counters get
//! a one-hour TTL on creation (never extended, so it must outlast the run) and are deleted by
//! `cleanup`. A record is one counter with its TTL.

use super::{expect_status, BenchCtx, Workload};
use futures::future::BoxFuture;
use redis::aio::MultiplexedConnection;
use redis_atomic::quota::{Bounded, Bounds, Quotas};
use redis_atomic::script::registry::QUOTA_ADD;
use std::time::Duration;

const MAX: i64 = 1_000_000;
const TTL: Duration = Duration::from_secs(3600);

struct QuotaBench {
    ctx: BenchCtx,
    quotas: Quotas,
    bounds: Bounds,
}

pub(super) fn setup(ctx: BenchCtx) -> BoxFuture<'static, anyhow::Result<Box<dyn Workload>>> {
    Box::pin(async move {
        let bench = QuotaBench {
            quotas: Quotas::new(ctx.client.clone(), ctx.keyspace.clone()),
            bounds: Bounds::up_to(MAX)?,
            ctx,
        };
        Ok(Box::new(bench) as Box<dyn Workload>)
    })
}

fn delta(i: u64) -> i64 {
    if i % 2 == 0 {
        1
    } else {
        -1
    }
}

impl Workload for QuotaBench {
    fn cycle(&self) -> u64 {
        2
    }

    fn library(&self, task: usize, i: u64) -> BoxFuture<'_, anyhow::Result<()>> {
        Box::pin(async move {
            let name = format!("lib-{task}");
            let got = self
                .quotas
                .add(&name, delta(i), self.bounds, Some(TTL))
                .await?;
            anyhow::ensure!(matches!(got, Bounded::Applied { .. }), "add: {got:?}");
            Ok(())
        })
    }

    fn raw<'a>(
        &'a self,
        conn: &'a mut MultiplexedConnection,
        task: usize,
        i: u64,
    ) -> BoxFuture<'a, anyhow::Result<()>> {
        Box::pin(async move {
            let key = self.quotas.keys(&format!("raw-{task}"))?.value;
            let mut cmd = redis::cmd("EVALSHA");
            cmd.arg(QUOTA_ADD.sha1).arg(1).arg(&key);
            cmd.arg(delta(i)).arg(0).arg(MAX).arg("refuse");
            cmd.arg(TTL.as_millis() as u64);
            expect_status(cmd.query_async(conn).await?, "applied")
        })
    }

    fn record(&self) -> BoxFuture<'_, anyhow::Result<Vec<String>>> {
        Box::pin(async move {
            let name = "tenant-4b1c-9f0e-7a2d:api-calls";
            let got = self.quotas.add(name, 1, self.bounds, Some(TTL)).await?;
            anyhow::ensure!(matches!(got, Bounded::Applied { .. }), "add: {got:?}");
            Ok(vec![self.quotas.keys(name)?.value])
        })
    }

    fn cleanup(&self, tasks: usize) -> BoxFuture<'_, anyhow::Result<()>> {
        Box::pin(async move {
            let mut del = redis::cmd("UNLINK");
            for task in 0..tasks {
                for path in ["lib", "raw"] {
                    del.arg(self.quotas.keys(&format!("{path}-{task}"))?.value);
                }
            }
            del.arg(self.quotas.keys("tenant-4b1c-9f0e-7a2d:api-calls")?.value);
            self.ctx.client.command(&del).await?;
            Ok(())
        })
    }
}
