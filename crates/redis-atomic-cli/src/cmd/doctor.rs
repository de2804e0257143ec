//! `redis-atomic doctor`: audit a deployment against what the primitives assume, one row per
//! check with ok / warn / fail and the fix.
//!
//! The checks are the library's ([`redis_atomic::doctor`], the same rows
//! `Client::server_report` gives an application); this command finds the nodes, probes each one
//! and prints. Nodes come from the `functions` command's discovery (`CLUSTER NODES` with
//! `--cluster`: every primary, slot-less ones included, and every replica; otherwise the server
//! and the replicas its `INFO replication` lists), so both commands see the same deployment.
//! Without `--url` it audits an embedded server started for the run (the one bootstrap,
//! [`redis_atomic_verify::url_or_embed`], like `verify` and `bench`), and says so: that shows
//! what the checks look like, not how your servers are set up. The report is a table for people
//! (one line per finding, its fix under it) or JSON for machines.
//!
//! Exit codes: 0 no check failed (warnings allowed), 1 a check failed, 2 usage or connection
//! errors.

use super::functions::nodes::{self, Role};
use crate::args::ConnArgs;
use crate::output::runtime;
use anyhow::Context as _;
use redis_atomic::doctor::{self, DoctorOptions, Report, Row, Status};
use redis_atomic::Delivery;
use redis_atomic_verify::url_or_embed;
use std::io::Write;

/// Arguments of `doctor`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit codes: 0 no check failed (warnings allowed); 1 a check failed; 2 \
    usage or connection errors."
)]
pub struct DoctorArgs {
    /// Any node of the deployment (redis://, rediss://, redis+unix://); credentials and TLS
    /// settings are reused for every node. Default: an embedded redis-server started for the run.
    #[arg(long)]
    pub url: Option<String>,
    /// TLS files for a rediss:// --url.
    #[command(flatten)]
    pub conn: ConnArgs,
    /// The deployment is a Redis Cluster: audit every primary and replica (embedded: a 3+3
    /// cluster).
    #[arg(long)]
    pub cluster: bool,
    /// JSON output on stdout.
    #[arg(long)]
    pub json: bool,
    /// The application's keyspace namespace (ACL checks use a key under it).
    #[arg(long, default_value = "app")]
    pub namespace: String,
    /// Check this user's permissions (e.g. the application's, when the doctor runs as an admin);
    /// default: the connected user.
    #[arg(long)]
    pub acl_user: Option<String>,
    /// The application's delivery: `eval` (EVALSHA, the default) or `functions` (FCALL, which
    /// needs the Function library on every primary); parsed by the library, which also takes
    /// `evalsha` and `fcall`.
    #[arg(long, default_value = "eval", value_parser = str::parse::<Delivery>)]
    pub delivery: Delivery,
}

/// What was audited, for the header.
pub(crate) struct Target {
    /// The URL given, or what was started.
    pub(crate) what: String,
    /// An embedded server or cluster (not the user's deployment).
    pub(crate) embedded: bool,
    /// `standalone` or `cluster`.
    pub(crate) mode: &'static str,
    pub(crate) nodes: usize,
}

/// Runs `doctor`; returns the exit code (0 ok, 1 a check failed, 2 error).
pub fn run_blocking(args: DoctorArgs, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let runtime = match runtime() {
        Ok(rt) => rt,
        Err(e) => {
            let _ = writeln!(err, "error: {e:#}");
            return 2;
        }
    };
    let (target, report) = match runtime.block_on(run(&args)) {
        Ok(done) => done,
        Err(e) => {
            let _ = writeln!(err, "error: {e:#}");
            return 2;
        }
    };
    let printed = if args.json {
        json(out, &target, &report)
    } else {
        table(out, &target, &report)
    };
    match printed {
        Err(e) => {
            let _ = writeln!(err, "error: {e}");
            2
        }
        Ok(()) if report.ok() => 0,
        Ok(()) => 1,
    }
}

fn options(args: &DoctorArgs) -> DoctorOptions {
    let mut opts = DoctorOptions::default().namespace(&args.namespace);
    if let Some(user) = &args.acl_user {
        opts = opts.acl_user(user);
    }
    opts.delivery(args.delivery).force_lua(args.conn.force_lua)
}

async fn run(args: &DoctorArgs) -> anyhow::Result<(Target, Report)> {
    args.conn.require_url(args.url.as_deref())?;
    let (url, embedded) = url_or_embed(args.url.as_deref(), args.cluster)?;
    let tls = args.conn.tls();
    let (report, nodes) = audit(&url, args.cluster, tls.as_ref(), &options(args)).await?;
    let what = match embedded.describe() {
        None => url,
        Some(started) => format!(
            "an {started} started for this run with the testkit's settings (not your \
             deployment: pass --url)"
        ),
    };
    let target = Target {
        what,
        embedded: embedded.is_embedded(),
        mode: if args.cluster {
            "cluster"
        } else {
            "standalone"
        },
        nodes,
    };
    Ok((target, report))
}

