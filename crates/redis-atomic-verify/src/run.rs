//! [`Verify`]: the settings of a run, and the run — every check, then (with faults) every check
//! under each fault, then the clean-up — written once for the CLI and for users' tests.
//!
//! A run always ends with a report of every row it was asked for: a check that cannot run to a
//! verdict (an error it cannot count as an outcome, a panic, servers for a fault that did not
//! start) is a row with status `error` and the reason, and the run goes on with the next.

use crate::check::Check;
use crate::cleanup;
use crate::ctx::CheckCtx;
use crate::error::VerifyError;
use crate::faults::{FaultKind, Faults, Owner};
use crate::report::{CheckReport, Report, ServerInfo};
use indicatif::{ProgressBar, ProgressStyle};
use redis_atomic::{Client, Keyspace};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The namespace prefix of a run's keys unless [`Verify::namespace`] says otherwise.
pub const DEFAULT_NAMESPACE: &str = "verify";
/// The longest a check may run.
pub const MAX_DURATION: Duration = Duration::from_secs(3600);
/// The most concurrent tasks per check.
pub const MAX_TASKS: usize = 1024;
/// The client timeout a clean run wants (`ClientConfig::timeout`). No fault is injected there,
/// so a slow reply means a loaded machine, not an outcome to judge: waiting for it keeps every
/// check strict (any error still fails the run) without failing it for the machine's load. Runs
/// under faults use a short timeout of their own on purpose.
pub const CLEAN_TIMEOUT: Duration = Duration::from_secs(10);

/// What happens to a run's keys when it ends (each has a TTL either way:
/// 2 × the duration + 10 min after it was written).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Cleanup {
    /// Leave them for inspection; they expire by themselves.
    #[default]
    Keep,
    /// Delete them whether the checks passed or not: `SCAN` for the run's namespaces and
    /// `UNLINK`. `url` reaches the same deployment as the run's client (any node of a cluster:
    /// every primary is swept).
    Sweep {
        /// The deployment's URL.
        url: String,
    },
}

/// A verify run: built from a connected client and settings, then [`Verify::run`].
pub struct Verify {
    client: Client,
    duration: Duration,
    tasks: usize,
    checks: Vec<Arc<dyn Check>>,
    only: Option<Vec<String>>,
    faults: bool,
    namespace: String,
    cleanup: Cleanup,
    sabotage: bool,
    progress: bool,
    urls: Vec<String>,
    kinds: Option<Vec<FaultKind>>,
}

impl Verify {
    /// Every built-in check ([`crate::builtin`]) on `client` for 2 s each, 16 tasks, no
    /// faults, keys under `verify-<run>-*`, left to expire. Connect `client` with a generous
    /// timeout ([`CLEAN_TIMEOUT`]): in a clean run any error fails its check.
    pub fn new(client: Client) -> Verify {
        Verify {
            client,
            duration: Duration::from_secs(2),
            tasks: 16,
            checks: crate::checks::builtin(),
            only: None,
            faults: false,
            namespace: DEFAULT_NAMESPACE.into(),
            cleanup: Cleanup::Keep,
            sabotage: false,
            progress: false,
            urls: Vec::new(),
            kinds: None,
        }
    }

    /// How long each check runs (each check once per fault, too, with [`Verify::faults`]).
    pub fn duration(mut self, duration: Duration) -> Verify {
        self.duration = duration;
        self
    }

    /// Concurrent tasks per check (1..=[`MAX_TASKS`]).
    pub fn tasks(mut self, tasks: usize) -> Verify {
        self.tasks = tasks;
        self
    }

    /// Exactly these checks, in this order (instead of the built-in ones).
    pub fn checks(mut self, checks: impl IntoIterator<Item = Arc<dyn Check>>) -> Verify {
        self.checks = checks.into_iter().collect();
        self
    }

    /// One more check, after the others.
    pub fn add_check(mut self, check: impl Check + 'static) -> Verify {
        self.checks.push(Arc::new(check));
        self
    }

