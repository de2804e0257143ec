//! The driver's lock rows: `lock` (one holder at a time, fences strictly increasing) and `mutex`
//! (one holder at a time; for a lock without fences, whose row says it is not asked for them);
//! and the machinery of the `semaphore` row ([`super::semaphore`]), the same race for `limit`
//! permits ([`Race`]).
//!
//! Workers race for one lock through the driver (`lock.acquire`, `lock.release`) and, holding
//! it, do the in-process lock row's non-atomic read-modify-write of a counter through the
//! harness's own client ([`crate::checks::lock::increment`]): a broken lock loses updates. Early
//! in the row, then every eighth acquisition of each worker, the acquisition is a zombie: it
//! asks for a short lease, lets it run out, waits until another worker holds the lock, and only
//! then releases — what a release that does not check the owner turns into two holders. A holder
//! that finds a zombie waiting keeps the lock until the zombie's release is done and two more
//! acquisitions were tried (bounded), and the row runs past its duration (bounded) until a
//! zombie has released, so such a release is caught on any machine. Judged like the in-process row: the testkit's lease checker
//! (two holders surely at once; for `lock`, fences) and counter checker; in a clean run a
//! release that finds its (unexpired) lease lost is a violation too.

use super::session::{self, Session};
use super::wire::Answer;
use super::{semaphore, Driver};
use crate::check::CheckResult;
use crate::checks::lock::{self, increment};
use crate::ctx::{locked, CheckCtx};
use crate::report::Findings;
use redis_atomic_testkit::{history, LeaseSpan};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub(crate) use lock::INVARIANT;
pub(crate) const EXCLUSION: &str = "one holder at a time (fences not asked)";
const RESOURCE: &str = "verify";
/// A holder's lease under a fault: above a stall (300 ms) plus the client's timeouts, as
/// in-process. In a clean row 10 s, as in-process too: a loaded machine's slow driver must not
/// let a lease run out inside its section (a clean row flags a release that finds it lost).
fn lease(ctx: &CheckCtx) -> Duration {
    if ctx.fault.is_some() {
        Duration::from_secs(1)
    } else {
        Duration::from_secs(10)
    }
}
/// A zombie's lease, which it lets run out.
const ZOMBIE_LEASE: Duration = Duration::from_millis(60);
/// The longest a holder waits for a zombie's release and two acquisitions after it.
const HOLD: Duration = Duration::from_millis(300);

/// What a row's workers race for: one lock (its fences asked or not), or a semaphore's `limit`
/// permits (no section of work: many holders at once; no fences asked).
#[derive(Clone, Copy)]
pub(crate) enum Race {
    Lock { fences: bool },
    Semaphore { limit: usize },
}

impl Race {
    /// How many may hold at once.
    fn capacity(self) -> usize {
        match self {
            Race::Lock { .. } => 1,
            Race::Semaphore { limit } => limit,
        }
    }

    /// The acquisition's request, and the word of a refusal because every place is taken.
    fn acquire(self, lease: Duration, token: &str) -> (&'static str, Value, &'static str) {
        match self {
            Race::Lock { .. } => (
                "lock.acquire",
                json!({"resource": RESOURCE, "ttl_ms": ms(lease), "token": token}),
                "held",
            ),
            Race::Semaphore { limit } => (
                "semaphore.acquire",
                json!({"name": RESOURCE, "limit": limit, "ttl_ms": ms(lease), "token": token}),
                "full",
            ),
        }
    }

    /// The release's request.
    fn release(self, token: &str, handle: Value) -> (&'static str, Value) {
        match self {
            Race::Lock { .. } => (
                "lock.release",
                json!({"resource": RESOURCE, "token": token, "handle": handle}),
            ),
            Race::Semaphore { .. } => (
                "semaphore.release",
                json!({"name": RESOURCE, "token": token, "handle": handle}),
            ),
        }
    }
}

/// The in-process row's record ([`lock::Shared`]), and what the zombies need.
#[derive(Default)]
struct Shared {
    base: lock::Shared,
    /// Acknowledgements in order, for the `mutex` row's stand-in fences (taken with the clock).
    acks: Mutex<u64>,
    /// Acquisitions tried (answered), holders now, zombies waiting, zombie releases done.
    attempts: AtomicU64,
    holding: AtomicUsize,
    zombies: AtomicUsize,
    zombie_releases: AtomicU64,
}