/// Probes every node reachable from `url` and judges them together; also how many nodes.
pub async fn audit(
    url: &str,
    cluster: bool,
    tls: Option<&redis_atomic::TlsOptions>,
    opts: &DoctorOptions,
) -> anyhow::Result<(Report, usize)> {
    let (url_owned, found, tls_owned) = (url.to_string(), cluster, tls.cloned());
    let nodes =
        tokio::task::spawn_blocking(move || nodes::discover(&url_owned, found, tls_owned.as_ref()))
            .await
            .context("node discovery")??;
    let mut facts = Vec::with_capacity(nodes.len());
    let mut slotless = Vec::new();
    for node in &nodes {
        let conn = redis::Client::open(node.info.clone())?
            .get_multiplexed_async_connection()
            .await
            .with_context(|| format!("connecting to {}", node.addr))?;
        facts.push(doctor::probe_node(conn, &node.addr, opts).await);
        if node.role == Role::Primary && node.slots == Some(0) {
            slotless.push(node.addr.clone());
        }
    }
    let mut report = doctor::judge(&facts, opts);
    if !slotless.is_empty() {
        let mut row = Row::new(
            "cluster-slots",
            Status::Warn,
            "primary owns no slots (a shard just added?): it serves nothing yet".into(),
            "reshard slots to it, and run `redis-atomic functions deploy` for it",
        );
        row.nodes = slotless;
        report.rows.push(row);
    }
    Ok((report, nodes.len()))
}

/// For `verify --url`: audits the deployment and prints the failed checks to `err` before the
/// run starts (nothing when all pass or the audit itself cannot run: verify reports that).
pub fn print_failures(
    runtime: &tokio::runtime::Runtime,
    url: &str,
    cluster: bool,
    tls: Option<&redis_atomic::TlsOptions>,
    err: &mut dyn Write,
) {
    let Ok((report, _)) = runtime.block_on(audit(url, cluster, tls, &DoctorOptions::default()))
    else {
        return;
    };
    for row in report.failures() {
        let _ = writeln!(
            err,
            "doctor: {} FAIL on {}: {} (fix: {})",
            row.check,
            row.nodes.join(","),
            row.found,
            row.fix
        );
    }
}

/// `all N` when a finding holds on every node, else the nodes.
fn nodes(list: &[String], total: usize) -> String {
    if total > 1 && list.len() == total {
        return format!("all {total}");
    }
    list.join(",")
}

fn table(out: &mut dyn Write, target: &Target, report: &Report) -> std::io::Result<()> {
    writeln!(
        out,
        "redis-atomic doctor: {} ({}, {} node{})",
        target.what,
        target.mode,
        target.nodes,
        if target.nodes == 1 { "" } else { "s" }
    )?;
    let width = report
        .rows
        .iter()
        .map(|r| nodes(&r.nodes, target.nodes).len())
        .max()
        .unwrap_or(5)
        .clamp(5, 48);
    writeln!(
        out,
        "{:<22} {:<6} {:<width$} found",
        "check", "status", "nodes"
    )?;
    for row in &report.rows {
        let status = match row.status {
            Status::Fail => "FAIL",
            other => other.as_str(),
        };
        let nodes = nodes(&row.nodes, target.nodes);
        writeln!(
            out,
            "{:<22} {:<6} {:<width$} {}",
            row.check, status, nodes, row.found
        )?;
        if !row.fix.is_empty() {
            writeln!(out, "{:<22} {:<6} {:<width$} fix: {}", "", "", "", row.fix)?;
        }
    }
    let count = |s: Status| report.rows.iter().filter(|r| r.status == s).count();
    let (fails, warns) = (count(Status::Fail), count(Status::Warn));
    match fails {
        0 => writeln!(out, "ok: no check failed ({warns} warning(s))"),
        n => writeln!(out, "NOT OK: {n} check(s) failed, {warns} warning(s)"),
    }
}

fn json(out: &mut dyn Write, target: &Target, report: &Report) -> std::io::Result<()> {
    let rows: Vec<serde_json::Value> = report
        .rows
        .iter()
        .map(|r| {
            serde_json::json!({
                "check": r.check, "status": r.status.as_str(), "nodes": r.nodes,
                "found": r.found, "fix": r.fix,
            })
        })
        .collect();
    let doc = serde_json::json!({
        "ok": report.ok(),
        "target": {
            "what": target.what, "embedded": target.embedded, "mode": target.mode,
            "nodes": target.nodes,
        },
        "rows": rows,
    });
    writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)
}
