//! The driver's `quota` row: workers add and refund amounts to one counter bounded to
//! `[0, 100]` through the driver (`quota.add`, each with a request id the driver may use to make
//! a resend safe), then the final value is read through the driver (`quota.get`). Judged like
//! the in-process row: every value reported within the bounds, and a final value explained by
//! the adds acknowledged plus some of those whose outcome was unknown. The harness never resends:
//! what is judged is what the driver (and the client under it) does on its own — a driver that
//! resends an add after a lost reply, without a request id that makes it safe, adds twice what
//! it reports once.

use super::session::{self, Session};
use super::Driver;
use crate::check::CheckResult;
use crate::checks::quota::{judge, Log, MAX};
use crate::ctx::{locked, CheckCtx};
use crate::report::Findings;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

pub(crate) use crate::checks::quota::INVARIANT;
const NAME: &str = "verify";

pub(crate) async fn run(
    driver: Driver,
    mut ctx: CheckCtx,
    row: &'static str,
) -> CheckResult<Findings> {
    let pool = match session::start(&driver, &mut ctx, row).await? {
        Ok(pool) => pool,
        Err(why) => return Ok(Findings::unsupported(why)),
    };
    let log = Arc::new(Mutex::new(Log::default()));
    let mut sessions = ctx
        .run_workers(|t, ctx| {
            let session = Session::take(&pool, t, &ctx, &driver);
            let log = log.clone();
            async move { worker(t, session?, ctx, log).await }
        })
        .await?;
    let Some(s) = sessions.first_mut() else {
        bail!("no worker");
    };
    let value = s.final_call("quota.get", json!({"name": NAME})).await?;
    session::finish(&driver, sessions);
    let value = value
        .field("value")
        .and_then(Value::as_i64)
        .ok_or_else(|| err!("quota.get answered without an integer `value`"))?;
    let findings = judge(&ctx, &mut locked(&log), value);
    Ok(findings)
}

async fn worker(
    t: usize,
    mut s: Session,
    ctx: CheckCtx,
    log: Arc<Mutex<Log>>,
) -> CheckResult<Session> {
    let mut i = t;
    while ctx.running() {
        i += 1;
        let delta = if i % 3 == 0 { -7 } else { 1 + (i % 5) as i64 };
        let args = json!({
            "name": NAME, "delta": delta, "min": 0, "max": MAX,
            "ttl_ms": ctx.key_ttl().as_millis() as u64, "request_id": format!("{t}-{i}"),
        });
        let answer = s.call("quota.add", args).await?;
        let value = match answer.word() {
            Some("applied" | "refused") => match answer.field("value").and_then(Value::as_i64) {
                Some(v) => Some(v),
                None => bail!("quota.add answered without an integer `value`"),
            },
            Some(other) => bail!("quota.add answered `{other}`: neither applied nor refused"),
            None => None,
        };
        let mut log = locked(&log);
        log.deltas.push((delta, answer.applied("applied")));
        if let Some(v) = value {
            log.values.push(v);
            ctx.tick();
        }
    }
    Ok(s)
}
