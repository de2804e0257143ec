//! The semaphore's benchmark: each task owns one semaphore (capacity 4, so it is never full)
//! and alternates acquire and release with its own holder token, so every decision succeeds on
//! both paths. The raw path releases with the fence its acquire returned. A record is a
//! semaphore with one live permit: its permits, holders and fence keys.

use super::{expect_status, BenchCtx, Workload};
use futures::future::BoxFuture;
use redis::aio::MultiplexedConnection;
use redis_atomic::lease::{OwnerToken, Release};
use redis_atomic::script::registry::{SemAcquireReply, SEM_ACQUIRE, SEM_RELEASE};
use redis_atomic::script::{FromReply, Reply};
use redis_atomic::semaphore::{Acquire, Permit, Semaphore};
use std::sync::Mutex;
use std::time::Duration;

const CAPACITY: u32 = 4;
const LEASE: Duration = Duration::from_secs(30);

struct SemBench {
    ctx: BenchCtx,
    token: OwnerToken,
    /// Each library task's permit between its acquire and its release.
    permits: Vec<Mutex<Option<Permit>>>,
    /// Each raw task's fence from its last acquire.
    fences: Vec<Mutex<String>>,
}

pub(super) fn setup(ctx: BenchCtx) -> BoxFuture<'static, anyhow::Result<Box<dyn Workload>>> {
    Box::pin(async move {
        let bench = SemBench {
            token: OwnerToken::random(),
            permits: (0..ctx.tasks).map(|_| Mutex::new(None)).collect(),
            fences: (0..ctx.tasks).map(|_| Mutex::new(String::new())).collect(),
            ctx,
        };
        Ok(Box::new(bench) as Box<dyn Workload>)
    })
}

impl SemBench {
    fn semaphore(&self, name: &str) -> anyhow::Result<Semaphore> {
        Ok(Semaphore::new(
            self.ctx.client.clone(),
            &self.ctx.keyspace,
            name,
            CAPACITY,
        )?)
    }

    /// The keys of semaphore `name` (permits, holders, fence), as the library names them.
    fn keys(&self, name: &str) -> anyhow::Result<[String; 3]> {
        let keys = self.semaphore(name)?.keys().clone();
        Ok([keys.permits, keys.holders, keys.fence])
    }
}

impl Workload for SemBench {
    fn cycle(&self) -> u64 {
        2
    }

    fn library(&self, task: usize, i: u64) -> BoxFuture<'_, anyhow::Result<()>> {
        Box::pin(async move {
            let sem = self.semaphore(&format!("lib-{task}"))?;
            let slot = &self.permits[task];
            if i % 2 == 0 {
                let got = sem.acquire_with_token(&self.token, LEASE).await?;
                let Acquire::Acquired(permit) = got else {
                    anyhow::bail!("acquire: {got:?}");
                };
                *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(permit);
            } else {
                let permit = slot.lock().unwrap_or_else(|p| p.into_inner()).take();
                let permit = permit.ok_or_else(|| anyhow::anyhow!("no open permit"))?;
                let got = permit.release().await?;
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
            let [permits, holders, fence_key] = self.keys(&format!("raw-{task}"))?;
            let fence = &self.fences[task];
            let mut cmd = redis::cmd("EVALSHA");
            if i % 2 == 0 {
                cmd.arg(SEM_ACQUIRE.sha1).arg(3);
                cmd.arg(&permits).arg(&holders).arg(&fence_key);
                cmd.arg(self.token.as_str())
                    .arg(CAPACITY)
                    .arg(LEASE.as_millis() as u64);
                let reply: redis::Value = cmd.query_async(conn).await?;
                let reply = SemAcquireReply::from_reply(Reply::parse(SEM_ACQUIRE.name, reply)?)?;
                let SemAcquireReply::Acquired { fence: issued, .. } = reply else {
                    anyhow::bail!("raw EVALSHA: expected acquired, got {reply:?}");
                };
                *fence.lock().unwrap_or_else(|p| p.into_inner()) = issued.to_string();
                Ok(())
            } else {
                let issued = fence.lock().unwrap_or_else(|p| p.into_inner()).clone();
                cmd.arg(SEM_RELEASE.sha1).arg(2).arg(&permits).arg(&holders);
                cmd.arg(self.token.as_str()).arg(issued);
                expect_status(cmd.query_async(conn).await?, "released")
            }
        })
    }

    fn record(&self) -> BoxFuture<'_, anyhow::Result<Vec<String>>> {
        Box::pin(async move {
            let name = "pool-4b1c-9f0e-7a2d";
            let got = self.semaphore(name)?.acquire(LEASE).await?;
            anyhow::ensure!(matches!(got, Acquire::Acquired(_)), "acquire: {got:?}");
            Ok(self.keys(name)?.to_vec())
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
            del.arg(&self.keys("pool-4b1c-9f0e-7a2d")?[..]);
            self.ctx.client.command(&del).await?;
            Ok(())
        })
    }
}
