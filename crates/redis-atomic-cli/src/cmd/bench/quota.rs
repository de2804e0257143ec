//! The quota's benchmark: each task owns one counter bounded to `[0, 10^6]` and alternates a
//! bounded add of +1 (use) and -1 (refund), so every add is applied on both paths. Counters get
//! a one-hour TTL on creation (never extended, so it must outlast the run; the run deletes its
//! namespace anyway). A record is one counter with its TTL.

use super::workload::{evalsha, ms, BenchCtx, Conn, Decided, Path, Record, Workload};
use redis_atomic::quota::{Bounded, Bounds, Quotas};
use redis_atomic::script::registry::{QuotaAddReply, QUOTA_ADD};
use redis_atomic::Arg;
use std::time::Duration;

const MAX: i64 = 1_000_000;
const TTL: Duration = Duration::from_secs(3600);

struct QuotaBench {
    quotas: Quotas,
    bounds: Bounds,
}

pub(super) fn setup(ctx: BenchCtx) -> anyhow::Result<Box<dyn Workload>> {
    Ok(Box::new(QuotaBench {
        quotas: Quotas::new(ctx.client, ctx.keyspace),
        bounds: Bounds::up_to(MAX)?,
    }))
}

fn delta(i: u64) -> i64 {
    if i % 2 == 0 {
        1
    } else {
        -1
    }
}

fn counter(path: Path, task: usize) -> String {
    format!("{}-{task}", path.name())
}

impl Workload for QuotaBench {
    fn cycle(&self) -> u64 {
        2
    }

    fn library(&self, task: usize, i: u64) -> Decided<'_> {
        Box::pin(async move {
            let name = counter(Path::Library, task);
            let got = self
                .quotas
                .add(&name, delta(i), self.bounds, Some(TTL))
                .await?;
            expect!(got, Bounded::Applied { .. });
            Ok(())
        })
    }

    fn raw<'a>(&'a self, conn: &'a mut Conn, task: usize, i: u64) -> Decided<'a> {
        Box::pin(async move {
            let key = self.quotas.keys(&counter(Path::Raw, task), None)?.value;
            let (min, max) = (Arg::Int(self.bounds.min()), Arg::Int(self.bounds.max()));
            let args = [Arg::Int(delta(i)), min, max, "refuse".into(), ms(TTL)];
            let got = evalsha(conn, &QUOTA_ADD, [&key], args).await?;
            expect!(got, QuotaAddReply::Applied { .. });
            Ok(())
        })
    }

    fn record(&self) -> Record<'_> {
        Box::pin(async move {
            let name = "tenant-4b1c-9f0e-7a2d:api-calls";
            let got = self.quotas.add(name, 1, self.bounds, Some(TTL)).await?;
            expect!(got, Bounded::Applied { .. });
            Ok(vec![self.quotas.keys(name, None)?.value])
        })
    }
}
