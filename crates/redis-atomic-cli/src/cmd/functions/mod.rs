//! `redis-atomic functions deploy|status|diff|rollback`: the Function library treated like a
//! database migration: versioned by name (`redis_atomic_v<N>`), checksummed, deployed to every
//! primary and verified on every replica, never replaced in place, removed only when asked. `--dir
//! DIR [--library NAME]` does the same for a user's folder of scripts, library `NAME_v<N>` with
//! functions `NAME<N>_<script>` ([`spec::LibrarySpec`]; NAME defaults to the folder's name, as in
//! `scripts` and `test`).
//!
//! Why a command and not just the client's lazy `FUNCTION LOAD`: Redis does not copy libraries
//! to a shard added later (<https://github.com/redis/redis/issues/11780>), a replica promoted
//! before replication finished lacks what its primary had, and nothing warns when a node holds
//! different code under the same name. `status` shows all three per node; `deploy` is idempotent, so running it after every
//! topology change is the fix.
//!
//! Exit codes: 0 done / all nodes current / nothing to change; 1 refused, incomplete, or (for
//! `status` and `diff`) nodes that differ from this binary; 2 usage, unreadable folder or
//! connection errors.

mod diff;
pub(crate) mod nodes;
mod ops;
mod spec;
mod state;

use ops::Outcome;
use spec::LibrarySpec;
use state::NodeState;
use std::io::Write;
use std::path::PathBuf;

/// Where and how.
#[derive(Debug, Clone, clap::Args)]
pub struct Target {
    /// Any node of the deployment (credentials and TLS settings are reused for every node).
    #[arg(long, default_value = "redis://127.0.0.1:6379")]
    pub url: String,
    /// The URL is a Redis Cluster node: act on every primary and replica of the cluster.
    #[arg(long)]
    pub cluster: bool,
    /// TLS files for a rediss:// --url.
    #[command(flatten)]
    pub conn: crate::args::ConnArgs,
    /// JSON output on stdout.
    #[arg(long)]
    pub json: bool,
    /// With --dir: the name of your library, NAME_v<N> with functions NAME<N>_<script>
    /// (default: the folder's name, non-[a-z0-9_] turned into _). [a-z][a-z0-9_]*, at most 64
    /// characters, not ending in a digit, not redis_atomic.
    #[arg(long, value_name = "NAME", requires = "dir")]
    pub library: Option<String>,
    /// Act on your own library, built from this folder (*.lua, include/, library.version
    /// holding N, scripts.lock), instead of this binary's; deploy refuses while scripts.lock is
    /// out of date.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

impl Target {
    fn spec(&self) -> Result<LibrarySpec, String> {
        let Some(dir) = &self.dir else {
            return Ok(LibrarySpec::builtin());
        };
        let name = crate::cmd::scripts::library_name(dir, self.library.as_deref())
            .map_err(|e| e.to_string())?;
        LibrarySpec::user(&name, dir).map_err(|e| e.to_string())
    }
}

/// `functions` verbs.
#[derive(Debug, clap::Subcommand)]
pub enum FunctionsCommand {
    /// Load this binary's library (or --library's) on every primary that lacks it (other
    /// versions stay loaded), then check every replica received it. Refuses, changing nothing,
    /// when a node holds different code under the same name or another library owns one of its
    /// function names (named, with the owner). Safe to run twice.
    Deploy(Target),
    /// Per node: the versions of the family loaded, their checksums, and whether this run's
    /// version is there with the same bytes (flags nodes missing it, such as new shards).
    Status(Target),
    /// What deploy would change on each primary; a line diff where the code differs.
    Diff(Target),
    /// Remove one version from every primary. Refused when no primary has it, and when it is the
    /// last library of its family on a node, unless --force.
    Rollback {
        /// Where.
        #[command(flatten)]
        target: Target,
        /// The version to remove (N of redis_atomic_vN, or of NAME_vN with --library).
        #[arg(long)]
        version: u32,
        /// Remove it even where it is the last version loaded.
        #[arg(long)]
        force: bool,
    },
}

/// Runs a `functions` verb; returns the exit code.
pub fn run(command: FunctionsCommand, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let (verb, target) = match &command {
        FunctionsCommand::Deploy(t) => ("deploy", t),
        FunctionsCommand::Status(t) => ("status", t),
        FunctionsCommand::Diff(t) => ("diff", t),
        FunctionsCommand::Rollback { target, .. } => ("rollback", target),
    };
    let spec = match target.spec() {
        Ok(spec) => spec,
        Err(e) => {
            let _ = writeln!(err, "error: {e}");
            return 2;
        }
    };
    let states = match state::observe(
        &target.url,
        target.cluster,
        target.conn.tls().as_ref(),
        &spec,
    ) {
        Ok(s) => s,
        Err(e) => {
            let _ = writeln!(err, "error: {}", crate::output::one_line(&e));
            return 2;
        }
    };
    let outcome = match command {
        FunctionsCommand::Deploy(_) => ops::deploy(states, &spec),
        FunctionsCommand::Status(_) => status(states),
        FunctionsCommand::Diff(_) => {
            let mut nodes = states;
            let changes = ops::plan(&mut nodes, &spec);
            let problems = if changes {
                vec!["deploy would change the primaries listed above".to_string()]
            } else {
                Vec::new()
            };
            Outcome { nodes, problems }
        }
        FunctionsCommand::Rollback { version, force, .. } => {
            ops::rollback(states, &spec, version, force)
        }
    };
    let printed = if target.json {
        write_json(out, verb, &spec, &outcome)
    } else {
        write_table(out, verb, &spec, &outcome)
    };
    match printed {
        Err(e) => {
            let _ = writeln!(err, "error: {e}");
            2
        }
        Ok(()) if outcome.problems.is_empty() => 0,
        Ok(()) => 1,
    }
}

fn status(nodes: Vec<NodeState>) -> Outcome {
    let problems = nodes
        .iter()
        .filter(|s| s.state != "current")
        .map(|s| match s.state {
            "collision" => format!("{} is collision: {}", s.node.addr, s.collisions_text()),
            _ => format!("{} is {}", s.node.addr, s.state),
        })
        .collect();
    Outcome { nodes, problems }
}

fn write_json(
    out: &mut dyn Write,
    verb: &str,
    spec: &LibrarySpec,
    o: &Outcome,
) -> std::io::Result<()> {
    let lib = spec.def;
    let diffs: Vec<serde_json::Value> = o
        .nodes
        .iter()
        .filter_map(|s| {
            let code = s.conflicting_code(spec)?;
            Some(serde_json::json!({"addr": s.node.addr, "lines": diff::line_diff(code, lib.source)}))
        })
        .collect();
    let doc = serde_json::json!({
        "command": verb,
        "ok": o.problems.is_empty(),
        "library": {"name": lib.name, "version": lib.version, "sha1": lib.sha1, "functions": spec.functions},
        "nodes": o.nodes,
        "problems": o.problems,
        "diffs": diffs,
    });
    writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)
}

