//! CAS against the next rung up (`cas-1`, `cas-16`, `cas-64`): when to climb the ladder. Every
//! task of a path increments ONE hot key. The library path is `Cas::update` — `WATCH` and `GET`
//! in one round trip, then `MULTI`, `SET`, `EXEC` in a second (rung 4), retried on conflict
//! within 64 attempts and 5 s; the raw path sends the same `GET`/`SET` as one script,
//! `classic/incr.lua` (rung 5), which never conflicts. So `ratio` is CAS ÷ script, the library's
//! commands per decision count all five commands of every attempt (`GET` and `SET` counted back
//! in, see [`Workload::sent_directly`]), and the notes give the abort rate. A record is one
//! counter.

use super::classic::INCR;
use super::workload::{BenchCtx, Conflicts, Conn, Decided, Path, Record, Workload};
use redis_atomic::cas::{Cas, CasOutcome, Decision, Read};
use redis_atomic::write::Write;
use redis_atomic::{Keyspace, RetryPolicy};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// What one decision is (the same for every contender count).
pub(super) const DECISION: &str =
    "increment one hot key (library: CAS, WATCH/GET then MULTI/SET/EXEC, rung 4; raw: one script, rung 5)";

struct CasBench {
    cas: Cas,
    keyspace: Keyspace,
    aborted: AtomicU64,
    gave_up: AtomicU64,
}

pub(super) fn setup(ctx: BenchCtx) -> anyhow::Result<Box<dyn Workload>> {
    let policy = RetryPolicy::contention()
        .max_attempts(64)
        .deadline(Duration::from_secs(5));
    Ok(Box::new(CasBench {
        cas: Cas::new(ctx.client).with_policy(policy),
        keyspace: ctx.keyspace,
        aborted: AtomicU64::new(0),
        gave_up: AtomicU64::new(0),
    }))
}

impl CasBench {
    /// The benchmark's own counter (CAS works on the caller's keys): one per path, or `record`.
    fn counter(&self, name: &str) -> anyhow::Result<String> {
        Ok(self.keyspace.key("counter", 1, "hot", &[name])?)
    }

    /// One increment through the library; counts the attempts that aborted.
    async fn increment(&self, key: &str) -> anyhow::Result<()> {
        let mut attempts = 0u64;
        let out = self
            .cas
            .update(&[Read::get(key)], |s| {
                attempts += 1;
                let n = s.get::<Option<i64>>(0)?.unwrap_or(0) + 1;
                Ok(Decision::commit(vec![Write::set(key, n.to_string())], ()))
            })
            .await?;
        match out {
            CasOutcome::Committed(()) => attempts -= 1,
            CasOutcome::Conflict { .. } => {
                self.gave_up.fetch_add(1, Ordering::Relaxed);
            }
            other => anyhow::bail!("increment: {other:?}"),
        }
        self.aborted.fetch_add(attempts, Ordering::Relaxed);
        Ok(())
    }
}

impl Workload for CasBench {
    fn library(&self, _task: usize, _i: u64) -> Decided<'_> {
        Box::pin(async move { self.increment(&self.counter(Path::Library.name())?).await })
    }

    fn raw<'a>(&'a self, conn: &'a mut Conn, _task: usize, _i: u64) -> Decided<'a> {
        Box::pin(async move {
            let key = self.counter(Path::Raw.name())?;
            let n = INCR.eval(conn, &[&key], &[]).await?;
            anyhow::ensure!(n > 0, "increment returned {n}");
            Ok(())
        })
    }

    fn sent_directly(&self) -> &'static [&'static str] {
        &["get", "set"]
    }

    fn conflicts(&self) -> Conflicts {
        Conflicts {
            aborted: self.aborted.load(Ordering::Relaxed),
            gave_up: self.gave_up.load(Ordering::Relaxed),
        }
    }

    fn record(&self) -> Record<'_> {
        Box::pin(async move {
            let key = self.counter("record")?;
            self.increment(&key).await?;
            Ok(vec![key])
        })
    }
}
