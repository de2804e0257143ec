//! The idempotency check: several tasks send the same requests (same keys) at the same time; each
//! claimed request performs a side effect (HINCRBY of a per-key field), then completes.
//!
//! Per key the check counts *clean* executions (effect acknowledged and result stored) and
//! *unclean* ones (the effect or the completion had an unknown outcome, so a later duplicate may
//! legitimately run again). Violations: two clean executions of one key; an effect count that no
//! resolution of the unknowns explains (more than clean + unclean, or fewer than clean); a
//! duplicate that ends with a response other than the key's; a fingerprint mismatch on identical
//! requests. In a clean run there are no unclean executions, so every key's effect count must be
//! exactly 1. The executions are judged by the testkit's `check_executed_once`.

use super::{locked, CheckCtx, CheckError, CheckResult, Findings};
use redis_atomic::idempotency::{
    Begin, Claim, Failure, Fingerprint, Idempotency, IdempotencyConfig, Outcome, Response, Stored,
};
use redis_atomic_testkit::{history, Verdict};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub(crate) const INVARIANT: &str = "each key's side effect happens exactly once";
const SCOPE: &str = "verify";
const KEYS_PER_ROUND: u64 = 50;

#[derive(Default)]
struct Shared {
    ops: AtomicU64,
    /// Wrong replies and mismatches, described.
    bad: Mutex<Vec<String>>,
    /// Per key, every execution: Some(true) clean, None unclean.
    runs: Mutex<HashMap<String, Vec<Option<bool>>>>,
}

impl Shared {
    fn ran(&self, key: &str, clean: bool) {
        let mut runs = locked(&self.runs);
        runs.entry(key.to_string())
            .or_default()
            .push(clean.then_some(true));
    }

    fn bad(&self, what: String) {
        locked(&self.bad).push(what);
    }
}

pub(crate) async fn run(mut ctx: CheckCtx) -> CheckResult<Findings> {
    ctx.concurrency = ctx.concurrency.max(2); // duplicates need two senders at least
    let lease = if ctx.fault.is_some() { 2 } else { 30 };
    let config = IdempotencyConfig::default().ttl(Duration::from_secs(lease));
    let store = Idempotency::new(ctx.client.clone(), ctx.keyspace.clone()).with_config(config)?;
    // Where the side effects are counted: the check's own key, not the store's.
    let effects = ctx.keyspace.key("verify", 1, "idem", &["effects"])?;
    let shared = Arc::new(Shared::default());
    // `HINCRBY` creates the effects hash without a TTL: the keeper gives it the check's.
    let keeper = ctx.keep_expiring(vec![effects.clone()]);
    let mut round = 0u64;
    // Rounds: every worker sends the same keys at the same time, so each key has duplicates.
    while ctx.running() {
        ctx.run_workers(|_, ctx| {
            let (store, effects, shared) = (store.clone(), effects.clone(), shared.clone());
            async move {
                for k in 0..KEYS_PER_ROUND {
                    let key = format!("r{round}-k{k}");
                    send(&ctx, &store, &effects, &key, &shared).await?;
                    ctx.tick();
                }
                Ok::<_, CheckError>(())
            }
        })
        .await?;
        round += 1;
    }
    keeper.stop().await;
    let counts: HashMap<String, u64> = redis::from_redis_value(
        ctx.final_command(redis::cmd("HGETALL").arg(&effects))
            .await?,
    )?;
    let operations = shared.ops.load(Ordering::SeqCst);
    let bad = locked(&shared.bad).clone();
    let runs = history::check_executed_once(&counts, &locked(&shared.runs));
    Ok(Findings::new(operations)
        .with(runs)
        .with(Verdict::observed(operations, bad)))
}

/// One client request, as an HTTP client would behave: retried while in progress or failing,
/// until it has a response (bounded: 20 s).
async fn send(
    ctx: &CheckCtx,
    store: &Idempotency,
    effects: &str,
    key: &str,
    shared: &Shared,
) -> CheckResult<()> {
    let fp = Fingerprint::of(&[key.as_bytes()]);
    let give_up = Instant::now() + Duration::from_secs(20);
    while Instant::now() < give_up {
        shared.ops.fetch_add(1, Ordering::Relaxed);
        let response = match ctx.call(store.begin(SCOPE, key.as_bytes(), fp)).await {
            Ok(Begin::Claimed(claim)) => execute(ctx, store, effects, key, claim, shared).await?,
            Ok(Begin::Replay(Stored::Completed(r) | Stored::Failed(r))) => Some(r),
            Ok(Begin::InProgress { .. }) => None,
            Ok(Begin::Mismatch) => {
                shared.bad(format!("{key}: identical requests reported as a mismatch"));
                return Ok(());
            }
            Ok(_) => bail!("unknown begin outcome"),
            Err(e) => ctx.absorb(e).map(|()| None)?,
        };
        if let Some(r) = response {
            if r.body_bytes() != Some(key.as_bytes()) {
                shared.bad(format!("{key}: ended with another request's response"));
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
    store: &Idempotency,
    effects: &str,
    key: &str,
    claim: Claim,
    shared: &Shared,
) -> CheckResult<Option<Response>> {
    let response = Response::new(200, key.as_bytes().to_vec());
    let effect = ctx
        .command(redis::cmd("HINCRBY").arg(effects).arg(key).arg(1))
        .await;
    match effect {
        Ok(_) if ctx.sabotage => {
            // Sabotage: forget the claim, so the next duplicate runs the effect again.
            let _ = ctx.call(claim.fail(&Failure::Retryable)).await;
            shared.ran(key, true);
            return Ok(Some(response));
        }
        Ok(_) => {}
        Err(e) => {
            if ctx.outcome(Err(e))?.is_none() {
                shared.ran(key, false); // may have run: unclean
            }
            let _ = ctx.call(claim.fail(&Failure::Retryable)).await;
            return Ok(None);
        }
    }
    // Completion is safe to repeat with the same claim: retry an unknown outcome (bounded), by
    // parts after the first attempt (which consumes the claim).
    let (token, fence) = (claim.token().clone(), claim.fence());
    let mut claim = Some(claim);
    for _ in 0..5 {
        let stored = match claim.take() {
            Some(claim) => ctx.call(claim.complete(&response)).await,
            None => {
                let key = key.as_bytes();
                ctx.call(store.complete(SCOPE, key, &token, fence, &response))
                    .await
            }
        };
        match stored {
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