pub(crate) async fn run(
    driver: Driver,
    mut ctx: CheckCtx,
    row: &'static str,
    race: Race,
) -> CheckResult<Findings> {
    let pool = match session::start(&driver, &mut ctx, row).await? {
        Ok(pool) => pool,
        Err(why) => return Ok(Findings::unsupported(why)),
    };
    let counter = ctx.keyspace.key("verify", 1, "lock", &["counter"])?;
    let shared = Arc::new(Shared::default());
    let sessions = ctx
        .run_workers(|t, ctx| {
            let session = Session::take(&pool, t, &ctx, &driver);
            let (shared, counter) = (shared.clone(), counter.clone());
            async move { worker(t, session?, ctx, shared, counter, race).await }
        })
        .await?;
    session::finish(&driver, sessions);
    let mut findings = match race {
        Race::Lock { .. } => lock::judge(&ctx, &shared.base, &counter).await?,
        Race::Semaphore { limit } => semaphore::judge(&ctx, &shared.base, limit),
    };
    let spans = locked(&shared.base.spans);
    if let Some(first) = findings
        .verdicts
        .first_mut()
        .and_then(|v| v.violations.first_mut())
    {
        if let Some(history) = overlap(&spans, race.capacity()) {
            first.push_str(&format!("; a minimal history: {history}"));
        }
    }
    Ok(findings)
}

