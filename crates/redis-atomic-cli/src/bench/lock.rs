//! The lock's benchmark: each task owns one resource and alternates acquire and release, so
//! every decision succeeds (the library path errors if one does not) and the two paths do the
//! same work. A record is a held lock: its lock key and its fence key.

use super::{expect_status, BenchCtx, Workload};
use futures::future::BoxFuture;
use redis::aio::MultiplexedConnection;
use redis_atomic::lease::{OwnerToken, Release};
use redis_atomic::lock::{Acquire, Locks};
use redis_atomic::script::registry::{LOCK_ACQUIRE, LOCK_RELEASE};
use std::time::Duration;

const TTL: Duration = Duration::from_secs(30);

struct LockBench {
    locks: Locks,
    ctx: BenchCtx,
    token: OwnerToken,
}

pub(super) fn setup(ctx: BenchCtx) -> BoxFuture<'static, anyhow::Result<Box<dyn Workload>>> {
    Box::pin(async move {
        let bench = LockBench {
            locks: Locks::new(ctx.client.clone(), ctx.keyspace.clone()),
            ctx,
            token: OwnerToken::random(),
        };
        Ok(Box::new(bench) as Box<dyn Workload>)
    })
}

impl LockBench {
    fn resource(&self, phase: &str, task: usize) -> String {
        format!("{phase}-{task}")
    }

    fn keys(&self, resource: &str) -> anyhow::Result<[String; 2]> {
        let ks = &self.ctx.keyspace;
        Ok([
            ks.key("lock", 1, resource, &[])?,
            ks.key("lock", 1, resource, &["fence"])?,
        ])
    }
}

impl Workload for LockBench {
    fn cycle(&self) -> u64 {
        2
    }

    fn library(&self, task: usize, i: u64) -> BoxFuture<'_, anyhow::Result<()>> {
        Box::pin(async move {
            let resource = self.resource("lib", task);
            if i % 2 == 0 {
                let got = self
                    .locks
                    .acquire_with_token(&resource, &self.token, TTL)
                    .await?;
                anyhow::ensure!(matches!(got, Acquire::Acquired(_)), "acquire: {got:?}");
            } else {
                let got = self.locks.release(&resource, &self.token).await?;
                anyhow::ensure!(matches!(got, Release::Released { .. }), "release: {got:?}");
            }
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
            let [lock, fence] = self.keys(&self.resource("raw", task))?;
            let mut cmd = redis::cmd("EVALSHA");
            let want = if i % 2 == 0 {
                cmd.arg(LOCK_ACQUIRE.sha1).arg(2).arg(&lock).arg(&fence);
                cmd.arg(self.token.as_str()).arg(TTL.as_millis() as u64);
                "acquired"
            } else {
                cmd.arg(LOCK_RELEASE.sha1)
                    .arg(1)
                    .arg(&lock)
                    .arg(self.token.as_str());
                "released"
            };
            expect_status(cmd.query_async(conn).await?, want)
        })
    }

    fn record(&self) -> BoxFuture<'_, anyhow::Result<Vec<String>>> {
        Box::pin(async move {
            let resource = "order-4b1c-9f0e-7a2d";
            let got = self.locks.acquire(resource, TTL).await?;
            anyhow::ensure!(matches!(got, Acquire::Acquired(_)), "acquire: {got:?}");
            Ok(self.keys(resource)?.to_vec())
        })
    }

    fn cleanup(&self, tasks: usize) -> BoxFuture<'_, anyhow::Result<()>> {
        Box::pin(async move {
            let mut del = redis::cmd("UNLINK");
            for phase in ["lib", "raw"] {
                for task in 0..tasks {
                    del.arg(&self.keys(&self.resource(phase, task))?[..]);
                }
            }
            del.arg(&self.keys("order-4b1c-9f0e-7a2d")?[..]);
            self.ctx.client.command(&del).await?;
            Ok(())
        })
    }
}
