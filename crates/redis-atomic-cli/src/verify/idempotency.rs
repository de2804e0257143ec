//! The idempotency check: several tasks send the same requests (same keys) at the same time; each
//! claimed request performs a side effect (HINCRBY of a per-key field), then completes.
//!
//! Per key the check counts *clean* executions (effect acknowledged and result stored) and
//! *unclean* ones (the effect or the completion had an unknown outcome, so a later duplicate may
//! legitimately run again). Violations: two clean executions of one key; an effect count that no
//! resolution of the unknowns explains (more than clean + unclean, or fewer than clean); a
//! duplicate that ends with a response other than the key's; a fingerprint mismatch on identical
//! requests. In a clean run there are no unclean executions, so every key's effect count must be
//! exactly 1.

use super::{CheckCtx, CheckReport};
use futures::future::BoxFuture;
use redis_atomic::idempotency::{
    Begin, Claim, Failure, Fingerprint, IdemConfig, Idempotency, Outcome, Response, Stored,
};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const INVARIANT: &str = "each key's side effect happens exactly once";
const KEYS_PER_ROUND: u64 = 50;

#[derive(Default)]
struct Shared {
    ops: AtomicU64,
    /// Wrong replies and mismatches.
    bad: AtomicU64,
    /// Per key: (clean executions, unclean executions).
    runs: Mutex<HashMap<String, (u64, u64)>>,
}

impl Shared {
    fn ran(&self, key: &str, clean: bool) {
        let mut runs = self.runs.lock().unwrap_or_else(|p| p.into_inner());
        let entry = runs.entry(key.to_string()).or_default();
        if clean {
            entry.0 += 1;
        } else {
            entry.1 += 1;
        }
    }
}

pub(super) fn run(ctx: CheckCtx) -> BoxFuture<'static, anyhow::Result<CheckReport>> {
    Box::pin(async move {
        let lease = if ctx.fault.is_some() { 2 } else { 30 };
        let config = IdemConfig::default().lease(Duration::from_secs(lease));
        let store = Idempotency::new(ctx.client.clone(), ctx.keyspace.clone(), config)?;
        let effects = ctx.keyspace.key("verify", 1, "idem", &["effects"])?;
        let shared = Arc::new(Shared::default());
        let deadline = Instant::now() + ctx.duration;
        let mut round = 0u64;
        while Instant::now() < deadline {
            let mut tasks = Vec::new();
            for _ in 0..ctx.concurrency.max(2) {
                let (ctx, store) = (ctx.clone(), store.clone());
                let (effects, shared) = (effects.clone(), shared.clone());
                tasks.push(tokio::spawn(async move {
                    for k in 0..KEYS_PER_ROUND {
                        let key = format!("r{round}-k{k}");
                        send(&ctx, &store, &effects, &key, &shared).await?;
                        ctx.progress.inc(1);
                    }
                    anyhow::Ok(())
                }));
            }
            for t in tasks {
                t.await??;
            }
            round += 1;
        }
        let counts: HashMap<String, u64> = redis::from_redis_value(
            ctx.final_command(redis::cmd("HGETALL").arg(&effects))
                .await?,
        )?;
        let runs = shared.runs.lock().unwrap_or_else(|p| p.into_inner());
        let mut violations = shared.bad.load(Ordering::SeqCst);
        for r in 0..round {
            for k in 0..KEYS_PER_ROUND {
                let key = format!("r{r}-k{k}");
                let n = counts.get(&key).copied().unwrap_or(0);
                let (clean, unclean) = runs.get(&key).copied().unwrap_or_default();
                if clean > 1 || n < clean || n > clean + unclean {
                    tracing::warn!(key, n, clean, unclean, "idempotency violation");
                    violations += 1;
                }
            }
        }
        Ok(CheckReport::new(
            "idempotency",
            INVARIANT,
            shared.ops.load(Ordering::SeqCst),
            violations,
        ))
    })
}

/// One client request, as an HTTP client would behave: retried while in progress or failing,
/// until it has a response (bounded: 20 s).
async fn send(
    ctx: &CheckCtx,
    store: &Idempotency,
    effects: &str,
    key: &str,
    shared: &Shared,
) -> anyhow::Result<()> {
    let fp = Fingerprint::of(&[key.as_bytes()]);
    let give_up = Instant::now() + Duration::from_secs(20);
    while Instant::now() < give_up {
        shared.ops.fetch_add(1, Ordering::Relaxed);
        let response = match store.begin("verify", key.as_bytes(), fp).await {
            Ok(Begin::Claimed(claim)) => execute(ctx, effects, key, claim, shared).await?,
            Ok(Begin::Replay(Stored::Completed(r) | Stored::Failed(r))) => Some(r),
            Ok(Begin::InProgress { .. }) => None,
            Ok(Begin::Mismatch) => {
                shared.bad.fetch_add(1, Ordering::SeqCst);
                return Ok(());
            }
            Ok(_) => anyhow::bail!("unknown begin outcome"),
            Err(e) => ctx.absorb(e).map(|()| None)?,
        };
        if let Some(r) = response {
            if r.body_bytes() != Some(key.as_bytes()) {
                shared.bad.fetch_add(1, Ordering::SeqCst);
            }
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    ctx.count_unknown();
    Ok(())
}

/// Runs the side effect for a claim and stores the result. Returns the response when the
/// execution is clean; otherwise records it as unclean (a duplicate may run it again).
async fn execute(
    ctx: &CheckCtx,
    effects: &str,
    key: &str,
    claim: Claim,
    shared: &Shared,
) -> anyhow::Result<Option<Response>> {
    let response = Response::new(200, key.as_bytes().to_vec());
    let effect = ctx
        .client
        .command(redis::cmd("HINCRBY").arg(effects).arg(key).arg(1))
        .await;
    match effect {
        Ok(_) if ctx.sabotage => {
            // Sabotage: forget the claim, so the next duplicate runs the effect again.
            let _ = claim.fail(&Failure::Retryable).await;
            shared.ran(key, true);
            return Ok(Some(response));
        }
        Ok(_) => {}
        Err(e) => {
            let ran = !e.nothing_ran();
            ctx.absorb(e)?;
            if ran {
                shared.ran(key, false);
            }
            let _ = claim.fail(&Failure::Retryable).await;
            return Ok(None);
        }
    }
    // Completion is safe to repeat with the same claim: retry an unknown outcome (bounded).
    for _ in 0..5 {
        match claim.complete(&response).await {
            Ok(Outcome::Stored) => {
                shared.ran(key, true);
                return Ok(Some(response));
            }
            Ok(_) => break,
            Err(e) => ctx.absorb(e)?,
        }
    }
    shared.ran(key, false);
    Ok(None)
}
