//! `redis-atomic verify`: prove every primitive's invariant against a real server.
//!
//! Each primitive contributes one check (a file in this folder and one line in [`CHECKS`]), all of
//! one shape: many concurrent tasks ([`CheckCtx::run_workers`]) drive the primitive for a few
//! seconds while the check records what they saw (side effects counted, not assumed); the
//! testkit's history checkers (`redis_atomic_testkit::history`, the same ones the library's tests
//! use) then judge the record against the primitive's model, and the check returns their
//! verdicts as [`Findings`]. A check's code is thus the workload and the record, nothing else:
//! spawning, joining, error policy and the report live here once. With no `--url`, an embedded
//! `redis-server` (or, with `--cluster`, a 3+3 cluster) is started from the testkit, so the whole
//! proof runs on a fresh machine with one command.
//!
//! With `--faults`, every check runs again once per kind of fault ([`faults`]), injected over and
//! over while it runs: the table then has one row per primitive and fault, with the operations
//! whose outcome was unknown, and the invariant must still hold.
//!
//! On a server it does not own (`--url`), a run leaves nothing behind: every key has a TTL and
//! the run's namespaces are deleted when it ends ([`cleanup`]); `--acl` prints the ACL such a
//! run needs ([`acl`]).

pub mod acl;
mod cas;
mod cleanup;
mod ctx;
mod dedup;
pub mod faults;
mod fenced;
mod idempotency;
mod lock;
mod queue;
mod quota;
mod ratelimit;
mod report;
mod semaphore;

pub use ctx::CheckCtx;
pub use report::{CheckReport, Findings, Report, ServerInfo};

use anyhow::Context as _;
use faults::{FaultKind, Faults};
use futures::future::BoxFuture;
use indicatif::{ProgressBar, ProgressStyle};
use redis_atomic::ratelimit::Algorithm;
use redis_atomic::{Client, ClientConfig, Keyspace};
use std::io::Write;
use std::time::Duration;

/// Arguments of `verify`.
#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// Server to verify against (redis://, rediss://, redis+unix://, redis+sentinel://h:p,h:p/
    /// service). Default: an embedded redis-server started for the run. Keys are written under a
    /// fresh `verify-<run>-*` namespace, each with a TTL, and deleted when the run ends (see --acl
    /// for the user).
    #[arg(long)]
    pub url: Option<String>,
    /// TLS files for a rediss:// --url.
    #[command(flatten)]
    pub conn: crate::conn::ConnArgs,
    /// Print the ACL SETUSER line of a user that can run `verify --url` (and nothing else:
    /// keys `verify-*`, the primitives' commands and verify's own), then exit.
    #[arg(long)]
    pub acl: bool,
    /// With --url, leave the run's keys for inspection instead of deleting them (each expires
    /// by itself, 2 × --seconds + 10 min after it was written).
    #[arg(long)]
    pub keep_keys: bool,
    /// Use Redis Cluster (embedded: a 3-primary, 3-replica cluster).
    #[arg(long)]
    pub cluster: bool,
    /// Seconds each check runs [default: 2, or 1 with --faults, which runs every check once
    /// per kind of fault: the whole matrix then stays under two minutes].
    #[arg(long)]
    pub seconds: Option<f64>,
    /// Concurrent tasks per check.
    #[arg(long, default_value_t = 16)]
    pub concurrency: usize,
    /// JSON output on stdout.
    #[arg(long)]
    pub json: bool,
    /// Then run every check again under each kind of fault (lost replies, killed connections,
    /// stalls, script-cache flushes, crashes, a full memory; with --cluster slot migrations and
    /// failovers).
    /// Needs the embedded server: it stalls and restarts it.
    #[arg(long)]
    pub faults: bool,
    /// Run each check with its primitive bypassed, to show the check catches the violations a
    /// broken primitive causes (used by the tests; exits 1).
    #[arg(long, hide = true)]
    pub sabotage: bool,
}

impl VerifyArgs {
    /// Seconds each check runs: as given, else 2 (1 under `--faults`).
    pub fn seconds(&self) -> f64 {
        self.seconds.unwrap_or(if self.faults { 1.0 } else { 2.0 })
    }
}

/// A check: drives its primitive under `ctx` and returns what it found.
pub type CheckFn = fn(CheckCtx) -> BoxFuture<'static, anyhow::Result<Findings>>;

