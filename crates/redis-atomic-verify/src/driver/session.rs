//! A row's driver processes: started and greeted for the row ([`start`]), one per worker
//! ([`Session`]), each call timed on the check's clock and tallied like an in-process call.
//!
//! The harness stamps every call itself — sent, answer read — so the interval it records
//! contains the driver's own call, whatever the driver's clock: the histories stay sound for a
//! driver in any language.

use super::proc::Proc;
use super::wire::{self, Answer, ErrorClass};
use super::Driver;
use crate::check::CheckResult;
use crate::ctx::CheckCtx;
use crate::tally::Served;
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a driver may take to start and answer its hello (an interpreter's start-up on a
/// loaded machine).
const HELLO_WITHIN: Duration = Duration::from_secs(30);

/// One worker's driver process, and the check it serves.
pub(crate) struct Session {
    proc: Proc,
    ctx: CheckCtx,
    within: Duration,
}

/// The processes of a row, one per worker, taken by index.
pub(crate) type Pool = Arc<Mutex<Vec<Option<Proc>>>>;

/// Greets `ctx.concurrency` processes of `driver` (idle ones first, the rest started) for `row`,
/// then starts the check's clock (a driver's start-up is not the row's time): Ok(Err(why)) when
/// the driver does not declare the row (the row is then unsupported, never passed).
pub(crate) async fn start(
    driver: &Driver,
    ctx: &mut CheckCtx,
    row: &str,
) -> CheckResult<Result<Pool, String>> {
    let fault = ctx.fault.map(|f| f.name());
    let cluster = ctx.client.is_cluster();
    let hello = wire::hello(row, &ctx.urls, cluster, ctx.keyspace.namespace(), fault);
    let mut procs: Vec<Proc> = {
        let mut idle = driver.idle.lock().unwrap_or_else(|p| p.into_inner());
        let keep = idle.len().saturating_sub(ctx.concurrency);
        idle.drain(keep..).collect()
    };
    while procs.len() < ctx.concurrency {
        procs.push(Proc::spawn(&driver.command)?);
    }
    let mut rows = None;
    for p in &mut procs {
        let answer = p.ask(&hello, HELLO_WITHIN).await?;
        let declared: Vec<String> = match answer.get("rows").and_then(Value::as_array) {
            Some(a) => a
                .iter()
                .filter_map(|r| r.as_str().map(String::from))
                .collect(),
            None => bail!("driver's hello answer has no `rows` list: {answer}"),
        };
        if let Some(reason) = answer.get("unsupported").and_then(Value::as_str) {
            return Ok(Err(reason.to_string()));
        }
        rows = Some(declared);
    }
    let rows = rows.unwrap_or_default();
    if !rows.iter().any(|r| r == row) {
        idle(driver, procs);
        return Ok(Err(format!(
            "the driver declares only: {}",
            rows.join(", ")
        )));
    }
    ctx.begin();
    Ok(Ok(Arc::new(Mutex::new(
        procs.into_iter().map(Some).collect(),
    ))))
}

/// Processes a row is done with, kept for the next row.
fn idle(driver: &Driver, procs: Vec<Proc>) {
    let mut idle = driver.idle.lock().unwrap_or_else(|p| p.into_inner());
    idle.extend(procs);
}

/// The sessions of a row that ended without a driver fault: their processes serve the next row.
pub(crate) fn finish(driver: &Driver, sessions: Vec<Session>) {
    idle(driver, sessions.into_iter().map(|s| s.proc).collect());
}

impl Session {
    /// Worker `t`'s process of `pool`.
    pub(crate) fn take(
        pool: &Pool,
        t: usize,
        ctx: &CheckCtx,
        driver: &Driver,
    ) -> CheckResult<Session> {
        let mut procs = pool.lock().unwrap_or_else(|p| p.into_inner());
        let proc = procs
            .get_mut(t)
            .and_then(Option::take)
            .ok_or_else(|| err!("no driver process for worker {t}"))?;
        Ok(Session {
            proc,
            ctx: ctx.clone(),
            within: driver.timeout,
        })
    }

    /// Runs `op` with `args` as one call of the check: tallied (refused when nothing ran, not
    /// served when its outcome is unknown, which is also counted as such). A driver that fails
    /// the protocol ends the row (an `error` row naming the fault).
    pub(crate) async fn call(&mut self, op: &str, args: Value) -> CheckResult<Answer> {
        let invoked = self.ctx.clock();
        let answer = self.proc.ask(&wire::request(op, args), self.within).await?;
        let answer = Answer::read(answer).map_err(|why| err!("driver's answer to {op}: {why}"))?;
        let served = match &answer {
            Answer::Outcome(..) => Served::Yes,
            Answer::Error(_, ErrorClass::NothingRan) => Served::Refused,
            Answer::Error(_, ErrorClass::Unknown) => {
                self.ctx.count_unknown();
                Served::No
            }
        };
        self.ctx.tally.call(invoked, self.ctx.clock(), served);
        Ok(answer)
    }

    /// `op` after the faults healed, until it has an outcome (a final read through the driver):
    /// at most 10 s of attempts.
    pub(crate) async fn final_call(&mut self, op: &str, args: Value) -> CheckResult<Answer> {
        self.ctx.settled().await;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let answer = self
                .proc
                .ask(&wire::request(op, args.clone()), self.within)
                .await?;
            let answer =
                Answer::read(answer).map_err(|why| err!("driver's answer to {op}: {why}"))?;
            match answer {
                Answer::Outcome(..) => return Ok(answer),
                Answer::Error(code, _) if tokio::time::Instant::now() > deadline => {
                    bail!("final {op} still failed after 10 s: {code}")
                }
                Answer::Error(..) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    }
}
