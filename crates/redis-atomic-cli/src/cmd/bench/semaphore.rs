//! The semaphore's benchmark: each task owns one semaphore (capacity 4, so it is never full)
//! and alternates acquire and release with the run's token, so every decision succeeds on both
//! paths. The library releases through the permit it got; the raw path with the fence its
//! acquire returned. A record is a semaphore with one live permit: its permits, holders and
//! fence keys.

use super::workload::{evalsha, ms, BenchCtx, Conn, Decided, Path, PerTask, Record, Workload};
use redis_atomic::lease::Release;
use redis_atomic::script::registry::{SemAcquireReply, SemReleaseReply, SEM_ACQUIRE, SEM_RELEASE};
use redis_atomic::semaphore::{Acquire, Permit, Semaphore, SemaphoreConfig};
use redis_atomic::{Arg, Fence};
use std::time::Duration;

const CAPACITY: u32 = 4;
const LEASE: Duration = Duration::from_secs(30);

struct SemBench {
    ctx: BenchCtx,
    /// Each task's semaphore, per path.
    lib: Vec<Semaphore>,
    raw: Vec<Semaphore>,
    /// Each library task's permit between its acquire and its release.
    permits: PerTask<Option<Permit>>,
    /// Each raw task's fence from its last acquire.
    fences: PerTask<Option<Fence>>,
}

pub(super) fn setup(ctx: BenchCtx) -> anyhow::Result<Box<dyn Workload>> {
    let per_task = |path: Path| -> anyhow::Result<Vec<Semaphore>> {
        (0..ctx.tasks)
            .map(|task| semaphore(&ctx, &format!("{}-{task}", path.name())))
            .collect()
    };
    Ok(Box::new(SemBench {
        lib: per_task(Path::Library)?,
        raw: per_task(Path::Raw)?,
        permits: PerTask::new(ctx.tasks),
        fences: PerTask::new(ctx.tasks),
        ctx,
    }))
}

fn semaphore(ctx: &BenchCtx, name: &str) -> anyhow::Result<Semaphore> {
    Ok(Semaphore::new(
        ctx.client.clone(),
        &ctx.keyspace,
        name,
        SemaphoreConfig::new(CAPACITY),
    )?)
}

impl Workload for SemBench {
    fn cycle(&self) -> u64 {
        2
    }

    fn library(&self, task: usize, i: u64) -> Decided<'_> {
        Box::pin(async move {
            if i % 2 == 0 {
                let got = self.lib[task]
                    .acquire_with_token(&self.ctx.token, LEASE)
                    .await?;
                self.permits
                    .put(task, expect!(got, Acquire::Acquired(p) => p));
            } else {
                let permit = self.permits.take(task)?;
                expect!(permit.release().await?, Release::Released { .. });
            }
            Ok(())
        })
    }

    fn raw<'a>(&'a self, conn: &'a mut Conn, task: usize, i: u64) -> Decided<'a> {
        Box::pin(async move {
            let k = self.raw[task].keys();
            let token = self.ctx.token.as_str().into();
            if i % 2 == 0 {
                let keys = [k.permits.as_str(), &k.holders, &k.fence];
                let args = [token, Arg::Int(i64::from(CAPACITY)), ms(LEASE)];
                let got = evalsha(conn, &SEM_ACQUIRE, keys, args).await?;
                let fence = expect!(got, SemAcquireReply::Acquired { fence, .. } => fence);
                self.fences.put(task, fence);
            } else {
                let fence = Arg::Int(i64::try_from(self.fences.take(task)?.0)?);
                let keys = [k.permits.as_str(), &k.holders];
                let got = evalsha(conn, &SEM_RELEASE, keys, [token, fence]).await?;
                expect!(got, SemReleaseReply::Released { .. });
            }
            Ok(())
        })
    }

    fn record(&self) -> Record<'_> {
        Box::pin(async move {
            let sem = semaphore(&self.ctx, "pool-4b1c-9f0e-7a2d")?;
            expect!(sem.acquire(LEASE).await?, Acquire::Acquired(_));
            let k = sem.keys();
            Ok(vec![k.permits.clone(), k.holders.clone(), k.fence.clone()])
        })
    }
}