/// One primitive's check: its name in the report, the invariant it proves, and how.
pub struct Check {
    /// Primitive name (a report row).
    pub name: &'static str,
    /// The invariant, in one sentence.
    pub invariant: &'static str,
    /// The check.
    pub run: CheckFn,
}

const fn check(name: &'static str, invariant: &'static str, run: CheckFn) -> Check {
    Check {
        name,
        invariant,
        run,
    }
}

/// Every primitive's check, in report order.
pub const CHECKS: &[Check] = &[
    check("lock", lock::INVARIANT, |c| Box::pin(lock::run(c))),
    check("idempotency", idempotency::INVARIANT, |c| {
        Box::pin(idempotency::run(c))
    }),
    check("queue", queue::INVARIANT, |c| Box::pin(queue::run(c))),
    check("ratelimit-fw", ratelimit::FIXED_WINDOW, |c| {
        Box::pin(ratelimit::run(c, Algorithm::FixedWindow))
    }),
    check("ratelimit-aw", ratelimit::ANCHORED_WINDOW, |c| {
        Box::pin(ratelimit::run(c, Algorithm::AnchoredWindow))
    }),
    check("ratelimit-sl", ratelimit::SLIDING_LOG, |c| {
        Box::pin(ratelimit::run(c, Algorithm::SlidingLog))
    }),
    check("ratelimit-sw", ratelimit::SLIDING_WINDOW, |c| {
        Box::pin(ratelimit::run(c, Algorithm::SlidingWindow))
    }),
    check("ratelimit-tb", ratelimit::RATE, |c| {
        Box::pin(ratelimit::run(c, Algorithm::TokenBucket))
    }),
    check("ratelimit-gcra", ratelimit::RATE, |c| {
        Box::pin(ratelimit::run(c, Algorithm::Gcra))
    }),
    check("quota", quota::INVARIANT, |c| Box::pin(quota::run(c))),
    check("semaphore", semaphore::INVARIANT, |c| {
        Box::pin(semaphore::run(c))
    }),
    check("fenced-write", fenced::INVARIANT, |c| {
        Box::pin(fenced::run(c))
    }),
    check("cas", cas::INVARIANT, |c| Box::pin(cas::run(c))),
    check("dedup", dedup::INVARIANT, |c| Box::pin(dedup::run(c))),
];

/// Client timeout of a clean run. No fault is injected there, so a slow reply means a loaded
/// machine, not an outcome to judge: waiting for it keeps every check strict (any error still
/// fails the run) without failing it for the machine's load. Runs under faults use a short
/// timeout on purpose ([`faults::client_config`]).
const CLEAN_TIMEOUT: Duration = Duration::from_secs(10);

/// Runs `verify` on a fresh tokio runtime; returns the exit code (0 ok, 1 violations, 2 error).
pub fn run_blocking(args: VerifyArgs, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    if args.acl {
        return match writeln!(out, "{}", acl::setuser_line("verify")) {
            Ok(()) => 0,
            Err(_) => 2,
        };
    }
    let runtime = match crate::conn::runtime() {
        Ok(rt) => rt,
        Err(e) => {
            let _ = writeln!(err, "error: {e:#}");
            return 2;
        }
    };
    if let Some(url) = &args.url {
        // The doctor's failures first: a setting that breaks an invariant explains a violation.
        crate::doctor::print_failures(&runtime, url, args.cluster, args.conn.tls().as_ref(), err);
    }
    match runtime.block_on(run(args)) {
        Ok((report, json)) => {
            let printed = if json {
                report.write_json(out)
            } else {
                report.write_table(out)
            };
            if let Err(e) = printed {
                let _ = writeln!(err, "error: {e}");
                return 2;
            }
            if report.ok {
                0
            } else {
                1
            }
        }
        Err(e) => {
            let _ = writeln!(err, "error: {}", crate::errors::one_line(&e));
            2
        }
    }
}

/// Runs every check and collects the report.
pub async fn run(args: VerifyArgs) -> anyhow::Result<(Report, bool)> {
    let seconds = args.seconds();
    if !(seconds > 0.0 && seconds <= 3600.0) {
        anyhow::bail!("--seconds must be in (0, 3600], got {seconds}");
    }
    if args.concurrency == 0 || args.concurrency > 1024 {
        anyhow::bail!(
            "--concurrency must be in 1..=1024, got {}",
            args.concurrency
        );
    }
    if args.faults && args.url.is_some() {
        anyhow::bail!("--faults needs the embedded server (it stalls, restarts and fails over its nodes): drop --url");
    }
    let (client, _target) = connect(&args).await?;
    let server = ServerInfo::fetch(&client).await?;
    let run_id = format!("{:08x}", rand::random::<u32>());
    let checks = run_checks(&args, &client, &run_id).await;
    // Whether the checks passed, failed or could not run: leave nothing behind.
    let swept = match &args.url {
        Some(url) if !args.keep_keys => {
            cleanup::sweep(&client, url, args.cluster, &format!("verify-{run_id}-*"))
                .await
                .context("deleting the run's keys")
        }
        _ => Ok(0),
    };
    let checks = checks?;
    swept?;
    Ok((Report::new(server, checks), args.json))
}

