//! The `redis-atomic` command line: inspect and check scripts, compute slots, and prove each
//! primitive's invariant against a real server (`verify`, the main job).
//!
//! The CLI is arguments and printing. The work is in the crates each audience can use without
//! it: the Lua lint in `redis-atomic-lint`, the invariant checks and the embedded-server
//! bootstrap in `redis-atomic-verify`, the HTTP faces in `redis-atomic-server`. The binary is a
//! few lines over [`run`]; each verb is one module under [`cmd`] and prints through writers so
//! tests can drive it; [`output`] turns a closed pipe into a quiet exit 0 for all of them.

pub mod args;
pub mod cmd;
pub mod output;

use clap::{Parser, Subcommand};
use cmd::{bench, doctor, functions, lint, module, proxy, rls, scripts, serve, slot, test, verify};
use std::path::PathBuf;
use std::process::ExitCode;

/// redis-atomic: correct Redis-backed workflows. List, lint and verify scripts; prove invariants.
#[derive(Debug, Parser)]
#[command(name = "redis-atomic", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The verbs.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// The server-side scripts this build ships, or a folder of your own: list, show, acl,
    /// check, lock.
    #[command(
        after_help = "Exit codes: 0 ok / clean; 1 findings (check) or a refused lock \
        (lock); 2 usage or unreadable input."
    )]
    Scripts {
        /// list, show, acl, check or lock.
        #[command(subcommand)]
        command: ScriptsCommand,
    },
    /// Print the Redis Cluster hash slot of each key.
    #[command(
        after_help = "Exit codes: 0 printed; 1 --check-same and the keys span more \
        than one slot; 2 usage."
    )]
    Slot {
        /// Keys.
        #[arg(required = true)]
        keys: Vec<String>,
        /// Exit 1 when the keys span more than one slot.
        #[arg(long)]
        check_same: bool,
    },
    /// The server module (docs/module.md): `module path` prints the built
    /// libredis_atomic_module.so's path, for `--loadmodule`. Exit 0 found, 1 not built.
    Module {
        /// path.
        #[command(subcommand)]
        command: module::ModuleCommand,
    },
    /// Run every primitive's invariant check under concurrency against a real server (an
    /// embedded redis-server when no --url is given). Exit 1 on any violation.
    Verify(verify::VerifyArgs),
    /// Static analysis of Lua scripts and Function libraries: keys not from KEYS, KEYS/SCAN,
    /// unbounded reads and loops, missing TTLs, float returns, globals, flags. Exit 0 clean,
    /// 1 findings, 2 usage, unreadable (not a regular file, over 1 MiB), unparsable or too
    /// deeply nested input, or no file linted.
    Lint(lint::LintArgs),
    /// Deploy, inspect, diff and roll back the Function library `redis_atomic_v<N>` (or your
    /// own `NAME_v<N>` with --dir DIR [--library NAME]) on every node of a standalone deployment
    /// or a cluster. Exit 0 ok, 1 refused, incomplete or nodes that differ, 2 usage, unreadable
    /// folder or connection errors.
    Functions {
        /// deploy, status, diff or rollback.
        #[command(subcommand)]
        command: functions::FunctionsCommand,
    },
    /// Per primitive: decisions/s through the library and as raw EVALSHA of the same scripts
    /// (ratio), p50/p99 latency, server µs and round trips per decision, memory per record.
    /// Uses an embedded redis-server when no --url is given.
    Bench(bench::BenchArgs),
    /// Run the `*.test.toml` fixtures of a script folder through EVALSHA and FCALL against a
    /// real server (an embedded redis-server when no --url is given), a clean database per
    /// case. Exit 0 all pass, 1 any fail, 2 usage (bad fixture, unknown script, wrong counts,
    /// no fixtures) or connection errors.
    Test(test::TestArgs),
    /// Audit a deployment against what the primitives assume: maxmemory-policy, persistence,
    /// replication, busy-reply-threshold, version and capabilities, the Function library, cluster
    /// slots, and whether the user may run what each primitive needs; every node of a cluster.
    /// One row per check (ok / warn / fail) with the fix. Uses an embedded redis-server when no
    /// --url is given. Exit 0 no check failed (warnings allowed), 1 a check failed, 2 usage or
    /// connection errors.
    Doctor(doctor::DoctorArgs),
    /// A reverse proxy giving any HTTP service Idempotency-Key semantics (IETF draft) and rate
    /// limits: `proxy --upstream URL`. Prints the bound address, serves until ctrl-c or SIGTERM.
    /// Uses an embedded redis-server when no --url is given. Exit 0 stopped by a signal, 1
    /// failed while serving, 2 usage, config, listen address or connection errors.
    Proxy(proxy::ProxyArgs),
    /// Every primitive over HTTP/JSON under /v1 (locks, semaphores, fenced writes, quotas, dedup,
    /// idempotency, queues with dead letters, rate limits), with OpenAPI at /openapi.json,
    /// Prometheus /metrics, /healthz, /readyz and per-token namespaces. Uses an embedded
    /// redis-server when no --url is given. Exit 0 stopped by a signal, 1 failed while serving,
    /// 2 usage, config, listen address or connection errors.
    Serve(serve::ServeArgs),
    /// Envoy's gRPC rate-limit service (envoy.service.ratelimit.v3) configured with
    /// envoyproxy/ratelimit's YAML, every request decided all or nothing in one atomic call, six
    /// algorithms. Prints the bound address, serves until ctrl-c or SIGTERM; SIGHUP or a changed
    /// file reloads the config. Uses an embedded redis-server when no --url is given. Exit 0
    /// stopped by a signal, 1 failed while serving, 2 usage, config, listen address or
    /// connection errors.
    Rls(rls::RlsArgs),
}

