//! `redis-atomic verify`: prove every primitive's invariant against a real server — the
//! `redis-atomic-verify` crate's [`Verify`] run, from flags: which server (`--url`, or an
//! embedded one), how long, how many tasks, faults or not; then the doctor's failures first
//! (with `--url`), the report last (table or JSON).
//!
//! Exit codes: 0 every row ok; 1 a row found a violation or could not run (status `error`: its
//! reason is printed under the table; the other rows still ran); 2 usage, connection or server
//! errors before or after the checks (no report).
//!
//! The library's rows are the verify crate's ([`redis_atomic_verify::builtin`]); the `rls` face's
//! row is here ([`rls`]). With `--driver CMD` the rows are the driver protocol's instead
//! ([`Driver::checks`]): the same proof for a client in any language.

pub mod driver;

pub mod rls;

use crate::args::ConnArgs;
use crate::output::{one_line, runtime};
use redis_atomic::ClientConfig;
use redis_atomic_verify::{
    acl, connect_or_embed, Cleanup, Report, Verify, CLEAN_TIMEOUT, DEFAULT_NAMESPACE, MAX_DURATION,
    MAX_TASKS,
};
use std::io::Write;
use std::time::Duration;

/// Arguments of `verify`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit codes: 0 every invariant held; 1 a violation was found, or a check could \
    not run (its row says why); 2 usage, connection or server errors (no report)."
)]
pub struct VerifyArgs {
    /// Server to verify against (redis://, rediss://, redis+unix://, redis+sentinel://h:p,h:p/
    /// service). Default: an embedded redis-server started for the run. Keys are written under a
    /// fresh `verify-<run>-*` namespace, each with a TTL, and deleted when the run ends (see --acl
    /// for the user).
    #[arg(long)]
    pub url: Option<String>,
    /// TLS files for a rediss:// --url.
    #[command(flatten)]
    pub conn: ConnArgs,
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
    /// Start the embedded server (cluster, fault servers) with the server module, so the rows
    /// it covers run its natives: $REDIS_ATOMIC_MODULE, else libredis_atomic_module.so beside
    /// this binary (`redis-atomic module path`). $REDIS_ATOMIC_MODULE alone does it too.
    #[arg(long)]
    pub module: bool,
    /// Seconds each check runs [default: 2, or 1 with --faults, which runs every check once
    /// per kind of fault: the whole matrix then stays under two minutes].
    #[arg(long)]
    pub seconds: Option<f64>,
    /// Concurrent tasks per check [default: 16, or 4 with --driver: one driver process each].
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// Only these rows (repeatable): `lock`, `quota`, …
    #[arg(long = "only", value_name = "ROW")]
    pub only: Vec<String>,
    /// A client of another language (a driver program) instead of the library in-process.
    #[command(flatten)]
    pub driver: driver::DriverArgs,
    /// JSON output on stdout.
    #[arg(long)]
    pub json: bool,
    /// Then run every check again under each kind of fault (lost replies, corrupted replies,
    /// killed connections, stalls, script-cache flushes, crashes, a full memory; with --cluster
    /// slot migrations and failovers). Needs the embedded server: it stalls and restarts it.
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
        self.seconds
            .unwrap_or(if self.faults() { 1.0 } else { 2.0 })
    }

    /// Concurrent tasks per check: as given, else 16 (4 with `--driver`).
    pub fn concurrency(&self) -> usize {
        let default = if self.driver.driver.is_some() { 4 } else { 16 };
        self.concurrency.unwrap_or(default)
    }

    /// Whether faults are injected (`--faults`, or a `--fault`).
    fn faults(&self) -> bool {
        self.faults || !self.driver.fault.is_empty()
    }

    /// The flags checked before anything starts: each error names its flag.
    fn check(&self) -> anyhow::Result<Duration> {
        let seconds = self.seconds();
        if !(seconds > 0.0 && seconds <= MAX_DURATION.as_secs_f64()) {
            anyhow::bail!(
                "--seconds must be in (0, {}], got {seconds}",
                MAX_DURATION.as_secs()
            );
        }
        if self.concurrency() == 0 || self.concurrency() > MAX_TASKS {
            anyhow::bail!(
                "--concurrency must be in 1..={MAX_TASKS}, got {}",
                self.concurrency()
            );
        }
        self.driver.check()?;
        if self.module && self.url.is_some() {
            anyhow::bail!("--module loads the server module into the embedded server: drop --url (load it into yours: docs/module.md)");
        }
        if self.faults() && self.url.is_some() {
            anyhow::bail!("--faults needs the embedded server (it stalls, restarts and fails over its nodes): drop --url");
        }
        self.conn.require_url(self.url.as_deref())?;
        Ok(Duration::from_secs_f64(seconds))
    }
}

/// Runs `verify` on a fresh tokio runtime; returns the exit code (0 ok, 1 a row not ok, 2 error).
pub fn run(args: VerifyArgs, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    if args.acl {
        let line = acl::setuser_line("verify", DEFAULT_NAMESPACE);
        return match writeln!(out, "{line}") {
            Ok(()) => 0,
            Err(_) => 2,
        };
    }
    let report = args.check().and_then(|duration| {
        if args.module {
            redis_atomic_verify::embed_module(super::module::located()?);
        }
        let runtime = runtime()?;
        if let Some(url) = &args.url {
            // The doctor's failures first: a setting that breaks an invariant explains a violation.
            let tls = args.conn.tls();
            super::doctor::print_failures(&runtime, url, args.cluster, tls.as_ref(), err);
        }
        runtime.block_on(verify(&args, duration))
    });
    let report = match report {
        Ok(report) => report,
        Err(e) => {
            let _ = writeln!(err, "error: {}", one_line(&e));
            return 2;
        }
    };
    let printed = if args.json {
        report.write_json(out)
    } else {
        report.write_table(out)
    };
    match printed {
        Err(e) => {
            let _ = writeln!(err, "error: {e}");
            2
        }
        Ok(()) if report.ok => 0,
        Ok(()) => 1,
    }
}

/// Connects (or starts the embedded server) and runs every check.
async fn verify(args: &VerifyArgs, duration: Duration) -> anyhow::Result<Report> {
    let config = args
        .conn
        .client_config(ClientConfig::default().timeout(CLEAN_TIMEOUT));
    let urls = match &args.url {
        Some(url) => vec![url.clone()],
        None => Vec::new(),
    };
    let (client, embedded) = connect_or_embed(args.url.as_deref(), args.cluster, config).await?;
    let urls = if urls.is_empty() {
        embedded.urls()
    } else {
        urls
    };
    let cleanup = match &args.url {
        Some(url) if !args.keep_keys => Cleanup::Sweep { url: url.clone() },
        _ => Cleanup::Keep,
    };
    let mut run = Verify::new(client)
        .duration(duration)
        .tasks(args.concurrency())
        .faults(args.faults())
        .sabotage(args.sabotage)
        .progress(!args.json)
        .cleanup(cleanup)
        .urls(urls);
    run = match args.driver.driver() {
        Some(driver) => run.checks(driver.checks()),
        None => run.add_check(rls::RlsCheck),
    };
    if !args.driver.fault.is_empty() {
        run = run.fault_kinds(args.driver.kinds()?);
    }
    if !args.only.is_empty() {
        run = run.only(args.only.iter().cloned());
    }
    Ok(run.run().await?)
}
