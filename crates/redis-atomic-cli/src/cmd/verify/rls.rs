//! `verify`'s `rls` row: the gRPC face (`redis-atomic-server`'s [`Rls`]) driven by many gRPC
//! clients, under every fault kind. Here, beside the verb, because it joins the two crates: the
//! verify crate knows no face, and the production server crate links no verify code.
//!
//! Every request carries two descriptors: its user's (`LIMIT` per year, the tight one, decided
//! first) and a global one (10^9 per year, never refusing). The record: every answer (OK, over
//! the limit, or unknown: `UNAVAILABLE` or a transport error, which may or may not have charged)
//! and, for an OK, the window it fell in (from `duration_until_reset`). Judged:
//!
//! * at most `LIMIT` OK answers per user and window (no over-admission through the face);
//! * all or nothing: the global limit was charged exactly once per OK answer, plus at most once
//!   per unknown one — a refused request charged nothing (read at the end with a check-only
//!   request, hits 0, through the face).
//!
//! The workers go on past the duration (up to four more) until the refusals outnumber the
//! unknowns, so that a refused request's charge cannot hide among them. When a fault may lose
//! acknowledged writes (primary kill), only the count of operations is reported. `--sabotage` runs the face deciding each descriptor alone, as envoyproxy/ratelimit
//! does: refused requests then charge the global limit, which the second judgement flags.

use futures::future::BoxFuture;
use redis_atomic::ratelimit::EntryLimiter;
use redis_atomic_server::faces::rls::pb::ratelimit::{
    Code, Entry, RateLimitDescriptor, RateLimitRequest, RateLimitServiceClient,
    RateLimitServiceServer,
};
use redis_atomic_server::faces::rls::{Rls, Rules};
use redis_atomic_verify::{Check, CheckCtx, CheckResult, Findings, Verdict};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

const LIMIT: u32 = 20;
const USERS: usize = 4;
const YEAR: u64 = 365 * 86_400;
/// The global limit (never reached: only its charge is read).
const GLOBAL: u64 = 1_000_000_000;

/// The check's domain: each user's limit, and the global one.
fn config() -> String {
    format!(
        "domain: verify
descriptors:
  - key: user
    rate_limit: {{unit: year, requests_per_unit: {LIMIT}}}
  - key: generic_key
    value: global
    rate_limit: {{unit: year, requests_per_unit: {GLOBAL}}}
"
    )
}

/// The `rls` row of `redis-atomic verify`.
pub struct RlsCheck;

#[derive(Default)]
struct Log {
    /// OK answers per (user, window index).
    admitted: HashMap<(usize, u64), u32>,
    ok: u64,
    /// OVER_LIMIT answers.
    refused: u64,
    unknown: u64,
    operations: u64,
}

impl Check for RlsCheck {
    fn name(&self) -> &str {
        "rls"
    }

    fn invariant(&self) -> &str {
        "through gRPC: ≤ limit per window, a refused request charges nothing"
    }

    fn run(&self, ctx: CheckCtx) -> BoxFuture<'static, CheckResult<Findings>> {
        Box::pin(run(ctx))
    }
}

async fn run(ctx: CheckCtx) -> CheckResult<Findings> {
    let config = config();
    let rules = Rules::parse([("verify.yaml", config.as_str())])?;
    let limiter = EntryLimiter::new(ctx.client.clone(), ctx.keyspace.clone());
    let shared = Arc::new(RwLock::new(Arc::new(rules)));
    let rls = Rls::new(
        limiter,
        shared,
        ctx.client.is_cluster(),
        Duration::from_secs(2),
    )
    .decide_each_alone(ctx.sabotage);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    let app = tonic::service::Routes::new(RateLimitServiceServer::new(rls)).into_axum_router();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(redis_atomic_server::start::serve(listener, app, async {
        let _ = stopped.await;
    }));
    let log = Arc::new(Mutex::new(Log::default()));
    let result = ctx
        .run_workers(|t, ctx| worker(t, ctx, url.clone(), log.clone()))
        .await;
    let charged = match result {
        Ok(_) if !ctx.lossy() => Some(global_charged(&ctx, &url).await?),
        Ok(_) => None,
        Err(e) => {
            let _ = stop.send(());
            return Err(e);
        }
    };
    let _ = stop.send(());
    let _ = server.await;
    let log = log.lock().map_err(|_| "log poisoned")?;
    let findings = Findings::new(log.operations);
    let Some(charged) = charged else {
        return Ok(findings);
    };
    let mut violations: Vec<String> = log
        .admitted
        .iter()
        .filter(|(_, n)| **n > LIMIT)
        .map(|((u, w), n)| format!("user {u}, window {w}: {n} admitted, limit {LIMIT}"))
        .collect();
    if charged < log.ok || charged > log.ok + log.unknown {
        violations.push(format!(
            "the global limit was charged {charged} times for {} admitted requests ({} unknown): \
             refused requests were charged",
            log.ok, log.unknown
        ));
    }
    Ok(findings.with(Verdict::observed(log.operations, violations)))
}

