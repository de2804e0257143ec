//! The dedup check: every task walks the same sequence of event ids (`e0`, `e1`, …) and asks
//! [`Dedup::first_seen`] for each, so all tasks race on every id. Per id exactly one caller may
//! be told "first": two is a duplicate let through; none, when every caller got a definite
//! answer, is an event dropped as a duplicate of nobody.
//!
//! Under faults a call whose reply is lost is asked again with the same token (the library's
//! advice: the same token gets the same answer); if it stays unknown, that id may have no "first"
//! answer. When a fault may lose acknowledged writes (primary kill), a recorded sighting can
//! vanish and a later caller be told "first" again — the documented at-least-once case — so
//! only dropped events count there.

use super::{CheckCtx, CheckReport};
use futures::future::BoxFuture;
use redis_atomic::dedup::Dedup;
use redis_atomic::lease::OwnerToken;
use redis_atomic::Error;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const INVARIANT: &str = "exactly one caller sees each event first";

/// Per event id: callers told "first", and callers left without an answer.
#[derive(Clone, Copy, Default)]
struct Answers {
    first: u32,
    unresolved: u32,
}

type Ledger = Arc<Mutex<HashMap<u64, Answers>>>;

pub(super) fn run(ctx: CheckCtx) -> BoxFuture<'static, anyhow::Result<CheckReport>> {
    Box::pin(async move {
        let dedup = Dedup::new(ctx.client.clone(), ctx.keyspace.clone());
        // Ids must outlive the run (and a grace for the final stragglers).
        let ttl = ctx.duration * 4 + Duration::from_secs(60);
        let ledger = Ledger::default();
        let deadline = Instant::now() + ctx.duration;
        let mut tasks = Vec::new();
        for _ in 0..ctx.concurrency {
            let (ctx, dedup, ledger) = (ctx.clone(), dedup.clone(), ledger.clone());
            tasks.push(tokio::spawn(async move {
                worker(ctx, dedup, ledger, ttl, deadline).await
            }));
        }
        let mut operations = 0;
        for task in tasks {
            operations += task.await??;
        }
        let lossy = ctx.fault.is_some_and(|f| f.loses_acknowledged_writes());
        let ledger = ledger.lock().unwrap_or_else(|p| p.into_inner());
        let violations = ledger
            .values()
            .filter(|a| (a.first > 1 && !lossy) || (a.first == 0 && a.unresolved == 0))
            .count() as u64;
        Ok(CheckReport::new("dedup", INVARIANT, operations, violations))
    })
}

/// Asks for `e0`, `e1`, … until the deadline; returns the calls made.
async fn worker(
    ctx: CheckCtx,
    dedup: Dedup,
    ledger: Ledger,
    ttl: Duration,
    deadline: Instant,
) -> anyhow::Result<u64> {
    let mut id = 0u64;
    while Instant::now() < deadline {
        let event = format!("e{id}");
        let answer = if ctx.sabotage {
            naive(&ctx, &dedup, &event, ttl).await.map(Some)
        } else {
            ask(&ctx, &dedup, &event, ttl).await
        };
        let answer = match answer {
            Ok(answer) => answer,
            // Surely not sent: this caller recorded nothing (and excuses nothing).
            Err(e) if e.nothing_ran() => {
                ctx.absorb(e)?; // a clean run fails here
                Some(false)
            }
            Err(e) => {
                ctx.absorb(e)?; // a clean run fails here; under faults: no answer
                None
            }
        };
        let mut all = ledger.lock().unwrap_or_else(|p| p.into_inner());
        let entry = all.entry(id).or_default();
        match answer {
            Some(true) => entry.first += 1,
            Some(false) => {}
            None => entry.unresolved += 1,
        }
        drop(all);
        ctx.progress.inc(1);
        id += 1;
    }
    Ok(id)
}

/// The library's answer, asking again with the same token while the outcome is unknown
/// (bounded); None when it stays unknown (counted once as an unknown outcome).
async fn ask(
    ctx: &CheckCtx,
    dedup: &Dedup,
    event: &str,
    ttl: Duration,
) -> Result<Option<bool>, Error> {
    let token = OwnerToken::random();
    let mut may_have_run = false;
    for _ in 0..3 {
        match dedup.first_seen_as(event, ttl, &token).await {
            Ok(first) => return Ok(Some(first)),
            Err(e) if ctx.fault.is_none() => return Err(e),
            Err(e) if e.nothing_ran() && !may_have_run => return Err(e),
            Err(e) => {
                may_have_run |= !e.nothing_ran();
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
    ctx.count_unknown();
    Ok(None)
}

/// What the check must flag: `GET`, then `SET` when absent (two commands, no `NX`).
async fn naive(ctx: &CheckCtx, dedup: &Dedup, event: &str, ttl: Duration) -> Result<bool, Error> {
    let key = dedup.keys(event)?.seen;
    let seen = ctx.client.command(redis::cmd("GET").arg(&key)).await?;
    if seen != redis::Value::Nil {
        return Ok(false);
    }
    tokio::task::yield_now().await; // the gap every other task can slip into
    ctx.client
        .command(
            redis::cmd("SET")
                .arg(&key)
                .arg("x")
                .arg("PX")
                .arg(ttl.as_millis() as u64),
        )
        .await?;
    Ok(true)
}
