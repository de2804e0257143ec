//! The idempotency benchmark: each task alternates `begin` on a fresh key (a claim) and
//! `complete` of that claim with a 512-byte response — the two decisions of a first request.
//! A record is a completed key with that response. Records get a 60 s TTL so a run against a
//! shared server leaves nothing behind for long.

use super::{expect_status, BenchCtx, Workload};
use futures::future::BoxFuture;
use redis::aio::MultiplexedConnection;
use redis_atomic::idempotency::{Begin, Claim, Fingerprint, IdemConfig, Idempotency, Response};
use redis_atomic::script::registry::{IdemBeginReply, IDEM_BEGIN, IDEM_COMPLETE};
use redis_atomic::script::{FromReply, Reply};
use std::sync::Mutex;
use std::time::Duration;

const TTL: Duration = Duration::from_secs(60);
const BODY: usize = 512;

struct IdemBench {
    store: Idempotency,
    body: Response,
    /// Each task's open claim between its begin and its complete.
    claims: Vec<Mutex<Option<Claim>>>,
    /// Each raw task's generation from its last begin (the complete must name it).
    generations: Vec<Mutex<u64>>,
}

pub(super) fn setup(ctx: BenchCtx) -> BoxFuture<'static, anyhow::Result<Box<dyn Workload>>> {
    Box::pin(async move {
        let config = IdemConfig::default().result_ttl(TTL);
        let bench = IdemBench {
            store: Idempotency::new(ctx.client.clone(), ctx.keyspace.clone(), config)?,
            body: Response::new(201, vec![b'x'; BODY]),
            claims: (0..ctx.tasks).map(|_| Mutex::new(None)).collect(),
            generations: (0..ctx.tasks).map(|_| Mutex::new(0)).collect(),
        };
        Ok(Box::new(bench) as Box<dyn Workload>)
    })
}

fn request(phase: &str, task: usize, i: u64) -> String {
    format!("{phase}-{task}-{}", i / 2)
}

impl Workload for IdemBench {
    fn cycle(&self) -> u64 {
        2
    }

    fn library(&self, task: usize, i: u64) -> BoxFuture<'_, anyhow::Result<()>> {
        Box::pin(async move {
            let slot = &self.claims[task];
            if i % 2 == 0 {
                let key = request("lib", task, i);
                let fp = Fingerprint::of(&[key.as_bytes()]);
                let Begin::Claimed(claim) = self.store.begin("bench", key.as_bytes(), fp).await?
                else {
                    anyhow::bail!("begin on a fresh key did not claim it");
                };
                *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(claim);
            } else {
                let claim = slot.lock().unwrap_or_else(|p| p.into_inner()).take();
                let claim = claim.ok_or_else(|| anyhow::anyhow!("no open claim"))?;
                claim.complete(&self.body).await?;
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
            let key = request("raw", task, i);
            let record = self.store.keys("bench", key.as_bytes())?.record;
            let token = format!("raw-token-{task}");
            let ttl = TTL.as_millis() as u64;
            let mut cmd = redis::cmd("EVALSHA");
            let generation = &self.generations[task];
            if i % 2 == 0 {
                let fp = "0123456789abcdef0123456789abcdef"; // a fingerprint's shape
                cmd.arg(IDEM_BEGIN.sha1).arg(1).arg(&record);
                cmd.arg(&token).arg(fp).arg(30_000).arg(ttl);
                let reply: redis::Value = cmd.query_async(conn).await?;
                let reply = IdemBeginReply::from_reply(Reply::parse(IDEM_BEGIN.name, reply)?)?;
                let IdemBeginReply::Claimed { generation: g, .. } = reply else {
                    anyhow::bail!("raw EVALSHA: expected claimed, got {reply:?}");
                };
                *generation.lock().unwrap_or_else(|p| p.into_inner()) = g.0;
                Ok(())
            } else {
                let gen = *generation.lock().unwrap_or_else(|p| p.into_inner());
                cmd.arg(IDEM_COMPLETE.sha1).arg(1).arg(&record).arg(&token);
                cmd.arg(gen)
                    .arg("completed")
                    .arg(vec![b'x'; BODY + 8])
                    .arg(ttl);
                expect_status(cmd.query_async(conn).await?, "stored")
            }
        })
    }

    fn record(&self) -> BoxFuture<'_, anyhow::Result<Vec<String>>> {
        Box::pin(async move {
            let key = b"a-typical-uuid-4b1c-9f0e-7a2d";
            let fp = Fingerprint::of(&[key]);
            let Begin::Claimed(claim) = self.store.begin("tenant-1", key, fp).await? else {
                anyhow::bail!("begin on a fresh key did not claim it");
            };
            claim.complete(&self.body).await?;
            Ok(vec![self.store.keys("tenant-1", key)?.record])
        })
    }

    fn cleanup(&self, _tasks: usize) -> BoxFuture<'_, anyhow::Result<()>> {
        Box::pin(async { Ok(()) })
    }
}
