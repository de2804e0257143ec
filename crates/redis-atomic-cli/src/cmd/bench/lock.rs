//! The lock's benchmarks. `lock`: each task owns one resource and alternates acquire and release,
//! so every decision succeeds and the two paths do the same work. `lock-extend`: each task holds
//! its lock (taken before each phase, unmeasured, with the run's token, so the same lock is the
//! task's own again in every round) and extends it. A record is a held lock: its lock and fence
//! keys. The library path releases and extends through the task's `LockGuard`, so it takes the
//! native command where the server has one (`DELIFEQ`, `SET IFEQ`; the header's `native:` line);
//! the raw path is `EVALSHA` of the scripts. `lock` has a reference path: the classic fenced
//! lock ([`classic::FENCED_ACQUIRE`], then [`classic::LOCK_RELEASE`]) on the same key layout.

use super::classic::{self, Classic};
use super::workload::{evalsha, ms, BenchCtx, Conn, Decided, Path, Record, Workload};
use redis_atomic::lease::{Extend, Fence, Release};
use redis_atomic::lock::{Acquire, LockGuard, LockKeys, Locks};
use redis_atomic::script::registry::{
    LockAcquireReply, LockExtendReply, LockReleaseReply, LOCK_ACQUIRE, LOCK_EXTEND, LOCK_RELEASE,
};
use std::time::Duration;

/// Lease of an acquire | release cycle.
const TTL: Duration = Duration::from_secs(30);
/// Lease of the extended locks: outlives any run.
const HELD: Duration = Duration::from_secs(600);

struct LockBench {
    ctx: BenchCtx,
    locks: Locks,
    extend: bool,
    /// Each task's held lock between its acquire and its release (or across extends). A std
    /// mutex: held only to take or put the guard, never across an await.
    guards: Vec<std::sync::Mutex<Option<LockGuard>>>,
    /// The raw path's fence of each task's lock (release and extend name the lease by it).
    raw_fences: Vec<std::sync::Mutex<Fence>>,
}

/// `lock`: acquire | release.
pub(super) fn cycle(ctx: BenchCtx) -> anyhow::Result<Box<dyn Workload>> {
    Ok(LockBench::boxed(ctx, false))
}

/// `lock-extend`: extend a held lock.
pub(super) fn extend(ctx: BenchCtx) -> anyhow::Result<Box<dyn Workload>> {
    Ok(LockBench::boxed(ctx, true))
}

/// A fence as the scripts' argument.
fn fence_arg(fence: Fence) -> anyhow::Result<redis_atomic::Arg<'static>> {
    Ok(redis_atomic::Arg::Int(i64::try_from(fence.0)?))
}

fn resource(path: Path, task: usize) -> String {
    format!("{}-{task}", path.name())
}

impl LockBench {
    fn boxed(ctx: BenchCtx, extend: bool) -> Box<dyn Workload> {
        let locks = Locks::new(ctx.client.clone(), ctx.keyspace.clone());
        let guards = (0..ctx.tasks).map(|_| Default::default()).collect();
        let raw_fences = (0..ctx.tasks)
            .map(|_| std::sync::Mutex::new(Fence(0)))
            .collect();
        Box::new(LockBench {
            ctx,
            locks,
            extend,
            guards,
            raw_fences,
        })
    }

    fn guard(&self, task: usize) -> std::sync::MutexGuard<'_, Option<LockGuard>> {
        self.guards[task].lock().unwrap_or_else(|p| p.into_inner())
    }

    fn raw_fence(&self, task: usize) -> std::sync::MutexGuard<'_, Fence> {
        self.raw_fences[task]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    fn keys(&self, path: Path, task: usize) -> anyhow::Result<LockKeys> {
        Ok(self.locks.keys(&resource(path, task))?)
    }
}

impl Workload for LockBench {
    fn cycle(&self) -> u64 {
        if self.extend {
            1
        } else {
            2
        }
    }