/// `scripts` verbs.
#[derive(Debug, Subcommand)]
pub enum ScriptsCommand {
    /// Name, version, keys, args, retry class, flags and SHA1 of every script (the built-ins,
    /// or the scripts of DIR).
    List {
        /// A folder of your own scripts (default: the built-ins).
        dir: Option<PathBuf>,
        /// Library name for DIR (default: the folder's name, sanitised to [a-z0-9_]).
        #[arg(long, requires = "dir")]
        library: Option<String>,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// The exact source Redis runs for one script (or `library` for the Function library).
    Show {
        /// Script name, e.g. lock_acquire.
        name: String,
        /// A folder of your own scripts (default: the built-ins).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Library name for --dir (default: the folder's name, sanitised to [a-z0-9_]).
        #[arg(long, requires = "dir")]
        library: Option<String>,
    },
    /// The least-privilege ACL rules for a runtime user of one namespace (ACL applies to the
    /// commands scripts call, so the list is derived from the scripts).
    Acl {
        /// The keyspace namespace the application uses.
        #[arg(long)]
        namespace: String,
        /// The user name in the printed ACL SETUSER line.
        #[arg(long, default_value = "app")]
        user: String,
    },
    /// Check a folder of your own scripts: headers complete and agreeing with their bodies,
    /// bodies lint clean, scripts.lock current; prints the production checklist per script.
    /// Exit 0 clean, 1 findings, 2 usage or unreadable (or no scripts in DIR).
    Check(scripts::CheckArgs),
    /// Write or update DIR/scripts.lock (name, version, SHA1 per script and for the library).
    /// Refuses (exit 1) when a script's bytes changed without a `--- version:` bump.
    Lock(scripts::LockArgs),
    /// The typed script layer of another language (TypeScript, Java, Go) generated from the
    /// headers of DIR's scripts or of the built-ins (--builtin): definitions, keys, args, the
    /// reply as sealed types with their decoders, the retry class.
    Bindings(scripts::BindingsArgs),
}

/// Runs the CLI; returns the process exit code.
pub fn run(cli: Cli) -> ExitCode {
    init_tracing();
    let streams = output::Streams::default();
    let (mut out, mut err) = (streams.out(), streams.err());
    let (out, err) = (&mut out, &mut err);
    let code = match cli.command {
        Command::Scripts { command } => scripts::run(command, out, err),
        Command::Slot { keys, check_same } => slot::run(&keys, check_same, out),
        Command::Module { command } => module::run(command, out, err),
        Command::Verify(args) => verify::run(args, out, err),
        Command::Lint(args) => lint::run(args, out, err),
        Command::Functions { command } => functions::run(command, out, err),
        Command::Bench(args) => bench::run_blocking(args, out, err),
        Command::Test(args) => test::run_blocking(args, out, err),
        Command::Doctor(args) => doctor::run_blocking(args, out, err),
        Command::Proxy(args) => proxy::run(args, out, err),
        Command::Serve(args) => serve::run(args, out, err),
        Command::Rls(args) => rls::run(args, out, err),
    };
    ExitCode::from(u8::try_from(streams.exit_code(code)).unwrap_or(2))
}

/// Log lines to stderr, filtered by `RUST_LOG` (default: errors only, so tables stay clean;
/// `RUST_LOG=warn` shows each violation a check found).
fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("error"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
