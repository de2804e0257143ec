//! The idempotency check: several tasks send the same requests (same keys) at the same time; each
//! claimed request performs a side effect (HINCRBY of a per-key field). Violations: any key whose
//! effect count is not exactly 1, and any duplicate that ends with a response other than the
//! executor's.

use super::{CheckCtx, CheckReport};
use futures::future::BoxFuture;
use redis_atomic::idempotency::{Begin, Fingerprint, IdemConfig, Idempotency, Response, Stored};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const INVARIANT: &str = "each key's side effect happens exactly once";
const KEYS_PER_ROUND: u64 = 50;

pub(super) fn run(ctx: CheckCtx) -> BoxFuture<'static, anyhow::Result<CheckReport>> {
    Box::pin(async move {
        let store = Idempotency::new(
            ctx.client.clone(),
            ctx.keyspace.clone(),
            IdemConfig::default(),
        )?;
        let effects = ctx.keyspace.key("verify", 1, "idem", &["effects"])?;
        let ops = Arc::new(AtomicU64::new(0));
        let bad_replies = Arc::new(AtomicU64::new(0));
        let deadline = Instant::now() + ctx.duration;
        let mut round = 0u64;
        let mut keys = 0u64;
        while Instant::now() < deadline {
            let mut tasks = Vec::new();
            for _ in 0..ctx.concurrency.max(2) {
                let (ctx, store, effects) = (ctx.clone(), store.clone(), effects.clone());
                let (ops, bad) = (ops.clone(), bad_replies.clone());
                tasks.push(tokio::spawn(async move {
                    for k in 0..KEYS_PER_ROUND {
                        let key = format!("r{round}-k{k}");
                        let r = send(&ctx, &store, &effects, &key, &ops).await?;
                        if r.body_bytes() != Some(key.as_bytes()) {
                            bad.fetch_add(1, Ordering::SeqCst);
                        }
                        ctx.progress.inc(1);
                    }
                    anyhow::Ok(())
                }));
            }
            for t in tasks {
                t.await??;
            }
            round += 1;
            keys += KEYS_PER_ROUND;
        }
        let counts: HashMap<String, u64> = redis::from_redis_value(
            ctx.client
                .command(redis::cmd("HGETALL").arg(&effects))
                .await?,
        )?;
        let wrong = counts.values().filter(|c| **c != 1).count() as u64;
        let missing = keys.saturating_sub(counts.len() as u64);
        let violations = wrong + missing + bad_replies.load(Ordering::SeqCst);
        Ok(CheckReport::new(
            "idempotency",
            INVARIANT,
            ops.load(Ordering::SeqCst),
            violations,
        ))
    })
}

/// One client request with retries on "in progress", as an HTTP client would behave.
async fn send(
    ctx: &CheckCtx,
    store: &Idempotency,
    effects: &str,
    key: &str,
    ops: &AtomicU64,
) -> anyhow::Result<Response> {
    let fp = Fingerprint::of(&[key.as_bytes()]);
    for _ in 0..10_000 {
        ops.fetch_add(1, Ordering::Relaxed);
        match store.begin("verify", key.as_bytes(), fp).await? {
            Begin::Claimed(claim) => {
                let response = Response::new(200, key.as_bytes().to_vec());
                if !ctx.sabotage {
                    ctx.client
                        .command(redis::cmd("HINCRBY").arg(effects).arg(key).arg(1))
                        .await?;
                    claim.complete(&response).await?;
                } else {
                    // Sabotage: forget the claim, so the next duplicate runs the effect again.
                    ctx.client
                        .command(redis::cmd("HINCRBY").arg(effects).arg(key).arg(1))
                        .await?;
                    claim
                        .fail(&redis_atomic::idempotency::Failure::Retryable)
                        .await?;
                }
                return Ok(response);
            }
            Begin::InProgress { .. } => tokio::time::sleep(Duration::from_millis(1)).await,
            Begin::Replay(Stored::Completed(r) | Stored::Failed(r)) => return Ok(r),
            Begin::Mismatch => anyhow::bail!("fingerprint mismatch on identical requests"),
            _ => anyhow::bail!("unknown outcome"),
        }
    }
    anyhow::bail!("request {key} never finished")
}
