//! The driver's queue rows: workers enqueue jobs and claim, then ack, one job at a time through
//! the driver (`queue.enqueue`, `queue.claim`, `queue.ack`). Early in the row, then every eighth
//! claim of each worker, the claim is a **zombie**: it lets its visibility timeout run out, waits
//! until another worker has claimed the job again, then acks — what an ack that does not check
//! the claim turns into a job acked twice. After the row's duration nothing more is enqueued and
//! the workers drain the queue (bounded) until every job whose enqueue was acknowledged has an
//! accepted ack or one whose outcome is unknown.
//!
//! Judged by the in-process queue row's checkers (the testkit's): `check_acked_once` on every
//! acknowledged job's acks (none lost, none acked twice; an unknown ack may stand for the
//! accepted one) and, in the `queue` row, `check_leases` on the claims (never two live leases
//! of one job, fences increasing: a job is processed twice only after its lease ran out). The
//! `queue-alo` row is for a queue that documents at-least-once delivery without such a lease
//! (BullMQ): a job may be processed twice, so only the acks are judged. A job that no worker was
//! told was acked is asked about at the end (`queue.inspect`): when the queue says it is acked,
//! an ack answered `lost` ran after all (a client's own resend) — in the `queue` row a worker
//! told it lost a job it completed, a violation; in `queue-alo` the job's completion.

use super::session::{self, Session};
use super::wire::Answer;
use super::Driver;
use crate::check::CheckResult;
use crate::ctx::{locked, CheckCtx};
use crate::report::Findings;
use redis_atomic_testkit::{history, LeaseSpan, Verdict};
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;

pub(crate) use crate::checks::queue::INVARIANT;
pub(crate) const AT_LEAST_ONCE: &str =
    "each job acked once (delivered at least once: a job may be processed twice)";
const QUEUE: &str = "verify";
/// A claim's visibility timeout (its lease).
const VIS: Duration = Duration::from_millis(300);
/// The longest a zombie waits, past its lease, for the job to be claimed again.
const LINGER: Duration = Duration::from_secs(1);

/// What the row judges: the `queue` row's leases (one live lease per job, the driver's fences)
/// or the `queue-alo` row's acks alone.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Judge {
    Leases,
    AtLeastOnce,
}

#[derive(Default)]
struct Shared {
    /// Jobs whose enqueue was acknowledged.
    produced: Mutex<BTreeSet<String>>,
    /// Per job, its acks: Some(true) accepted, Some(false) refused or surely not sent, None
    /// unknown.
    acks: Mutex<HashMap<String, Vec<Option<bool>>>>,
    /// Every claim acknowledged, as a lease of its job.
    claims: Mutex<Vec<LeaseSpan>>,
    /// Per job, what happened to it (the minimal history of a violation).
    events: Mutex<HashMap<String, Vec<String>>>,
    ops: AtomicU64,
    nudge: Notify,
    /// A zombie lingering now (one at a time, so the others claim its job again).
    lingering: AtomicBool,
    /// Zombies that acked after their job was claimed again.
    zombie_acks: AtomicU64,
}

impl Shared {
    fn event(&self, job: &str, what: String) {
        locked(&self.events)
            .entry(job.to_string())
            .or_default()
            .push(what);
    }

    fn claims_of(&self, job: &str) -> usize {
        locked(&self.claims)
            .iter()
            .filter(|c| c.resource == job)
            .count()
    }

    /// Every acknowledged job has an accepted ack, or one that may have been it.
    fn drained(&self) -> bool {
        let acks = locked(&self.acks);
        locked(&self.produced).iter().all(|id| {
            acks.get(id)
                .is_some_and(|a| a.iter().any(|o| *o != Some(false)))
        })
    }
}

pub(crate) async fn run(
    driver: Driver,
    mut ctx: CheckCtx,
    row: &'static str,
    judge: Judge,
) -> CheckResult<Findings> {
    let pool = match session::start(&driver, &mut ctx, row).await? {
        Ok(pool) => pool,
        Err(why) => return Ok(Findings::unsupported(why)),
    };
    let sh = Arc::new(Shared::default());
    let mut sessions = ctx
        .run_workers(|t, ctx| {
            let session = Session::take(&pool, t, &ctx, &driver);
            let sh = sh.clone();
            async move { worker(t, session?, ctx, sh, judge).await }
        })
        .await?;
    let Some(s) = sessions.first_mut() else {
        bail!("no worker");
    };
    let completed = inspect_unacked(s, &sh).await?;
    session::finish(&driver, sessions);
    Ok(verdicts(&ctx, &sh, judge, completed))
}