fn request(user: usize, hits: Option<u64>) -> RateLimitRequest {
    let d = |k: &str, v: &str| RateLimitDescriptor {
        entries: vec![Entry {
            key: k.into(),
            value: v.into(),
        }],
        limit: None,
        hits_addend: hits,
    };
    RateLimitRequest {
        domain: "verify".into(),
        descriptors: vec![d("user", &format!("u{user}")), d("generic_key", "global")],
        hits_addend: 0,
    }
}

async fn worker(task: usize, ctx: CheckCtx, url: String, log: Arc<Mutex<Log>>) -> CheckResult<()> {
    let mut client = RateLimitServiceClient::connect(url).await?;
    let user = task % USERS;
    // Past the duration (bounded) while the refusals do not outnumber the unknowns: a fault such
    // as a crash can leave a second of mostly unknown outcomes, which would hide the charges of
    // the few refusals from the second judgement.
    while ctx.running_until_first(undecided(&log)?) {
        let answer = client.should_rate_limit(request(user, None)).await;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let mut l = log.lock().map_err(|_| "log poisoned")?;
        l.operations += 1;
        match answer {
            Ok(r) => {
                let r = r.into_inner();
                if r.overall_code == Code::Ok as i32 {
                    l.ok += 1;
                    let reset = r
                        .statuses
                        .first()
                        .and_then(|s| s.duration_until_reset.as_ref())
                        .map_or(0, |d| d.seconds.max(0) as u64);
                    let window = (now + reset + YEAR / 2) / YEAR;
                    *l.admitted.entry((user, window)).or_default() += 1;
                } else if r.overall_code == Code::OverLimit as i32 {
                    l.refused += 1;
                } else {
                    return Err(format!("overall code {} in an answer", r.overall_code).into());
                }
            }
            Err(s) if ctx.fault.is_some() => {
                l.unknown += 1;
                ctx.count_unknown();
                tracing::debug!(status = %s, "rls check: unknown outcome");
            }
            Err(s) => return Err(s.into()),
        }
        drop(l);
        ctx.tick();
    }
    Ok(())
}

/// Whether the record cannot yet show a refused request's charge: no more refusals than unknowns.
fn undecided(log: &Mutex<Log>) -> CheckResult<bool> {
    let l = log.lock().map_err(|_| "log poisoned")?;
    Ok(l.refused <= l.unknown)
}

/// The global limit's charge, read through the face with a check only once the fault has
/// healed (retried for up to 10 s, as [`CheckCtx::final_command`]: a restarted server loads its
/// AOF first).
async fn global_charged(ctx: &CheckCtx, url: &str) -> CheckResult<u64> {
    ctx.settled().await;
    let mut client = RateLimitServiceClient::connect(url.to_string()).await?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let answer = loop {
        match client.should_rate_limit(request(USERS, Some(0))).await {
            Ok(r) => break r.into_inner(),
            Err(e) if tokio::time::Instant::now() > deadline => return Err(e.into()),
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    };
    let remaining = answer
        .statuses
        .get(1)
        .ok_or("the check-only answer has no global status")?
        .limit_remaining;
    Ok(GLOBAL - u64::from(remaining))
}
