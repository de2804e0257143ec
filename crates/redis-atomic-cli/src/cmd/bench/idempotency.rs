//! The idempotency benchmark: each task alternates `begin` on a fresh key (a claim) and
//! `complete` of that claim with a 512-byte response — the two decisions of a first request.
//! The raw path completes with the generation its begin was issued. A record is a completed key
//! with that response. Records get a 60 s TTL (and the run deletes its namespace anyway).

use super::workload::{evalsha, ms, BenchCtx, Conn, Decided, Path, PerTask, Record, Workload};
use redis_atomic::idempotency::{
    Begin, Claim, Fingerprint, Idempotency, IdempotencyConfig, Outcome, Response,
};
use redis_atomic::script::registry::{
    IdemBeginReply, IdemCompleteReply, IDEM_BEGIN, IDEM_COMPLETE,
};
use redis_atomic::{Arg, Fence};
use std::time::Duration;

const TTL: Duration = Duration::from_secs(60);
const LEASE: Duration = Duration::from_secs(30);
const BODY: usize = 512;
/// A fingerprint's shape, for the raw path (the library hashes the request).
const FINGERPRINT: &str = "0123456789abcdef0123456789abcdef";

struct IdemBench {
    ctx: BenchCtx,
    store: Idempotency,
    body: Response,
    /// Each library task's open claim between its begin and its complete.
    claims: PerTask<Option<Claim>>,
    /// Each raw task's generation from its last begin (the complete must name it).
    generations: PerTask<Option<Fence>>,
}

pub(super) fn setup(ctx: BenchCtx) -> anyhow::Result<Box<dyn Workload>> {
    let config = IdempotencyConfig::default().result_ttl(TTL).ttl(LEASE);
    Ok(Box::new(IdemBench {
        store: Idempotency::new(ctx.client.clone(), ctx.keyspace.clone()).with_config(config)?,
        body: Response::new(201, vec![b'x'; BODY]),
        claims: PerTask::new(ctx.tasks),
        generations: PerTask::new(ctx.tasks),
        ctx,
    }))
}

/// The request key of task `task`'s `i`-th call (begin and complete share one).
fn request(path: Path, task: usize, i: u64) -> String {
    format!("{}-{task}-{}", path.name(), i / 2)
}

impl Workload for IdemBench {
    fn cycle(&self) -> u64 {
        2
    }

    fn library(&self, task: usize, i: u64) -> Decided<'_> {
        Box::pin(async move {
            if i % 2 == 0 {
                let key = request(Path::Library, task, i);
                let fp = Fingerprint::of(&[key.as_bytes()]);
                let begun = self.store.begin("bench", key.as_bytes(), fp).await?;
                let claim = expect!(begun, Begin::Claimed(claim) => claim);
                self.claims.put(task, claim);
            } else {
                let claim = self.claims.take(task)?;
                expect!(claim.complete(&self.body).await?, Outcome::Stored);
            }
            Ok(())
        })
    }

    fn raw<'a>(&'a self, conn: &'a mut Conn, task: usize, i: u64) -> Decided<'a> {
        Box::pin(async move {
            let key = request(Path::Raw, task, i);
            let record = self.store.keys("bench", key.as_bytes())?.record;
            let token = self.ctx.token.as_str().into();
            if i % 2 == 0 {
                let args = [token, FINGERPRINT.into(), ms(LEASE), ms(TTL)];
                let got = evalsha(conn, &IDEM_BEGIN, [&record], args).await?;
                let g = expect!(got, IdemBeginReply::Claimed { fence, .. } => fence);
                self.generations.put(task, g);
            } else {
                let generation = Arg::Int(i64::try_from(self.generations.take(task)?.0)?);
                let response = vec![b'x'; BODY + 8]; // the body and its encoding's header
                let args = [
                    token,
                    generation,
                    "completed".into(),
                    response.as_slice().into(),
                    ms(TTL),
                ];
                let got = evalsha(conn, &IDEM_COMPLETE, [&record], args).await?;
                expect!(got, IdemCompleteReply::Stored);
            }
            Ok(())
        })
    }

    fn record(&self) -> Record<'_> {
        Box::pin(async move {
            let key = b"a-typical-uuid-4b1c-9f0e-7a2d";
            let begun = self
                .store
                .begin("tenant-1", key, Fingerprint::of(&[key]))
                .await?;
            let claim = expect!(begun, Begin::Claimed(claim) => claim);
            expect!(claim.complete(&self.body).await?, Outcome::Stored);
            Ok(vec![self.store.keys("tenant-1", key)?.record])
        })
    }
}