    fn prepare(&self, path: Path, _decisions: u64) -> Decided<'_> {
        Box::pin(async move {
            if !self.extend {
                return Ok(());
            }
            for task in 0..self.ctx.tasks {
                let (r, token) = (resource(path, task), &self.ctx.token);
                let got = self.locks.acquire_with_token(&r, token, HELD).await?;
                if path == Path::Library {
                    let g = expect!(got, Acquire::Acquired(g) => g);
                    *self.guard(task) = Some(g);
                } else {
                    *self.raw_fence(task) = expect!(got, Acquire::Acquired(g) => g.fence());
                }
            }
            Ok(())
        })
    }

    fn library(&self, task: usize, i: u64) -> Decided<'_> {
        Box::pin(async move {
            let (r, token) = (resource(Path::Library, task), &self.ctx.token);
            let held = self.guard(task).take();
            if self.extend {
                let mut g = held.ok_or_else(|| anyhow::anyhow!("lock-extend: no guard"))?;
                let got = g.extend(HELD).await?;
                *self.guard(task) = Some(g);
                expect!(got, Extend::Extended { .. });
            } else if i % 2 == 0 {
                let got = self.locks.acquire_with_token(&r, token, TTL).await?;
                *self.guard(task) = Some(expect!(got, Acquire::Acquired(g) => g));
            } else {
                let got = match held {
                    Some(g) => g.release().await?,
                    None => anyhow::bail!("lock: no guard to release"),
                };
                expect!(got, Release::Released { .. });
            }
            Ok(())
        })
    }

    fn raw<'a>(&'a self, conn: &'a mut Conn, task: usize, i: u64) -> Decided<'a> {
        Box::pin(async move {
            let k = self.keys(Path::Raw, task)?;
            let token = self.ctx.token.as_str().into();
            if self.extend {
                let fence = fence_arg(*self.raw_fence(task))?;
                let got = evalsha(conn, &LOCK_EXTEND, [&k.lock], [token, fence, ms(HELD)]).await?;
                expect!(got, LockExtendReply::Extended { .. });
            } else if i % 2 == 0 {
                let keys = [k.lock.as_str(), &k.fence];
                let got = evalsha(conn, &LOCK_ACQUIRE, keys, [token, ms(TTL)]).await?;
                *self.raw_fence(task) =
                    expect!(got, LockAcquireReply::Acquired { fence, .. } => fence);
            } else {
                let fence = fence_arg(*self.raw_fence(task))?;
                let got = evalsha(conn, &LOCK_RELEASE, [&k.lock], [token, fence]).await?;
                expect!(got, LockReleaseReply::Released { .. });
            }
            Ok(())
        })
    }

    fn sent_directly(&self) -> &'static [&'static str] {
        // The native extend is a client-sent `SET` (the scripts call `SET` too; acquires of
        // lock-extend happen before the phase).
        if self.extend {
            &["set"]
        } else {
            &[]
        }
    }

    fn reference_script(&self) -> Option<&'static Classic> {
        (!self.extend).then_some(&classic::FENCED_ACQUIRE)
    }

    /// The classic fenced lock: `SET lock token NX PX ttl` and `INCR fence` in one script, then
    /// the classic compare-and-delete script.
    fn reference<'a>(&'a self, conn: &'a mut Conn, task: usize, i: u64) -> Decided<'a> {
        Box::pin(async move {
            let k = self.keys(Path::Reference, task)?;
            let token = self.ctx.token.as_str();
            if i % 2 == 0 {
                let args = [token.into(), ms(TTL)];
                let fence = classic::FENCED_ACQUIRE
                    .eval(conn, &[&k.lock, &k.fence], &args)
                    .await?;
                anyhow::ensure!(fence >= 1, "classic fenced lock: fence {fence}");
            } else {
                let released = classic::LOCK_RELEASE
                    .eval(conn, &[&k.lock], &[token.into()])
                    .await?;
                anyhow::ensure!(released == 1, "classic lock: not released");
            }
            Ok(())
        })
    }

    fn record(&self) -> Record<'_> {
        Box::pin(async move {
            let resource = "order-4b1c-9f0e-7a2d";
            let got = self.locks.acquire(resource, TTL).await?;
            expect!(got, Acquire::Acquired(_));
            let k = self.locks.keys(resource)?;
            Ok(vec![k.lock, k.fence])
        })
    }
}