    /// Only the checks with these names (a name no check has fails the run).
    pub fn only<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Verify {
        self.only = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Then run every check again under each kind of fault ([`FaultKind::STANDALONE`], or
    /// [`FaultKind::CLUSTER`] when the client is a cluster's), injected into embedded servers
    /// started for it — never into the client's deployment.
    pub fn faults(mut self, faults: bool) -> Verify {
        self.faults = faults;
        self
    }

    /// The prefix of the run's keys: `<namespace>-<run>-<check>` (ASCII letters, digits, `_`,
    /// `.` and `-`; default [`DEFAULT_NAMESPACE`]). [`crate::acl::rules`] takes the same.
    pub fn namespace(mut self, namespace: impl Into<String>) -> Verify {
        self.namespace = namespace.into();
        self
    }

    /// What happens to the run's keys at the end.
    pub fn cleanup(mut self, cleanup: Cleanup) -> Verify {
        self.cleanup = cleanup;
        self
    }

    /// Bypass each primitive (a hand-rolled, racy version instead), to show the checks catch
    /// the violations a broken primitive causes: every row must then fail. A custom check sees
    /// it as [`CheckCtx::sabotage`].
    pub fn sabotage(mut self, sabotage: bool) -> Verify {
        self.sabotage = sabotage;
        self
    }

    /// The URLs the run's client reaches, given to drivers in the clean rows
    /// ([`crate::Driver`]; under faults they get the proxies').
    pub fn urls<S: Into<String>>(mut self, urls: impl IntoIterator<Item = S>) -> Verify {
        self.urls = urls.into_iter().map(Into::into).collect();
        self
    }

    /// With [`Verify::faults`], only these kinds (those of the deployment's list, in its order).
    pub fn fault_kinds(mut self, kinds: impl IntoIterator<Item = FaultKind>) -> Verify {
        self.kinds = Some(kinds.into_iter().collect());
        self
    }

    /// Draw a progress line per check on stderr.
    pub fn progress(mut self, progress: bool) -> Verify {
        self.progress = progress;
        self
    }

    /// Runs every check (then every check under each fault), deletes the run's keys if asked
    /// (whether the checks passed or not), and reports. Errors are about the run (settings, the
    /// server, the clean-up); a check that cannot run is a row of the report.
    pub async fn run(self) -> Result<Report, VerifyError> {
        let checks = self.selected()?;
        let server = ServerInfo::fetch(&self.client)
            .await
            .map_err(VerifyError::Server)?;
        let run_id = format!("{:08x}", rand::random::<u32>());
        let rows = self.run_checks(&checks, &run_id).await;
        let swept = match &self.cleanup {
            Cleanup::Sweep { url } => {
                let pattern = format!("{}-{run_id}-*", self.namespace);
                cleanup::sweep(&self.client, url, self.client.is_cluster(), &pattern)
                    .await
                    .map_err(VerifyError::Cleanup)
            }
            Cleanup::Keep => Ok(0),
        };
        let rows = rows?;
        swept?;
        Ok(Report::new(server, rows))
    }

    /// The checks to run, after the settings are checked.
    fn selected(&self) -> Result<Vec<Arc<dyn Check>>, VerifyError> {
        let bad = |m: String| Err(VerifyError::Settings(m));
        if self.duration.is_zero() || self.duration > MAX_DURATION {
            return bad(format!(
                "the duration must be in (0, {}] s, got {:?}",
                MAX_DURATION.as_secs(),
                self.duration
            ));
        }
        if self.tasks == 0 || self.tasks > MAX_TASKS {
            return bad(format!(
                "tasks must be in 1..={MAX_TASKS}, got {}",
                self.tasks
            ));
        }
        let ns_ok = |c: char| c.is_ascii_alphanumeric() || "_.-".contains(c);
        if self.namespace.is_empty()
            || self.namespace.len() > 64
            || !self.namespace.chars().all(ns_ok)
        {
            return bad(format!(
                "namespace `{}`: 1 to 64 ASCII letters, digits, `_`, `.` or `-`",
                self.namespace
            ));
        }
        let Some(only) = &self.only else {
            return Ok(self.checks.clone());
        };
        if let Some(unknown) = only
            .iter()
            .find(|o| !self.checks.iter().any(|c| c.name() == *o))
        {
            let names: Vec<&str> = self.checks.iter().map(|c| c.name()).collect();
            return bad(format!("no check `{unknown}`; known: {}", names.join(", ")));
        }
        Ok(self
            .checks
            .iter()
            .filter(|c| only.iter().any(|o| o == c.name()))
            .cloned()
            .collect())
    }

    /// Every check, then (with faults) every check under each fault.
    async fn run_checks(
        &self,
        checks: &[Arc<dyn Check>],
        run_id: &str,
    ) -> Result<Vec<CheckReport>, VerifyError> {
        let mut rows = Vec::new();
        for check in checks {
            let mut ctx = self.context(self.client.clone(), run_id, check.name(), None)?;
            ctx.urls = self.urls.clone();
            rows.push(run_check(check.clone(), ctx).await);
        }
        if self.faults {
            rows.extend(self.run_under_faults(checks, run_id).await?);
        }
        Ok(rows)
    }

    /// Every check once per kind of fault. Servers for a fault that cannot be started or
    /// reached make that fault's rows errors; the next fault starts its own.
    async fn run_under_faults(
        &self,
        checks: &[Arc<dyn Check>],
        run_id: &str,
    ) -> Result<Vec<CheckReport>, VerifyError> {
        let cluster = self.client.is_cluster();
        let kinds = if cluster {
            FaultKind::CLUSTER
        } else {
            FaultKind::STANDALONE
        };
        let kinds: Vec<FaultKind> = kinds
            .iter()
            .copied()
            .filter(|k| self.kinds.as_ref().is_none_or(|only| only.contains(k)))
            .collect();
        let owner = Arc::new(Owner::new().map_err(|e| VerifyError::Settings(e.to_string()))?);
        let mut target: Option<Faults> = None;
        let mut unstarted = String::new(); // why the last start failed: in every row it fails
        let mut rows = Vec::new();
        for kind in kinds {
            if let Some(what) = Faults::needed(kind, cluster, target.as_ref()) {
                drop(target.take()); // its servers stop before the next ones start
                target = match Faults::start(what, &owner).await {
                    Ok(started) => Some(started),
                    Err(e) => {
                        unstarted = one_line(e.as_ref());
                        tracing::warn!(fault = kind.name(), error = %unstarted, "fault servers did not start");
                        None
                    }
                };
            }
            let client = match &target {
                Some(t) => t.client().await,
                None => {
                    Err(format!("the servers for this fault did not start: {unstarted}").into())
                }
            };
            let (Some(target), Ok(client)) = (&target, client.as_ref()) else {
                let why = client.err().map_or(String::new(), |e| one_line(e.as_ref()));
                for check in checks {
                    let row = CheckReport::failed(check.name(), check.invariant(), why.clone());
                    rows.push(row.under(Some(kind), 0));
                }
                continue;
            };
            for check in checks {
                let mut ctx = self.context(client.clone(), run_id, check.name(), Some(kind))?;
                ctx.urls = target.urls();
                let (settled, rx) = tokio::sync::watch::channel(false);
                ctx.settled = rx;
                let begun = check.starts_late().then(|| ctx.begun.subscribe());
                let duration = ctx.duration;
                let corrupted = target.corrupted();
                let calls = target.server_calls().await;
                let (mut row, ()) = tokio::join!(
                    run_check(check.clone(), ctx),
                    target.inject(kind, duration, begun, settled)
                );
                if kind == FaultKind::CorruptReplies {
                    row.corrupted_replies = Some(target.corrupted().saturating_sub(corrupted));
                }
                row.server_calls = Some(target.server_calls().await.since(calls));
                rows.push(row);
            }
        }
        Ok(rows)
    }

    fn context(
        &self,
        client: Client,
        run_id: &str,
        name: &str,
        fault: Option<FaultKind>,
    ) -> Result<CheckCtx, VerifyError> {
        let label = fault.map_or(name.to_string(), |f| format!("{name}/{}", f.name()));
        let suffix = fault.map_or(String::new(), |f| format!("-{}", f.name()));
        let namespace = format!("{}-{run_id}-{name}{suffix}", self.namespace);
        let keyspace =
            Keyspace::new(namespace).map_err(|e| VerifyError::Settings(format!("{name}: {e}")))?;
        let mut ctx = CheckCtx::new(client, keyspace, progress_bar(&label, !self.progress));
        ctx.duration = self.duration;
        ctx.concurrency = self.tasks;
        ctx.sabotage = self.sabotage;
        ctx.fault = fault;
        Ok(ctx)
    }
}

/// One row: the check run on a task of its own (a panic is its row's error, not the run's end),
/// judged, labelled with its fault, unknown outcomes and availability.
async fn run_check(check: Arc<dyn Check>, mut ctx: CheckCtx) -> CheckReport {
    let (progress, tally, fault) = (ctx.progress.clone(), ctx.tally.clone(), ctx.fault);
    ctx.started = Instant::now();
    let ran = tokio::spawn(check.run(ctx)).await;
    progress.finish_and_clear();
    let (name, invariant) = (check.name(), check.invariant());
    let report = match ran {
        Ok(Ok(findings)) => CheckReport::judged(name, invariant, &findings),
        Ok(Err(e)) => CheckReport::failed(name, invariant, one_line(e.as_ref())),
        Err(panicked) => CheckReport::failed(name, invariant, panicked.to_string()),
    };
    report
        .under(fault, tally.unknown())
        .with_availability(tally.availability())
}

/// An error and its causes on one line.
fn one_line(e: &(dyn std::error::Error + 'static)) -> String {
    let mut line = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !line.contains(&text) {
            line.push_str(&format!(": {text}"));
        }
        source = cause.source();
    }
    line.replace('\n', " ")
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
