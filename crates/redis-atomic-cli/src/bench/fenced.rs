//! The fenced write's benchmark: each task owns one resource and writes one value to it with a
//! fence that grows by one per call, so every write is applied on both paths. A record is a
//! resource after one write: its fence record and its data key.

use super::{expect_status, BenchCtx, Workload};
use futures::future::BoxFuture;
use redis::aio::MultiplexedConnection;
use redis_atomic::fenced::{Fenced, FencedWrites};
use redis_atomic::lease::Fence;
use redis_atomic::script::registry::FENCED_WRITE;
use redis_atomic::write::Write;

const VALUE: &[u8] = b"balance=1042";
/// The library's default retention of a fence record: 7 days.
const RETENTION_MS: u64 = 7 * 24 * 3600 * 1000;

struct FencedBench {
    ctx: BenchCtx,
    fenced: FencedWrites,
}

pub(super) fn setup(ctx: BenchCtx) -> BoxFuture<'static, anyhow::Result<Box<dyn Workload>>> {
    Box::pin(async move {
        let bench = FencedBench {
            fenced: FencedWrites::new(ctx.client.clone(), ctx.keyspace.clone()),
            ctx,
        };
        Ok(Box::new(bench) as Box<dyn Workload>)
    })
}

impl FencedBench {
    /// The fence record and the data key of `resource`.
    fn keys(&self, resource: &str) -> anyhow::Result<[String; 2]> {
        Ok([
            self.fenced.keys(resource)?.fence,
            self.fenced.key(resource, "account")?,
        ])
    }
}

impl Workload for FencedBench {
    fn cycle(&self) -> u64 {
        1
    }

    fn library(&self, task: usize, i: u64) -> BoxFuture<'_, anyhow::Result<()>> {
        Box::pin(async move {
            let resource = format!("lib-{task}");
            let [_, data] = self.keys(&resource)?;
            let got = self
                .fenced
                .fenced_write(&resource, Fence(i + 1), &[Write::set(data, VALUE)])
                .await?;
            anyhow::ensure!(matches!(got, Fenced::Applied { .. }), "write: {got:?}");
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
            let [record, data] = self.keys(&format!("raw-{task}"))?;
            let mut cmd = redis::cmd("EVALSHA");
            cmd.arg(FENCED_WRITE.sha1).arg(2).arg(&record).arg(&data);
            cmd.arg(i + 1)
                .arg(RETENTION_MS)
                .arg("set")
                .arg(1)
                .arg(VALUE);
            expect_status(cmd.query_async(conn).await?, "applied")
        })
    }

    fn record(&self) -> BoxFuture<'_, anyhow::Result<Vec<String>>> {
        Box::pin(async move {
            let resource = "account-4b1c-9f0e-7a2d";
            let keys = self.keys(resource)?;
            let got = self
                .fenced
                .fenced_write(resource, Fence(1), &[Write::set(keys[1].clone(), VALUE)])
                .await?;
            anyhow::ensure!(matches!(got, Fenced::Applied { .. }), "write: {got:?}");
            Ok(keys.to_vec())
        })
    }

    fn cleanup(&self, tasks: usize) -> BoxFuture<'_, anyhow::Result<()>> {
        Box::pin(async move {
            let mut del = redis::cmd("UNLINK");
            for task in 0..tasks {
                for path in ["lib", "raw"] {
                    del.arg(&self.keys(&format!("{path}-{task}"))?[..]);
                }
            }
            del.arg(&self.keys("account-4b1c-9f0e-7a2d")?[..]);
            self.ctx.client.command(&del).await?;
            Ok(())
        })
    }
}