/// Every check, then (with `--faults`) every check under each fault.
async fn run_checks(
    args: &VerifyArgs,
    client: &Client,
    run_id: &str,
) -> anyhow::Result<Vec<CheckReport>> {
    let mut checks = Vec::new();
    for check in CHECKS {
        let ctx = context(args, client.clone(), run_id, check.name, None)?;
        checks.push(run_check(check, ctx, None).await?);
    }
    if args.faults {
        checks.extend(run_under_faults(args, run_id).await?);
    }
    Ok(checks)
}

/// Every check once per kind of fault.
async fn run_under_faults(args: &VerifyArgs, run_id: &str) -> anyhow::Result<Vec<CheckReport>> {
    let kinds = if args.cluster {
        FaultKind::CLUSTER
    } else {
        FaultKind::STANDALONE
    };
    let start = || {
        if args.cluster {
            Faults::cluster()
        } else {
            Faults::standalone()
        }
    };
    let mut target = start().context("starting the embedded server for --faults")?;
    let mut reports = Vec::new();
    for &kind in kinds {
        if kind.loses_acknowledged_writes() {
            // Destructive: a cluster of its own, so earlier rows ran on a healthy one.
            target = start().context("starting a fresh cluster")?;
        }
        let client = target.client().await?;
        for check in CHECKS {
            let mut ctx = context(args, client.clone(), run_id, check.name, Some(kind))?;
            let (settled, rx) = tokio::sync::watch::channel(false);
            ctx.settled = rx;
            let until = std::time::Instant::now() + ctx.duration;
            let (report, ()) = tokio::join!(
                run_check(check, ctx, Some(kind)),
                target.inject(kind, until, settled)
            );
            reports.push(report?);
        }
    }
    Ok(reports)
}

fn context(
    args: &VerifyArgs,
    client: Client,
    run_id: &str,
    name: &str,
    fault: Option<FaultKind>,
) -> anyhow::Result<CheckCtx> {
    let label = fault.map_or(name.to_string(), |f| format!("{name}/{}", f.name()));
    let suffix = fault.map_or(String::new(), |f| format!("-{}", f.name()));
    let mut ctx = CheckCtx::new(
        client,
        Keyspace::new(format!("verify-{run_id}-{name}{suffix}"))?,
        progress_bar(&label, args.json),
    );
    ctx.duration = Duration::from_secs_f64(args.seconds());
    ctx.concurrency = args.concurrency;
    ctx.sabotage = args.sabotage;
    ctx.fault = fault;
    Ok(ctx)
}

async fn run_check(
    check: &Check,
    mut ctx: CheckCtx,
    fault: Option<FaultKind>,
) -> anyhow::Result<CheckReport> {
    let (progress, unknown) = (ctx.progress.clone(), ctx.unknown.clone());
    ctx.started = std::time::Instant::now();
    let findings = (check.run)(ctx)
        .await
        .with_context(|| format!("check `{}` failed to run", check.name))?;
    progress.finish_and_clear();
    let report = CheckReport::judged(check.name, check.invariant, &findings);
    Ok(report.under(fault, unknown.load(std::sync::atomic::Ordering::Relaxed)))
}

async fn connect(args: &VerifyArgs) -> anyhow::Result<(Client, crate::conn::Embedded)> {
    args.conn.require_url(args.url.as_deref())?;
    let config = args
        .conn
        .client_config(ClientConfig::default().timeout(CLEAN_TIMEOUT));
    crate::conn::connect_or_embed(args.url.as_deref(), args.cluster, config).await
}

fn progress_bar(name: &str, hidden: bool) -> ProgressBar {
    if hidden {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new_spinner();
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{spinner} {prefix:>12} {pos} ops {elapsed}") {
        bar.set_style(style);
    }
    bar.set_prefix(name.to_string());
    bar.enable_steady_tick(Duration::from_millis(100));
    bar
}