fn write_table(
    out: &mut dyn Write,
    verb: &str,
    spec: &LibrarySpec,
    o: &Outcome,
) -> std::io::Result<()> {
    writeln!(
        out,
        "redis-atomic functions {verb}: {} is {} (sha1 {})",
        spec.origin, spec.def.name, spec.def.sha1
    )?;
    writeln!(
        out,
        "{:<22} {:<8} {:>6}  {:<30} {:<11} action",
        "node", "role", "slots", "loaded (version sha1)", "state"
    )?;
    for s in &o.nodes {
        let loaded: Vec<String> = s
            .versions
            .iter()
            .map(|l| format!("v{} {}", l.version, &l.sha1[..8.min(l.sha1.len())]))
            .collect();
        let loaded = if loaded.is_empty() {
            "-".to_string()
        } else {
            loaded.join(", ")
        };
        let slots = s.node.slots.map_or("-".to_string(), |n| n.to_string());
        writeln!(
            out,
            "{:<22} {:<8} {:>6}  {:<30} {:<11} {}",
            s.node.addr,
            format!("{:?}", s.node.role).to_lowercase(),
            slots,
            loaded,
            s.state,
            s.action.as_deref().unwrap_or("")
        )?;
        if let Some(e) = &s.error {
            writeln!(out, "    error: {e}")?;
        }
        if let (Some(code), "diff") = (s.conflicting_code(spec), verb) {
            for line in diff::line_diff(code, spec.def.source) {
                writeln!(out, "    {line}")?;
            }
        }
    }
    for p in &o.problems {
        writeln!(out, "! {p}")?;
    }
    writeln!(
        out,
        "{}",
        if o.problems.is_empty() {
            "ok"
        } else {
            "NOT OK"
        }
    )
}