/// Jobs acknowledged but never told acked (nor unknown) that the queue says are acked.
async fn inspect_unacked(s: &mut Session, sh: &Shared) -> CheckResult<Vec<String>> {
    let unacked: Vec<String> = {
        let acks = locked(&sh.acks);
        locked(&sh.produced)
            .iter()
            .filter(|id| {
                !acks
                    .get(*id)
                    .is_some_and(|a| a.iter().any(|o| *o != Some(false)))
            })
            .take(100)
            .cloned()
            .collect()
    };
    let mut completed = Vec::new();
    for id in unacked {
        let answer = s
            .final_call("queue.inspect", json!({"queue": QUEUE, "job_id": id}))
            .await?;
        let state = answer.word().unwrap_or_default().to_string();
        sh.event(&id, format!("at the end inspected: {state}"));
        if state == "acked" {
            completed.push(id);
        }
    }
    Ok(completed)
}

fn verdicts(ctx: &CheckCtx, sh: &Shared, judge: Judge, completed: Vec<String>) -> Findings {
    let findings = Findings::new(sh.ops.load(SeqCst));
    let claims = locked(&sh.claims);
    if ctx.lossy() {
        // Acknowledged writes may be lost (a primary killed): only fences are judged.
        return match judge {
            Judge::Leases => findings.with(history::check_leases(&claims, usize::MAX)),
            Judge::AtLeastOnce => findings,
        };
    }
    let mut acks = locked(&sh.acks).clone();
    for id in locked(&sh.produced).iter() {
        acks.entry(id.clone()).or_default(); // acknowledged, never acked: lost
    }
    let mut told_lost = Vec::new();
    for id in &completed {
        acks.entry(id.clone()).or_default().push(None);
        told_lost.push(format!(
            "{id}: acked on the server, but every ack of it was answered `lost` or refused"
        ));
    }
    let mut verdicts = vec![history::check_acked_once(&acks)];
    if judge == Judge::Leases {
        verdicts.push(history::check_leases(&claims, 1));
        verdicts.push(Verdict::observed(completed.len() as u64, told_lost));
    }
    let events = locked(&sh.events);
    let mut findings = findings;
    let mut explained = false;
    for mut v in verdicts {
        if let (false, Some(first)) = (explained, v.violations.first_mut()) {
            explained = true;
            let job = first.split(':').next().unwrap_or_default();
            if let Some(history) = events.get(job) {
                first.push_str(&format!("; a minimal history: {}", history.join(", ")));
            }
        }
        findings = findings.with(v);
    }
    findings
}

/// A claimed job: which, its handle and fence, when the claim was sent and answered.
struct Claimed {
    job: String,
    handle: Value,
    fence: u64,
    sent: Duration,
    /// Its lease's index in [`Shared::claims`].
    index: usize,
}

async fn worker(
    t: usize,
    mut s: Session,
    ctx: CheckCtx,
    sh: Arc<Shared>,
    judge: Judge,
) -> CheckResult<Session> {
    let name = format!("w{t}");
    let (mut n, mut claims) = (0usize, 0usize);
    // Past the row's duration (bounded): until drained, and until a zombie acked a job claimed
    // again, so every row puts the ack's claim check to the test.
    while ctx.running_while(!sh.drained() || sh.zombie_acks.load(SeqCst) == 0) {
        n += 1;
        if ctx.running() {
            enqueue(&mut s, &ctx, &sh, &format!("j{t}-{n}")).await?;
        }
        let claim_id = format!("{name}-{n}");
        let Some(c) = claim(&mut s, &ctx, &sh, &name, &claim_id, judge).await? else {
            let _ = tokio::time::timeout(Duration::from_millis(5), sh.nudge.notified()).await;
            continue;
        };
        claims += 1;
        // Each worker's second (even) or sixth (odd) claim, then every eighth: a zombie, unless
        // another worker lingers now.
        let zombie = claims % 8 == if t % 2 == 0 { 2 } else { 6 };
        if zombie && !sh.lingering.swap(true, SeqCst) {
            let again = linger(&ctx, &sh, &c).await;
            sh.lingering.store(false, SeqCst);
            ack(&mut s, &ctx, &sh, &name, &c).await?;
            sh.zombie_acks.fetch_add(u64::from(again), SeqCst);
        } else {
            ack(&mut s, &ctx, &sh, &name, &c).await?;
        }
    }
    Ok(s)
}

fn at(d: Duration) -> u128 {
    d.as_millis()
}