/// The first `capacity + 1` acknowledged leases surely held at once (acknowledged, not yet
/// released nor expired; two for a lock): what a violation shows, small enough to read.
fn overlap(spans: &[LeaseSpan], capacity: usize) -> Option<String> {
    let held = |s: &LeaseSpan| {
        let expiry = s.acquire_invoked + s.lease;
        (
            s.acquire_completed,
            s.release_invoked.map_or(expiry, |r| r.min(expiry)),
        )
    };
    let describe = |s: &LeaseSpan| {
        let (from, to) = held(s);
        format!(
            "fence {} acquire sent {} ms, acquired {} ms, lease {} ms, surely held until {} ms",
            s.fence,
            s.acquire_invoked.as_millis(),
            from.as_millis(),
            s.lease.as_millis(),
            to.as_millis()
        )
    };
    // Most held at once at some lease's start: for each start, the leases held then.
    spans.iter().find_map(|s| {
        let at = held(s).0;
        let now: Vec<String> = spans
            .iter()
            .filter(|o| {
                let (from, to) = held(o);
                from <= at && at < to
            })
            .map(|o| format!("[{}]", describe(o)))
            .collect();
        (now.len() > capacity).then(|| now[..=capacity].join(" and "))
    })
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

async fn worker(
    t: usize,
    mut s: Session,
    ctx: CheckCtx,
    sh: Arc<Shared>,
    counter: String,
    race: Race,
) -> CheckResult<Session> {
    let mut n = 0usize;
    while going(&ctx, &sh) {
        // Each worker's second (even) or sixth (odd) acquisition, then every eighth: a zombie
        // early in the row, however few acquisitions a loaded machine makes.
        let zombie = n % 8 == if t % 2 == 0 { 1 } else { 5 };
        let lease = if zombie { ZOMBIE_LEASE } else { lease(&ctx) };
        let token = format!("{:016x}", rand::random::<u64>());
        let (op, args, busy) = race.acquire(lease, &token);
        let invoked = ctx.clock();
        let answer = s.call(op, args).await?;
        sh.attempts.fetch_add(1, SeqCst);
        sh.base.nudge.notify_waiters();
        match answer.word() {
            Some("acquired") => n += 1,
            Some(other) if other != busy => {
                bail!("{op} answered `{other}`: neither acquired nor {busy}")
            }
            _ => {
                let _ =
                    tokio::time::timeout(Duration::from_millis(20), sh.base.nudge.notified()).await;
                continue;
            }
        }
        let fences = matches!(race, Race::Lock { fences: true });
        let (completed, fence) = acknowledged(&ctx, &sh, &answer, fences)?;
        let mut span = LeaseSpan {
            resource: RESOURCE.into(),
            fence,
            acquire_invoked: invoked,
            acquire_completed: completed,
            release_invoked: None,
            lease: lease.saturating_sub(history::CLOCK_SLACK),
        };
        let handle = answer.field("handle").cloned().unwrap_or(Value::Null);
        let release = race.release(&token, handle);
        if zombie {
            span.release_invoked =
                Some(linger(&mut s, &ctx, &sh, invoked + lease, release, race).await?);
        } else {
            sh.holding.fetch_add(1, SeqCst);
            hold(&ctx, &sh, race).await;
            let clean = match race {
                Race::Lock { .. } => increment(&ctx, &sh.base.writes, &counter).await?,
                Race::Semaphore { .. } => true,
            };
            if clean {
                span.release_invoked = Some(ctx.clock());
                released(&ctx, &sh, fence, s.call(release.0, release.1).await?)?;
            }
            sh.holding.fetch_sub(1, SeqCst);
        }
        ctx.tick();
        locked(&sh.base.spans).push(span);
        sh.base.nudge.notify_waiters();
    }
    Ok(s)
}

/// Whether the row goes on: its duration, and past it (bounded, as a sabotaged in-process row)
/// until a zombie has released, so every row puts the owner check to the test.
fn going(ctx: &CheckCtx, sh: &Shared) -> bool {
    ctx.running_while(sh.zombie_releases.load(SeqCst) == 0)
}

/// When the acquisition was acknowledged, and its fence: the driver's (`lock`), or for `mutex`
/// a stand-in counting acknowledgements, taken with the clock so it rises in real-time order.
fn acknowledged(
    ctx: &CheckCtx,
    sh: &Shared,
    answer: &Answer,
    fences: bool,
) -> CheckResult<(Duration, u64)> {
    if !fences {
        let mut acks = locked(&sh.acks);
        *acks += 1;
        return Ok((ctx.clock(), *acks));
    }
    let completed = ctx.clock();
    match answer.field("fence").and_then(Value::as_u64) {
        Some(fence) => Ok((completed, fence)),
        None => bail!(
            "lock.acquire acquired without a fence: the `lock` row asks for one (`mutex` does not)"
        ),
    }
}

/// A holder with a zombie waiting: keeps the lock until the zombie's release is done and two
/// more acquisitions were answered (bounded by [`HOLD`]). A semaphore's holder with no zombie
/// waiting keeps its permit until every permit is held and two more acquisitions were answered
/// (bounded too): a semaphore that admits one too many is then caught on any machine.
async fn hold(ctx: &CheckCtx, sh: &Shared, race: Race) {
    let zombie = sh.zombies.load(SeqCst) > 0;
    if !zombie && matches!(race, Race::Lock { .. }) {
        return;
    }
    let deadline = tokio::time::Instant::now() + HOLD;
    let released = sh.zombie_releases.load(SeqCst);
    let mut attempts = None;
    while going(ctx, sh) && tokio::time::Instant::now() < deadline {
        let now = sh.attempts.load(SeqCst);
        let met = if zombie {
            sh.zombie_releases.load(SeqCst) > released
        } else {
            sh.holding.load(SeqCst) >= race.capacity()
        };
        if met {
            match attempts {
                None => attempts = Some(now),
                Some(a) if now >= a + 2 => return,
                Some(_) => {}
            }
        }
        let _ = tokio::time::timeout(Duration::from_millis(5), sh.base.nudge.notified()).await;
    }
}

/// A zombie: waits past its lease's end and until other workers hold every place (bounded),
/// then releases. Returns when the release was invoked.
async fn linger(
    s: &mut Session,
    ctx: &CheckCtx,
    sh: &Shared,
    expiry: Duration,
    (op, release): (&'static str, Value),
    race: Race,
) -> CheckResult<Duration> {
    sh.zombies.fetch_add(1, SeqCst);
    tokio::time::sleep(expiry.saturating_sub(ctx.clock()) + ZOMBIE_LEASE / 2).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(1);
    while sh.holding.load(SeqCst) < race.capacity()
        && going(ctx, sh)
        && tokio::time::Instant::now() < deadline
    {
        let _ = tokio::time::timeout(Duration::from_millis(5), sh.base.nudge.notified()).await;
    }
    let at = ctx.clock();
    let answer = s.call(op, release).await;
    sh.zombie_releases.fetch_add(1, SeqCst);
    sh.zombies.fetch_sub(1, SeqCst);
    sh.base.nudge.notify_waiters();
    match answer?.word() {
        Some("released" | "lost") | None => Ok(at),
        Some(other) => bail!("{op} answered `{other}`: neither released nor lost"),
    }
}

/// A holder's release answer: `lost` in a clean run, within the lease, is a violation.
fn released(ctx: &CheckCtx, sh: &Shared, fence: u64, answer: Answer) -> CheckResult<()> {
    match answer.word() {
        Some("lost") if ctx.fault.is_none() => {
            locked(&sh.base.lost_releases).push(format!("release of fence {fence} found it lost"));
        }
        Some("released" | "lost") | None => {}
        Some(other) => bail!("a release answered `{other}`: neither released nor lost"),
    }
    Ok(())
}