async fn enqueue(s: &mut Session, ctx: &CheckCtx, sh: &Shared, id: &str) -> CheckResult<()> {
    let sent = ctx.clock();
    let args = json!({"queue": QUEUE, "job_id": id, "payload": id});
    let answer = s.call("queue.enqueue", args).await?;
    sh.ops.fetch_add(1, SeqCst);
    ctx.tick();
    let said = match &answer {
        Answer::Outcome(w, _) if w == "enqueued" || w == "exists" => {
            locked(&sh.produced).insert(id.to_string());
            w.clone()
        }
        Answer::Outcome(w, _) => bail!("queue.enqueue answered `{w}`: neither enqueued nor exists"),
        Answer::Error(code, _) => code.clone(),
    };
    let done = ctx.clock();
    sh.event(
        id,
        format!(
            "enqueue sent {} ms, answered {} ms: {said}",
            at(sent),
            at(done)
        ),
    );
    Ok(())
}

async fn claim(
    s: &mut Session,
    ctx: &CheckCtx,
    sh: &Shared,
    name: &str,
    claim_id: &str,
    judge: Judge,
) -> CheckResult<Option<Claimed>> {
    let args = json!({
        "queue": QUEUE, "worker": name, "visibility_ms": VIS.as_millis() as u64,
        "claim_id": claim_id,
    });
    let sent = ctx.clock();
    let answer = s.call("queue.claim", args).await?;
    let done = ctx.clock();
    sh.ops.fetch_add(1, SeqCst);
    ctx.tick();
    match answer.word() {
        Some("claimed") => {}
        Some("empty" | "idle") | None => return Ok(None),
        Some(other) => bail!("queue.claim answered `{other}`: neither claimed, empty nor idle"),
    }
    let Some(job) = answer.field("job_id").and_then(Value::as_str) else {
        return Ok(None); // claimed nothing (a claim id's repeat after its leases ended)
    };
    let fence = match (answer.field("fence").and_then(Value::as_u64), judge) {
        (Some(f), _) => f,
        (None, Judge::AtLeastOnce) => 0,
        (None, Judge::Leases) => bail!(
            "queue.claim claimed without a fence: the `queue` row asks for one (`queue-alo` does not)"
        ),
    };
    let what = format!(
        "claim by {name} sent {} ms, answered {} ms: fence {fence}",
        at(sent),
        at(done)
    );
    sh.event(job, what);
    let index = {
        let mut claims = locked(&sh.claims);
        claims.push(LeaseSpan {
            resource: job.to_string(),
            fence,
            acquire_invoked: sent,
            acquire_completed: done,
            release_invoked: None,
            lease: VIS - history::CLOCK_SLACK,
        });
        claims.len() - 1
    };
    sh.nudge.notify_waiters();
    Ok(Some(Claimed {
        job: job.to_string(),
        handle: answer.field("handle").cloned().unwrap_or(Value::Null),
        fence,
        sent,
        index,
    }))
}

/// A zombie: waits past its lease's end, then (bounded) until the job was claimed again;
/// whether it was.
async fn linger(ctx: &CheckCtx, sh: &Shared, c: &Claimed) -> bool {
    let expiry = c.sent + VIS + VIS / 2;
    tokio::time::sleep(expiry.saturating_sub(ctx.clock())).await;
    let deadline = tokio::time::Instant::now() + LINGER;
    while sh.claims_of(&c.job) < 2 && tokio::time::Instant::now() < deadline {
        let _ = tokio::time::timeout(Duration::from_millis(5), sh.nudge.notified()).await;
    }
    sh.claims_of(&c.job) >= 2
}

async fn ack(
    s: &mut Session,
    ctx: &CheckCtx,
    sh: &Shared,
    name: &str,
    c: &Claimed,
) -> CheckResult<()> {
    let sent = ctx.clock();
    locked(&sh.claims)[c.index].release_invoked = Some(sent);
    let args = json!({"queue": QUEUE, "job_id": c.job, "worker": name, "handle": c.handle});
    let answer = s.call("queue.ack", args).await?;
    sh.ops.fetch_add(1, SeqCst);
    ctx.tick();
    let said = match &answer {
        Answer::Outcome(w, _) if w == "acked" || w == "lost" => w.clone(),
        Answer::Outcome(w, _) => bail!("queue.ack answered `{w}`: neither acked nor lost"),
        Answer::Error(code, _) => code.clone(),
    };
    let what = format!(
        "ack by {name} (fence {}) sent {} ms, answered {} ms: {said}",
        c.fence,
        at(sent),
        at(ctx.clock())
    );
    sh.event(&c.job, what);
    locked(&sh.acks)
        .entry(c.job.clone())
        .or_default()
        .push(answer.applied("acked"));
    Ok(())
}
